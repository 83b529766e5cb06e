/* Re-attaching past a turn's end over real HTTP: a reader of a running turn
 * may ask for a seq the turn has not reached; if the turn ends short of it,
 * its answer, whose 200 went long before, is cut off rather than ended, so the
 * client cannot take it for a whole answer, and coming back with the same
 * after it gets 409 after_past_end with the turn's last seq. A reader that asked
 * for the end's own seq has nothing missing: its answer ends as usual. (Finished
 * turns, in memory or in the store, are cases 0082 and 0083.) The readers are
 * plain sockets, so the test sees the chunked answer's bytes as sent. */
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

/* A script whose turn says one text, then waits until cancelled: turn (seq 0),
 * text (1); a cancel then ends it with end (2). */
static const char script[] = "{\"default\": [[{\"text\": \"working\"}, {\"delay_ms\": "
                             "600000}, {\"text\": \"x\"}]]}";

/* GET /api/turns/<turn>?after=<after> on a raw HTTP/1.1 socket, read up to the
 * end of the answer's head (so the reader is attached). Returns the socket. */
static int attach(const struct turnd_proc *t, const char *turn, unsigned after, char *buf,
                  size_t cap, size_t *len) {
  int fd = harness_connect(t, 0);
  assert_true(fd >= 0);
  char req[512];
  int n = snprintf(req, sizeof req,
                   "GET /api/turns/%s?after=%u HTTP/1.1\r\nHost: x\r\n%s\r\n\r\n", turn,
                   after, t->auth_header);
  assert_int_equal(write(fd, req, (size_t)n), n);
  *len = harness_read_until(fd, buf, 0, cap, "\r\n\r\n");
  if (strncmp(buf, "HTTP/1.1 200 ", 13) != 0) fail_msg("not a 200: %s", buf);
  return fd;
}

static bool ends_with(const char *s, size_t len, const char *tail) {
  size_t n = strlen(tail);
  return len >= n && memcmp(s + len - n, tail, n) == 0;
}

/* Regression: a reader waiting for a seq the running turn never reached got a
 * 200 that ended empty, as if there were nothing to tell. */
static void test_reattach_past_where_a_running_turn_ends(void **state) {
  (void)state;
  struct turnd_proc t;
  harness_start_script(&t, script, NULL);
  char u[512];
  snprintf(u, sizeof u, "%s/api/turns", t.base_url);
  struct http_stream head;
  assert_int_equal(http_stream("POST", u, "{\"text\": \"hi\"}", 2, &head), 0);
  json_t *first = json_loads(head.lines[0], 0, NULL);
  assert_non_null(first);
  char turn[64];
  snprintf(turn, sizeof turn, "%s", json_string_value(json_object_get(first, "turn")));
  json_decref(first);
  http_stream_free(&head);

  static char past[4096], at_end[4096];
  size_t past_len, end_len;
  int past_fd = attach(&t, turn, 3, past, sizeof past, &past_len);   /* never comes */
  int end_fd = attach(&t, turn, 2, at_end, sizeof at_end, &end_len); /* the end */
  snprintf(u, sizeof u, "%s/api/turns/%s/cancel", t.base_url, turn);
  struct http_answer a;
  assert_int_equal(http_do("POST", u, NULL, &a), 0);
  assert_int_equal(a.status, 204);
  http_answer_free(&a);

  /* Cut off: the connection closes without the chunked answer's last chunk,
   * and without a line. */
  past_len = harness_read_until(past_fd, past, past_len, sizeof past, NULL);
  close(past_fd);
  if (ends_with(past, past_len, "0\r\n\r\n") || strstr(past, "\"seq\"") != NULL)
    fail_msg("the reader past the end got an answer that ended:\n%s", past);
  /* The end's own seq: nothing follows it, and the answer ends as usual. */
  end_len = harness_read_until(end_fd, at_end, end_len, sizeof at_end, "0\r\n\r\n");
  close(end_fd);
  if (!ends_with(at_end, end_len, "0\r\n\r\n") || strstr(at_end, "\"seq\"") != NULL)
    fail_msg("the reader at the end got:\n%s", at_end);

  /* Coming back with the same after: what happened, and where the turn ends. */
  snprintf(u, sizeof u, "%s/api/turns/%s?after=3", t.base_url, turn);
  assert_int_equal(http_do("GET", u, NULL, &a), 0);
  assert_int_equal(a.status, 409);
  json_t *body = json_loads(a.body, 0, NULL);
  json_t *err = json_object_get(body, "error");
  assert_string_equal(json_string_value(json_object_get(err, "code")), "after_past_end");
  assert_int_equal(json_integer_value(json_object_get(err, "last_seq")), 2);
  json_decref(body);
  http_answer_free(&a);
  /* turnd goes on serving. */
  snprintf(u, sizeof u, "%s/api/turns/%s?after=1", t.base_url, turn);
  struct http_stream rest;
  assert_int_equal(http_stream("GET", u, NULL, 0, &rest), 0);
  assert_int_equal(rest.n, 1);
  assert_non_null(strstr(rest.lines[0], "\"stop_reason\":\"cancelled\""));
  http_stream_free(&rest);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reattach_past_where_a_running_turn_ends),
  };
  return cmocka_run_group_tests(tests, NULL, harness_kill_all);
}
