/* The client's plain requests to turnd (everything but the turn stream): one
 * libcurl call each, the bearer token on every one that has it, and one way of
 * telling the owner why turnd said no. The token is put in a header and nowhere
 * else: no message here ever contains it. */
#ifndef TURN_CLI_HTTP_H
#define TURN_CLI_HTTP_H

#include "turn/turn.h"

#include <curl/curl.h>
#include <stdbool.h>

#define HTTP_URL_MAX  1024 /* bytes of a request's URL, its NUL included */
#define HTTP_BASE_MAX (HTTP_URL_MAX - 160) /* of turnd's address: room for any route */

/* Which turnd, and who we are to it. Both borrowed; they outlive every call. */
struct http_server {
  const char *url;   /* base, e.g. http://127.0.0.1:8080, without a trailing '/' */
  const char *token; /* bearer token, or NULL: requests go without one */
};

/* One answer. body's cap is set by http_answer_init; a longer body fails the
 * request rather than growing without bound. */
struct http_answer {
  long status;               /* HTTP status; 0: no answer came */
  long retry_after_s;        /* Retry-After in seconds; -1 when turnd sent none */
  char why[CURL_ERROR_SIZE]; /* with status 0: libcurl's reason, else "" */
  turn_buf body;
};

void http_answer_init(struct http_answer *a, size_t cap);
void http_answer_fini(struct http_answer *a);

/* method ("GET" or "POST") to s->url followed by path (borrowed; already
 * escaped), with json (borrowed, may be NULL: no body) as the body. Fills *a,
 * which the caller has initialised; returns a->status (0: no answer). */
long http_call(const struct http_server *s, const char *method, const char *path,
               const char *json, struct http_answer *a);

/* A libcurl handle for one request to s, already carrying the header list every
 * request carries: the token (when s has one) and, when json, the body's type.
 * Returns owned (curl_easy_cleanup), and in *hdr its header list, owned too
 * (curl_slist_free_all, after the transfer); NULL when out of memory, with
 * nothing to free and *hdr untouched. */
CURL *http_handle(const struct http_server *s, bool json, struct curl_slist **hdr);

/* One member ("code" or "message") of turnd's {"error": {...}} answer into out
 * (cap bytes); "" when the body has none. */
void http_error_part(const struct http_answer *a, const char *key, char *out, size_t cap);

/* Tells the owner on stderr why the request for `doing` (e.g. "the approval")
 * failed: no answer (with why, libcurl's reason, when not ""), or turnd's
 * status, code and message. A 401 also says how to get a token; a Retry-After
 * is shown as the wait. body: the answer's bytes. */
void http_report(const struct http_server *s, const char *doing, long status,
                 const char *why, const char *body, size_t len, long retry_after_s);

/* The same for a struct http_answer. */
void http_report_answer(const struct http_server *s, const char *doing,
                        const struct http_answer *a);

/* libcurl's reason for a failed transfer into why (CURL_ERROR_SIZE bytes):
 * its error buffer's text when it wrote one, else the code's own text. */
void http_reason(char *why, CURLcode rc);

#endif
