/* A long reply goes to the store piece by piece as it grows: its message's
 * front is stored in parts, and its row, with the rest, only once it is
 * complete. (Before, the whole message was handed over in one piece when the
 * reply ended, which for 60 MiB held the loop for 0.3-0.5 s.) What a person
 * sees must not change: the session's history gives the reply whole, a turn
 * after it is numbered right, and a kill -9 in the middle of the reply keeps
 * what it said, as for any reply. */
#include "harness.h"

#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* The reply: DELTAS times the user's text, TEXT_BYTES long (under its 32 KiB): some
 * 2.6 MiB of text, more as JSON, so its message has parts (1 MiB each). */
#define DELTAS     90
#define TEXT_BYTES (30 * 1024)

/* A user text of TEXT_BYTES with what JSON escapes (quotes, backslashes, a
 * newline, a tab) and characters of two, three and four bytes, so that the
 * parts' edges fall anywhere among them. Returns it (free). */
static char *user_text(const char *prefix) {
  static const char unit[] = "ab\"c\\d\n\te\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e ";
  char *t = malloc(TEXT_BYTES + 1);
  assert_non_null(t);
  size_t n = (size_t)snprintf(t, TEXT_BYTES + 1, "%s", prefix);
  while (n + sizeof unit - 1 <= TEXT_BYTES) {
    memcpy(t + n, unit, sizeof unit - 1);
    n += sizeof unit - 1;
  }
  t[n] = '\0';
  return t;
}

/* The model: reasoning, then DELTAS times the user's text and a full stop;
 * with hold, then a long wait, for a kill in the middle of the reply. */
static void start_with_script(struct turnd_proc *t, bool hold) {
  char script[4096];
  size_t n = (size_t)snprintf(script, sizeof script,
                              "{\"default\": [[{\"reasoning\": \"weighing it\"}");
  for (int i = 0; i < DELTAS; i++)
    n += (size_t)snprintf(script + n, sizeof script - n, ", {\"text\": \"{{input}}\"}");
  snprintf(script + n, sizeof script - n, ", {\"text\": \".\"}%s]]}",
           hold ? ", {\"delay_ms\": 600000}" : "");
  harness_start_script(t, script, NULL);
}

/* The types of the session's blocks, space-separated, into out. */
static void block_types(json_t *session, char *out, size_t cap) {
  json_t *blocks = json_object_get(session, "blocks");
  assert_true(json_is_array(blocks));
  size_t i, n = 0;
  json_t *b;
  out[0] = '\0';
  json_array_foreach(blocks, i, b) {
    n += (size_t)snprintf(out + n, cap - n, "%s%s", i > 0 ? " " : "",
                          json_string_value(json_object_get(b, "type")));
  }
}

static const char *block_text(json_t *session, size_t i) {
  const char *text = json_string_value(
      json_object_get(json_array_get(json_object_get(session, "blocks"), i), "text"));
  assert_non_null(text);
  return text;
}

/* DELTAS times text and a full stop: what the script says. */
static char *said(const char *text) {
  size_t len = strlen(text);
  char *out = malloc(len * DELTAS + 2);
  assert_non_null(out);
  for (int i = 0; i < DELTAS; i++)
    memcpy(out + (size_t)i * len, text, len);
  memcpy(out + len * DELTAS, ".", 2);
  return out;
}

/* The reply reads back whole, reasoning apart, each character as it was; the
 * session's next turn gets the next numbers and reads back whole too. */
