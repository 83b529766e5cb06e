/* Lists for a person: sessions one per line, newest activity first as turnd
 * sends them, and a session's history block by block, in the same shapes the
 * live stream uses. Every history block is checked with libturn; the session
 * list and the session object are read with jansson. */
#include "listing.h"

#include "turn/turn.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANSWER_MAX (64u << 20) /* bytes of one answer: far past any history */

static size_t on_bytes(char *data, size_t size, size_t n, void *arg) {
  return turn_buf_append(arg, data, size * n) == 0 ? size * n : 0;
}

/* GETs url into body. Returns the HTTP status, 0 when no answer came. */
static long get(const char *url, turn_buf *body) {
  CURL *h = curl_easy_init();
  if (h == NULL) return 0;
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_bytes);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
  curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
  long status = 0;
  if (curl_easy_perform(h) == CURLE_OK)
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(h);
  return status;
}

/* Fetches url; on anything but a 200 says why and returns NULL. */
static json_t *fetch(const char *url, turn_buf *body) {
  long status = get(url, body);
  json_t *doc =
      status != 0 ? json_loadb((const char *)body->data, body->len, 0, NULL) : NULL;
  if (status == 200 && json_is_object(doc)) return doc;
  if (status == 0) {
    fprintf(stderr, "turn: no answer from %s\n", url);
  } else {
    json_t *e = json_object_get(doc, "error");
    const char *code = json_string_value(json_object_get(e, "code"));
    const char *msg = json_string_value(json_object_get(e, "message"));
    fprintf(stderr, "turn: turnd answered HTTP %ld%s%s%s%s\n", status,
            code != NULL ? " " : "", code != NULL ? code : "", msg != NULL ? ": " : "",
            msg != NULL ? msg : "");
  }
  json_decref(doc);
  return NULL;
}

static const char *str(json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s != NULL ? s : "?";
}

int listing_sessions(const char *url) {
  char target[512];
  snprintf(target, sizeof target, "%s/api/sessions", url);
  turn_buf body;
  turn_buf_init(&body, ANSWER_MAX, NULL);
  json_t *doc = fetch(target, &body);
  turn_buf_fini(&body);
  if (doc == NULL) return 1;
  json_t *list = json_object_get(doc, "sessions");
  size_t i;
  json_t *s;
  json_array_foreach(list, i, s) {
    /* "2026-12-02T17:40:39.637Z" shown as "2026-12-02 17:40" */
    const char *updated = str(s, "updated_at");
    json_int_t count = json_integer_value(json_object_get(s, "message_count"));
    printf("%s  %.10s %.5s  %4lld msg  %s\n", str(s, "id"), updated,
           strlen(updated) >= 16 ? updated + 11 : "", (long long)count, str(s, "title"));
  }
  if (json_array_size(list) == 0) printf("no sessions yet\n");
  json_decref(doc);
  return 0;
}

static const char *status_word(turn_status s) {
  switch (s) {
  case TURN_STATUS_OK:
    return "ok";
  case TURN_STATUS_ERROR:
    return "error";
  case TURN_STATUS_REJECTED:
    return "rejected";
  default:
    return "no result";
  }
}

struct printer {
  bool color;
  bool bad;
};

static int print_block(void *ctx, size_t index, const turn_block *b,
                       const turn_error *err) {
  struct printer *p = ctx;
  if (err != NULL) {
    char msg[200];
    turn_error_format(err, msg, sizeof msg);
    fprintf(stderr, "turn: block %zu of the history does not parse: %s\n", index, msg);
    p->bad = true;
    return 1;
  }
  switch (b->type) {
  case TURN_BLOCK_USER:
    printf("%s> %.*s%s\n", p->color ? "\033[1m" : "", (int)b->text.text.len,
           b->text.text.p, p->color ? "\033[0m" : "");
    break;
  case TURN_BLOCK_ASSISTANT:
    printf("%.*s%s", (int)b->text.text.len, b->text.text.p,
           b->text.text.len > 0 && b->text.text.p[b->text.text.len - 1] == '\n' ? ""
                                                                                : "\n");
    break;
  case TURN_BLOCK_REASONING:
    printf("%s%.*s%s\n", p->color ? "\033[2m" : "(thinking) ", (int)b->text.text.len,
           b->text.text.p, p->color ? "\033[0m" : "");
    break;
  case TURN_BLOCK_TOOL:
    printf("  %.*s: %s%s%.*s\n", (int)b->tool.tool.len, b->tool.tool.p,
           status_word(b->tool.status), b->tool.has_summary ? ", " : "",
           (int)b->tool.summary.len, b->tool.summary.p);
    break;
  case TURN_BLOCK_WIDGET:
    printf("  [widget: %.*s]\n", (int)b->widget.title.len, b->widget.title.p);
    break;
  case TURN_BLOCK_NOTICE:
    printf("! %.*s\n", (int)b->text.text.len, b->text.text.p);
    break;
  default:
    break;
  }
  return 0;
}

int listing_history(const char *url, const char *session, bool color) {
  char target[512];
  char *escaped = curl_easy_escape(NULL, session, 0);
  if (escaped == NULL) return 1;
  snprintf(target, sizeof target, "%s/api/sessions/%s", url, escaped);
  curl_free(escaped);
  turn_buf body;
  turn_buf_init(&body, ANSWER_MAX, NULL);
  json_t *doc = fetch(target, &body);
  if (doc == NULL) {
    turn_buf_fini(&body);
    return 1;
  }
  json_t *s = json_object_get(doc, "session");
  printf("%s%s%s  (%s)\n", color ? "\033[1m" : "", str(s, "title"),
         color ? "\033[0m" : "", str(s, "id"));
  json_decref(doc);
  struct printer p = {color, false};
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  turn_error err;
  int rc = turn_history_parse((const char *)body.data, body.len, &arena, print_block, &p,
                              &err);
  turn_arena_fini(&arena);
  turn_buf_fini(&body);
  if (rc != TURN_OK && !p.bad) {
    char msg[200];
    turn_error_format(&err, msg, sizeof msg);
    fprintf(stderr, "turn: the history does not parse: %s\n", msg);
  }
  return rc == TURN_OK && !p.bad ? 0 : 1;
}
