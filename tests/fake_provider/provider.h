/* What the two fake endpoints share: a checked request (struct ask), the errors a
 * request can get, and the interface anthropic.c and openai.c each implement
 * (check the request, answer with an error, write the stream). */
#ifndef FAKE_PROVIDER_H
#define FAKE_PROVIDER_H

#include "scenario.h"
#include "stream.h"

#include <event2/http.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The one key the fake accepts, unless $FAKE_PROVIDER_KEY names another. */
#define FAKE_API_KEY "test-key"

/* The key the fake accepts: $FAKE_PROVIDER_KEY when set and not empty (a test of
 * long keys, or of a key that must not leak, picks its own), else FAKE_API_KEY. */
const char *provider_key(void);
/* The message of an error that echoes the key it was sent, as a careless server
 * or proxy does: "Incorrect API key provided: KEY. The key KEY is not valid."
 * (key NULL: "(none)"). wrapped: each KEY longer than KEY_WRAP_AT bytes has a
 * CR LF after its first KEY_WRAP_AT, as where a proxy wraps long lines. Owned:
 * free(); NULL when out of memory. */
#define KEY_WRAP_AT 10
char *provider_key_echo(const char *key, bool wrapped);

/* A request that passed the checks. Strings borrow the request's JSON. */
struct ask {
  const char *model;      /* echoed in the stream */
  const char *text;       /* the latest user text; NULL: none */
  const char *first_text; /* the first user message's text, "" if none */
  const char *key;        /* the key it carried (borrows its headers); NULL: none */
  size_t n_messages;
  bool after_tools;    /* the last message is tool results */
  bool include_usage;  /* OpenAI's stream_options.include_usage */
  size_t input_tokens; /* reported as usage; a stand-in from the body's size */
};

/* Why a request gets an error answer, which each provider words its own way. */
enum refusal {
  REFUSE_INVALID,    /* 400: the request breaks the API's rules */
  REFUSE_AUTH,       /* 401: a missing or wrong key */
  REFUSE_NOT_FOUND,  /* 404 */
  REFUSE_METHOD,     /* 405 */
  REFUSE_RATE_LIMIT, /* 429 */
  REFUSE_SERVER,     /* 500 */
  REFUSE_OVERLOADED, /* Anthropic 529, OpenAI 503 */
  REFUSE_NO_QUOTA,   /* OpenAI 429 insufficient_quota, Anthropic 400 */
};

/* A refusal and its message. The message names fields and ids of the request,
 * never a header's value. */
struct verdict {
  enum refusal refusal;
  char why[256];
};

/* Sets *v and returns -1, for "return verdict_set(...)". */
int verdict_set(struct verdict *v, enum refusal r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

struct provider {
  const char *path; /* the endpoint, "/v1/messages" */
  /* Checks req's headers and body (NULL: not JSON; borrowed). Returns 0 with *q
   * filled, pointing into body, or -1 with *v filled. */
  int (*check)(struct evhttp_request *req, json_t *body, struct ask *q,
               struct verdict *v);
  /* Sends the error answer for r, with message why (NULL: the provider's
   * usual one). Returns the status sent. */
  int (*refuse)(struct evhttp_request *req, enum refusal r, const char *why);
  /* Queues a's events on s, ids drawn from *ids. Returns 0 or -1 (out of
   * memory). */
  int (*stream)(struct stream *s, const struct answer *a, const struct ask *q,
                uint64_t *ids);
};

extern const struct provider anthropic_provider;
extern const struct provider openai_provider;

/* Writes prefix and n letters and digits that look random, from counter *ids
 * (which it advances): ids are unique within a run. cap > strlen(prefix) + n. */
void provider_id(char *out, size_t cap, const char *prefix, size_t n, uint64_t *ids);
/* Sends body (taken; NULL: out of memory, a bare 500) as the answer, with
 * Content-Type application/json. Returns status. */
int provider_send_json(struct evhttp_request *req, int status, json_t *body);
/* The string at key of obj, or NULL. */
const char *provider_string(const json_t *obj, const char *key);
/* Whether obj's "type" is type. */
bool provider_is_type(const json_t *obj, const char *type);

#endif
