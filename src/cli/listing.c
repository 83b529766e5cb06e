/* Lists for a person: sessions one per line, newest activity first as turnd
 * sends them, and a session's history block by block, in the same shapes the
 * live stream uses. Every history block is checked with libturn; the session
 * list and the session object are read with jansson. */
#include "listing.h"

#include "shown.h"

#include "turn/turn.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANSWER_MAX (64u << 20) /* bytes of one answer: far past any history */

/* Fetches path; on anything but a 200 with a JSON object says why and returns
 * NULL. The body stays in a for the history's blocks. */
static json_t *fetch(const struct http_server *s, const char *path, const char *doing,
                     struct http_answer *a) {
  long status = http_call(s, "GET", path, NULL, a);
  json_t *doc = status == 200 ? json_loadb(a->body.data, a->body.len, 0, NULL) : NULL;
  if (json_is_object(doc)) return doc;
  if (status == 200)
    fprintf(stderr, "turn: turnd's answer to %s is not a JSON object\n", path);
  else
    http_report_answer(s, doing, a);
  json_decref(doc);
  return NULL;
}

static const char *str(json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s != NULL ? s : "?";
}

/* A title (the owner's first words, or a client's) on stdout, made harmless. */
static void show_c(const char *text) {
  shown_write(stdout, (turn_str){text, strlen(text)});
}

int listing_sessions(const struct http_server *s) {
  struct http_answer a;
  http_answer_init(&a, ANSWER_MAX);
  json_t *doc = fetch(s, "/api/sessions", "listing the sessions", &a);
  http_answer_fini(&a);
  if (doc == NULL) return 1;
  json_t *list = json_object_get(doc, "sessions");
  size_t i;
  json_t *one;
  json_array_foreach(list, i, one) {
    /* "2026-12-02T17:40:39.637Z" shown as "2026-12-02 17:40" */
    const char *updated = str(one, "updated_at");
    json_int_t count = json_integer_value(json_object_get(one, "message_count"));
    printf("%s  %.10s %.5s  %4lld msg  ", str(one, "id"), updated,
           strlen(updated) >= 16 ? updated + 11 : "", (long long)count);
    show_c(str(one, "title"));
    putchar('\n');
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
    printf("%s> ", p->color ? "\033[1m" : "");
    shown_write(stdout, b->text.text);
    printf("%s\n", p->color ? "\033[0m" : "");
    break;
  case TURN_BLOCK_ASSISTANT:
    shown_write(stdout, b->text.text);
    if (b->text.text.len == 0 || b->text.text.p[b->text.text.len - 1] != '\n')
      putchar('\n');
    break;
  case TURN_BLOCK_REASONING:
    fputs(p->color ? "\033[2m" : "(thinking) ", stdout);
    shown_write(stdout, b->text.text);
    printf("%s\n", p->color ? "\033[0m" : "");
    break;
  case TURN_BLOCK_TOOL:
    fputs("  ", stdout);
    shown_write(stdout, b->tool.tool);
    printf(": %s%s", status_word(b->tool.status), b->tool.has_summary ? ", " : "");
    shown_write(stdout, b->tool.summary);
    putchar('\n');
    break;
  case TURN_BLOCK_WIDGET:
    fputs("  [widget: ", stdout);
    shown_write(stdout, b->widget.title);
    fputs("]\n", stdout);
    break;
  case TURN_BLOCK_NOTICE:
    fputs("! ", stdout);
    shown_write(stdout, b->text.text);
    putchar('\n');
    break;
  default:
    break;
  }
  return 0;
}

int listing_history(const struct http_server *s, const char *session, bool color) {
  char path[512];
  char *escaped = curl_easy_escape(NULL, session, 0);
  if (escaped == NULL) return 1;
  snprintf(path, sizeof path, "/api/sessions/%s", escaped);
  curl_free(escaped);
  struct http_answer a;
  http_answer_init(&a, ANSWER_MAX);
  json_t *doc = fetch(s, path, "reading the history", &a);
  if (doc == NULL) {
    http_answer_fini(&a);
    return 1;
  }
  json_t *head = json_object_get(doc, "session");
  fputs(color ? "\033[1m" : "", stdout);
  show_c(str(head, "title"));
  printf("%s  (%s)\n", color ? "\033[0m" : "", str(head, "id"));
  json_decref(doc);
  struct printer p = {color, false};
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  turn_error err;
  int rc = turn_history_parse(a.body.data, a.body.len, &arena, print_block, &p, &err);
  turn_arena_fini(&arena);
  http_answer_fini(&a);
  if (rc != TURN_OK && !p.bad) {
    char msg[200];
    turn_error_format(&err, msg, sizeof msg);
    fprintf(stderr, "turn: the history does not parse: %s\n", msg);
  }
  return rc == TURN_OK && !p.bad ? 0 : 1;
}