static void test_a_long_reply_reads_back_whole(void **state) {
  (void)state;
  struct turnd_proc t;
  start_with_script(&t, false);
  char *first = user_text("first ");
  struct http_stream s;
  harness_post_turn(&t, NULL, first, 0, &s);
  char session[64];
  assert_true(harness_line_field(s.lines[0], "session", session, sizeof session));
  assert_non_null(strstr(s.lines[s.n - 1], "\"stop_reason\":\"end_turn\""));
  http_stream_free(&s);

  char *second = user_text("second ");
  harness_post_turn(&t, session, second, 0, &s);
  assert_non_null(strstr(s.lines[s.n - 1], "\"stop_reason\":\"end_turn\""));
  http_stream_free(&s);

  json_t *j = harness_get_session(&t, session);
  char types[256];
  block_types(j, types, sizeof types);
  assert_string_equal(types, "user reasoning assistant user reasoning assistant");
  assert_string_equal(block_text(j, 0), first);
  assert_string_equal(block_text(j, 1), "weighing it");
  char *want = said(first);
  assert_true(strlen(want) > 2u * 1024 * 1024);
  assert_string_equal(block_text(j, 2), want);
  free(want);
  assert_string_equal(block_text(j, 3), second);
  want = said(second);
  assert_string_equal(block_text(j, 5), want);
  free(want);
  assert_int_equal(
      json_integer_value(json_object_get(json_object_get(j, "session"), "message_count")),
      4);
  json_decref(j);
  free(first);
  free(second);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* The text of every text event of a stored turn, joined (free). */
static char *turn_text(const struct turnd_proc *t, const char *turn) {
  char url[256];
  harness_url(url, sizeof url, t, "/api/turns/%s", turn);
  struct http_stream s;
  assert_int_equal(http_stream("GET", url, NULL, 0, &s), 0);
  assert_int_equal(s.status, 200);
  assert_non_null(strstr(s.lines[s.n - 1], "\"stop_reason\":\"interrupt\""));
  size_t len = 0;
  char *out = malloc(1);
  assert_non_null(out);
  for (size_t i = 0; i < s.n; i++) {
    json_t *e = json_loads(s.lines[i], 0, NULL);
    assert_non_null(e);
    if (strcmp(json_string_value(json_object_get(e, "type")), "text") == 0) {
      json_t *d = json_object_get(e, "delta");
      size_t dl = json_string_length(d);
      out = realloc(out, len + dl + 1);
      assert_non_null(out);
      memcpy(out + len, json_string_value(d), dl);
      len += dl;
    }
    json_decref(e);
  }
  out[len] = '\0';
  http_stream_free(&s);
  return out;
}

/* turnd is killed while the reply waits after saying megabytes: its message's
 * parts are stored, its row is not. The next start ends the turn and keeps
 * what it said as its message, as for a short reply: the history's reply is
 * the turn's recorded text, and the session goes on. */
static void test_a_kill_in_the_middle_of_a_long_reply_keeps_what_it_said(void **state) {
  (void)state;
  struct turnd_proc t;
  start_with_script(&t, true);
  char *text = user_text("kept ");
  struct http_stream s;
  /* the turn line, the reasoning and the text's deltas: the reader got them,
   * so the journal has them */
  harness_post_turn(&t, NULL, text, 2 + DELTAS, &s);
  assert_true(s.n >= 2 + DELTAS);
  char session[64], turn[64];
  assert_true(harness_line_field(s.lines[0], "session", session, sizeof session));
  assert_true(harness_line_field(s.lines[0], "turn", turn, sizeof turn));
  http_stream_free(&s);
  assert_int_equal(harness_halt(&t, SIGKILL), 128 + SIGKILL);
  /* the next start's model answers at once */
  char model[160];
  harness_script_model("{\"default\": [[{\"text\": \"yes\"}]]}", model, sizeof model);
  const char *const extra[] = {"--model", model, NULL};
  assert_int_equal(harness_restart(&t, extra), 0);
  harness_remove_script(model);

  char *recorded = turn_text(&t, turn);
  assert_true(strlen(recorded) > 2u * 1024 * 1024);
  json_t *j = harness_get_session(&t, session);
  char types[256];
  block_types(j, types, sizeof types);
  assert_string_equal(types, "user reasoning assistant notice");
  assert_string_equal(block_text(j, 2), recorded);
  json_decref(j);

  harness_post_turn(&t, session, "still here?", 0, &s);
  assert_non_null(strstr(s.lines[s.n - 1], "\"stop_reason\":\"end_turn\""));
  http_stream_free(&s);
  j = harness_get_session(&t, session);
  block_types(j, types, sizeof types);
  assert_string_equal(types, "user reasoning assistant notice user assistant");
  assert_string_equal(block_text(j, 2), recorded);
  json_decref(j);
  free(recorded);
  free(text);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a_long_reply_reads_back_whole),
      cmocka_unit_test(test_a_kill_in_the_middle_of_a_long_reply_keeps_what_it_said),
  };
  return cmocka_run_group_tests(tests, NULL, harness_kill_all);
}
