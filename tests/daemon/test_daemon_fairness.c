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

static void start_with_script(struct turnd_proc *t, const char *script) {
  char dir[] = "/tmp/turnd-fair-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[128], model[160];
  assert_int_equal(harness_write_file(dir, "script.json", script, path, sizeof path), 0);
  snprintf(model, sizeof model, "script:%s", path);
  const char *const extra[] = {"--model", model, NULL};
  assert_int_equal(harness_start(t, extra), 0);
  remove(path);
  remove(dir);
}

/* The value of "key":"..." in text, into out. */
static void string_field(const char *text, const char *key, char *out, size_t cap) {
  char pattern[64];
  snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
  const char *p = strstr(text, pattern);
  assert_non_null(p);
  p += strlen(pattern);
  size_t k = 0;
  while (p[k] != '"' && k + 1 < cap) {
    out[k] = p[k];
    k++;
  }
  out[k] = '\0';
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
  char head[256];
  int hn =
      snprintf(head, sizeof head,
               "POST /api/turns HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               "%s\r\nContent-Length: %zu\r\n\r\n",
               t->auth_header, blen);
  assert_int_equal(write(fd, head, (size_t)hn), hn);
  assert_int_equal(write(fd, body, blen), (ssize_t)blen);
  static char first[4096];
  harness_read_until(fd, first, 0, sizeof first, "\"session\":\"");
  harness_read_until(fd, first, strlen(first), sizeof first, "}");
  string_field(first, "turn", turn, cap);
  string_field(first, "session", session, cap);
  return fd;
}

/* The session's running turn, as GET /api/sessions/<id> says it ("" for none). */
static void running_turn(const struct turnd_proc *t, const char *session, char *out,
                         size_t cap) {
  char u[256];
  snprintf(u, sizeof u, "%s/api/sessions/%s", t->base_url, session);
  struct http_answer a;
  assert_int_equal(http_do("GET", u, NULL, &a), 0);
  assert_int_equal(a.status, 200);
  json_t *j = json_loads(a.body, 0, NULL);
  assert_non_null(j);
  const char *v =
      json_string_value(json_object_get(json_object_get(j, "session"), "running_turn"));
  snprintf(out, cap, "%s", v != NULL ? v : "");
  json_decref(j);
  http_answer_free(&a);
}

/* Regression: a small turn posted while a big one streams at full speed got
 * its first byte only once the big turn's agent had said everything. */
static void test_fair_small_turn_while_a_big_one_streams(void **state) {
  (void)state;
  char *script = big_script();
  struct turnd_proc t;
  start_with_script(&t, script);
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
