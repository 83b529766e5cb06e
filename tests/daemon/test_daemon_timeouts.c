/* --client-timeout over real sockets: a client that sends nothing, or half a
 * request, or nothing more after an answer, is closed; a reader that takes none
 * of its stream is dropped; a stream that has nothing to send (an approval
 * waits) stays open for as long as it takes. turnd runs with a one-second limit
 * here, and each test waits past it. */
#include "harness.h"

#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define SAFETY_MS 30000 /* how long a test waits for what must come */

static const char *const one_second[] = {"--client-timeout", "1", "--step-up-effects",
                                         "none", NULL};

static void pause_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* Reads fd until turnd closes it (true) or SAFETY_MS pass (false). What came is
 * appended to got[0..cap) when got is not NULL. */
static bool read_to_close(int fd, char *got, size_t cap) {
  size_t len = got != NULL ? strlen(got) : 0;
  for (;;) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, SAFETY_MS) != 1) return false;
    char buf[65536];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return true; /* closed (or reset) */
    if (got != NULL && len + 1 < cap) {
      size_t take = (size_t)n < cap - 1 - len ? (size_t)n : cap - 1 - len;
      memcpy(got + len, buf, take);
      len += take;
      got[len] = '\0';
    }
  }
}

/* Whether fd is still open and has nothing to read now. */
static bool open_and_quiet(int fd) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  return poll(&p, 1, 0) == 0;
}

