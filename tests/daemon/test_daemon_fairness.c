/* One turn with much to say at once must not keep turnd from the others. A
 * script that streams some 60 MB without a pause used to hold the loop for as
 * long as it took: a small turn posted meanwhile got its first byte only once
 * the big turn's agent was done (0.95-1.0 s in bench-load). Now the big turn
 * says it in pieces, between which new requests are served: the small turn
 * starts, streams and ends while the big one is still running. */
#include "harness.h"

#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* The big reply: BIG_STEPS deltas of the user's text of BIG_TEXT bytes, some
 * 60 MB of events, under the 64 MiB one turn may hold. */
#define BIG_STEPS 2000
#define BIG_TEXT  (30 * 1024)

/* A script with the big reply for a text that starts with BIG, and a short one
 * for any other. Returns it (free). */
static char *big_script(void) {
  size_t cap = BIG_STEPS * 32 + 256;
  char *s = malloc(cap);
  assert_non_null(s);
  size_t n = (size_t)snprintf(s, cap, "{\"turns\": [{\"when\": \"BIG\", \"replies\": [[");
  for (int i = 0; i < BIG_STEPS; i++)
    n += (size_t)snprintf(s + n, cap - n, "%s{\"text\": \"{{input}}\"}", i ? ", " : "");
  snprintf(s + n, cap - n, "]]}], \"default\": [[{\"text\": \"small\"}]]}");
  return s;
}

/* Starts the big turn on a connection of its own and reads only its first line.
 * Returns the socket; the turn's id and session go to turn and session. */
static int start_big_turn(const struct turnd_proc *t, char *turn, char *session,
                          size_t cap) {
  int fd = harness_connect(t, 0);
  assert_true(fd >= 0);
  static char body[BIG_TEXT + 64];
  size_t blen = (size_t)snprintf(body, sizeof body, "{\"text\": \"BIG");
  memset(body + blen, 'x', BIG_TEXT - 3);
  blen += BIG_TEXT - 3;
  blen += (size_t)snprintf(body + blen, sizeof body - blen, "\"}");
  harness_send_turn(fd, t, body, blen);
  static char first[4096];
  harness_read_until(fd, first, 0, sizeof first, "\"session\":\"");
  harness_read_until(fd, first, strlen(first), sizeof first, "}");
  harness_text_field(first, "turn", turn, cap);
  harness_text_field(first, "session", session, cap);
  return fd;
}

/* The session's running turn, as GET /api/sessions/<id> says it ("" for none). */
static void running_turn(const struct turnd_proc *t, const char *session, char *out,
                         size_t cap) {
  json_t *j = harness_get_session(t, session);
  const char *v =
      json_string_value(json_object_get(json_object_get(j, "session"), "running_turn"));
  snprintf(out, cap, "%s", v != NULL ? v : "");
  json_decref(j);
}

/* Regression: a small turn posted while a big one streams at full speed got
 * its first byte only once the big turn's agent had said everything. */
static void test_fair_small_turn_while_a_big_one_streams(void **state) {
  (void)state;
  char *script = big_script();
  struct turnd_proc t;
  harness_start_script(&t, script, NULL);
  free(script);
  char big[64], big_session[64];
  int fd = start_big_turn(&t, big, big_session, sizeof big);
  /* Its reader reads no more: the turn goes on all the same. */

  char u[256];
  snprintf(u, sizeof u, "%s/api/turns", t.base_url);
  struct http_stream small;
  assert_int_equal(http_stream("POST", u, "{\"text\": \"hello\"}", 0, &small), 0);
  assert_int_equal(small.status, 200);
  assert_true(small.n >= 3);
  assert_non_null(strstr(small.lines[small.n - 1], "\"stop_reason\":\"end_turn\""));
  http_stream_free(&small);

  char now[64];
  running_turn(&t, big_session, now, sizeof now);
  assert_string_equal(now, big); /* the big turn was not done first */

  close(fd);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fair_small_turn_while_a_big_one_streams),
  };
  return cmocka_run_group_tests(tests, NULL, harness_kill_all);
}