static void send_all(int fd, const char *text) {
  size_t len = strlen(text);
  assert_int_equal(send(fd, text, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* A request asking for a turn of text, raw (headers written here). */
static void post_turn(int fd, const struct turnd_proc *t, const char *text) {
  char body[256], req[1024];
  snprintf(body, sizeof body, "{\"text\": \"%s\"}", text);
  snprintf(req, sizeof req,
           "POST /api/turns HTTP/1.1\r\nHost: x\r\n%s\r\nContent-Type: "
           "application/json\r\nContent-Length: %zu\r\n\r\n%s",
           t->auth_header, strlen(body), body);
  send_all(fd, req);
}

/* A connection that sends nothing, one that sends half a request line, and a
 * kept-alive one after its answer: each is closed once the client has been
 * silent for the limit. */
static void test_timeouts_silent_clients_are_closed(void **state) {
  (void)state;
  struct turnd_proc t;
  assert_int_equal(harness_start(&t, one_second), 0);
  int idle = harness_connect(&t, 0), half = harness_connect(&t, 0);
  int kept = harness_connect(&t, 0);
  assert_true(idle >= 0 && half >= 0 && kept >= 0);
  send_all(half, "GET /api/capab");
  char req[256], got[4096] = "";
  snprintf(req, sizeof req, "GET /api/capabilities HTTP/1.1\r\nHost: x\r\n%s\r\n\r\n",
           t.auth_header);
  send_all(kept, req);
  assert_true(read_to_close(idle, NULL, 0));
  assert_true(read_to_close(half, NULL, 0));
  assert_true(read_to_close(kept, got, sizeof got));
  assert_non_null(strstr(got, "HTTP/1.1 200")); /* answered first */
  close(idle);
  close(half);
  close(kept);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* The demo turn waits for its approval with nothing to send, for longer than
 * the limit: its stream stays open, and goes on once the owner approves. */
static void test_timeouts_quiet_stream_stays(void **state) {
  (void)state;
  struct turnd_proc t;
  assert_int_equal(harness_start(&t, one_second), 0);
  int fd = harness_connect(&t, 0);
  assert_true(fd >= 0);
  post_turn(fd, &t, "lights please");
  char got[65536];
  harness_read_until(fd, got, 0, sizeof got, "\"type\":\"approval\"");
  assert_non_null(strstr(got, "\"type\":\"approval\""));
  char *at = strstr(got, "\"request\":\"");
  assert_non_null(at);
  char request[96];
  assert_int_equal(sscanf(at + 11, "%95[^\"]", request), 1);
  pause_ms(2500); /* past the limit, with nothing to send */
  assert_true(open_and_quiet(fd));
  char u[256];
  snprintf(u, sizeof u, "%s/api/approvals/%s", t.base_url, request);
  struct http_answer a;
  assert_int_equal(http_do("POST", u, "{\"decision\": \"approved\"}", &a), 0);
  assert_int_equal(a.status, 204);
  http_answer_free(&a);
  got[0] = '\0';
  assert_true(read_to_close(fd, got, sizeof got) || strstr(got, "stop_reason") != NULL);
  assert_non_null(strstr(got, "\"stop_reason\":\"end_turn\""));
  close(fd);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* A reader that takes none of a long turn (megabytes more than the sockets
 * hold) is dropped once it has taken nothing for the limit: what reaches it
 * afterwards is what was on its way, and not the turn's end. */
static void test_timeouts_stuck_reader_is_dropped(void **state) {
  (void)state;
  /* A script is at most 1 MiB: one reply of 9 texts of 100 kB and a clock
   * call, which the script gives again to each of the turn's 40 model calls. */
  enum { STEPS = 9, STEP_BYTES = 100000 };
  size_t cap = STEPS * (STEP_BYTES + 16) + 256;
  char *script = malloc(cap);
  assert_non_null(script);
  size_t n =
      (size_t)snprintf(script, cap, "{\"turns\": [{\"when\": \"big\", \"replies\": [[");
  for (int i = 0; i < STEPS; i++) {
    n += (size_t)snprintf(script + n, cap - n, "{\"text\": \"");
    memset(script + n, 'x', STEP_BYTES);
    n += STEP_BYTES;
    n += (size_t)snprintf(script + n, cap - n, "\"}, ");
  }
  snprintf(script + n, cap - n,
           "{\"tool_use\": {\"name\": \"clock\", \"input\": {}}}]]}], "
           "\"default\": [[{\"text\": \"?\"}]]}");
  char dir[] = "/tmp/turnd-stuck-XXXXXX", path[128], model[160];
  assert_non_null(mkdtemp(dir));
  assert_int_equal(harness_write_file(dir, "big.json", script, path, sizeof path), 0);
  free(script);
  snprintf(model, sizeof model, "script:%s", path);
  const char *extra[] = {"--client-timeout",  "1",  "--model", model,
                         "--max-model-calls", "40", NULL};
  struct turnd_proc t;
  assert_int_equal(harness_start(&t, extra), 0);
  int fd = harness_connect(&t, 4096);
  assert_true(fd >= 0);
  post_turn(fd, &t, "big");
  pause_ms(3000); /* reading nothing, past the limit */
  /* Then read it all: turnd closed the connection (or reset it, which drops
   * what was on its way), and the turn's end never came. Kept across reads: the
   * marker's bytes may be split between two. */
  static const char end_marker[] = "\"type\":\"end\"";
  char window[65536 + sizeof end_marker];
  size_t kept = 0, total = 0;
  bool closed = false, ended = false;
  while (!closed && !ended) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, SAFETY_MS) != 1) break; /* open and silent: not dropped */
    ssize_t got = recv(fd, window + kept, sizeof window - 1 - kept, 0);
    if (got <= 0) {
      closed = true;
      break;
    }
    total += (size_t)got;
    window[kept + (size_t)got] = '\0';
    ended = strstr(window, end_marker) != NULL;
    size_t have = kept + (size_t)got;
    kept = have < sizeof end_marker ? have : sizeof end_marker - 1;
    memmove(window, window + have - kept, kept);
  }
  if (ended) fail_msg("the stuck reader got the whole turn (%zu bytes)", total);
  assert_true(closed);
  close(fd);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
  remove(path);
  remove(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_timeouts_silent_clients_are_closed),
      cmocka_unit_test(test_timeouts_quiet_stream_stays),
      cmocka_unit_test(test_timeouts_stuck_reader_is_dropped),
  };
  return cmocka_run_group_tests(tests, NULL, harness_kill_all);
}
