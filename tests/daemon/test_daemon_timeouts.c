/* --client-timeout over real sockets: a client that sends nothing, or half a
 * request, or nothing more after an answer, is closed; a reader that takes none
 * of its stream is dropped; a stream that has nothing to send (an approval
 * waits) stays open for as long as it takes. turnd runs with a one-second limit
 * here, and each test waits past it. */
#include "harness.h"

#include <errno.h>
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

static const char *const one_second[] = {
    "--client-timeout", "1", "--reader-timeout", "1", "--step-up-effects", "none", NULL};

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
  char body[256];
  int n = snprintf(body, sizeof body, "{\"text\": \"%s\"}", text);
  harness_send_turn(fd, t, body, (size_t)n);
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

/* A turnd with --client-timeout 1 whose script answers "big" with one reply of 9
 * texts of 100 kB (about 900 kB of stream, far more than the sockets hold), or
 * with many when loop is true: the reply then ends with a clock call, which the
 * script gives again to each of the turn's 40 model calls (a script is at most
 * 1 MiB). */
static void start_big(struct turnd_proc *t, bool loop, const char *reader_timeout) {
  enum { STEPS = 9, STEP_BYTES = 100000 };
  size_t cap = STEPS * (STEP_BYTES + 16) + 256;
  char *script = malloc(cap);
  assert_non_null(script);
  size_t n =
      (size_t)snprintf(script, cap, "{\"turns\": [{\"when\": \"big\", \"replies\": [[");
  for (int i = 0; i < STEPS; i++) {
    n += (size_t)snprintf(script + n, cap - n, "%s{\"text\": \"", i > 0 ? ", " : "");
    memset(script + n, 'x', STEP_BYTES);
    n += STEP_BYTES;
    n += (size_t)snprintf(script + n, cap - n, "\"}");
  }
  snprintf(script + n, cap - n, "%s]]}], \"default\": [[{\"text\": \"?\"}]]}",
           loop ? ", {\"tool_use\": {\"name\": \"clock\", \"input\": {}}}" : "");
  const char *const more[] = {
      "--client-timeout", "1", "--max-model-calls", "40", "--reader-timeout",
      reader_timeout,     NULL};
  harness_start_script(t, script, more);
  free(script);
}

/* Reads fd (at most cap bytes a read) until turnd closes it, the turn's end
 * comes, or SAFETY_MS pass without a byte; *total counts the bytes. Returns
 * whether the end came; *closed says whether turnd closed first. The end's
 * marker may be split between two reads, so the last bytes are kept. */
static bool read_to_end(int fd, size_t cap, size_t *total, bool *closed) {
  static const char end_marker[] = "\"type\":\"end\"";
  char window[65536 + sizeof end_marker];
  if (cap > 65536) cap = 65536;
  size_t kept = 0;
  *closed = false;
  for (;;) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, SAFETY_MS) != 1) return false; /* open and silent */
    ssize_t got = recv(fd, window + kept, cap, 0);
    if (got <= 0) {
      *closed = true;
      return false;
    }
    *total += (size_t)got;
    window[kept + (size_t)got] = '\0';
    if (strstr(window, end_marker) != NULL) return true;
    size_t have = kept + (size_t)got;
    kept = have < sizeof end_marker ? have : sizeof end_marker - 1;
    memmove(window, window + have - kept, kept);
  }
}

/* A reader that takes none of a long turn (megabytes more than the sockets
 * hold) is dropped once it has taken nothing for the limit: what reaches it
 * afterwards is what was on its way, and not the turn's end. */
static void test_timeouts_stuck_reader_is_dropped(void **state) {
  (void)state;
  struct turnd_proc t;
  start_big(&t, true, "1");
  int fd = harness_connect(&t, 4096);
  assert_true(fd >= 0);
  post_turn(fd, &t, "big");
  pause_ms(3000); /* reading nothing, past the limit */
  /* Then read it all: turnd closed the connection (or reset it, which drops
   * what was on its way), and the turn's end never came. */
  size_t total = 0;
  bool closed;
  if (read_to_end(fd, 65536, &total, &closed))
    fail_msg("the stuck reader got the whole turn (%zu bytes)", total);
  assert_true(closed);
  close(fd);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* A reader that takes nothing for longer than --client-timeout but not for
 * --reader-timeout keeps its stream: Linux acknowledges a slow reader's reads in
 * steps of up to its receive buffer (a reader of 1 KiB/s with the default
 * 128 KiB: about every 128 s), so a reader that reads slowly looks like one
 * that reads nothing for longer than the client's other limit. It was dropped
 * after --client-timeout. */
static void test_timeouts_reader_has_its_own_limit(void **state) {
  (void)state;
  struct turnd_proc t;
  start_big(&t, true, "150");
  int fd = harness_connect(&t, 4096);
  assert_true(fd >= 0);
  post_turn(fd, &t, "big");
  pause_ms(3000); /* reading nothing, past --client-timeout */
  size_t total = 0;
  bool closed;
  if (!read_to_end(fd, 65536, &total, &closed))
    fail_msg("the reader was dropped after %zu bytes", total);
  close(fd);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* Regression: a reader that kept reading, slowly, was dropped like one that
 * reads nothing, because libevent's write timeout only restarts when the socket
 * has room for a third of its buffer again (megabytes, once the kernel has grown
 * it). This one takes up to 1 KiB every half second for 6 seconds (the limit is
 * one second) while the turn has megabytes more to send than the sockets hold,
 * then the rest at full speed: its stream goes on to the turn's end. turnd sees
 * what a reader takes by what its TCP acknowledges, which Linux does in steps of
 * up to the reader's receive buffer: the smallest one (SO_RCVBUF 1024, which
 * Linux makes 2304 bytes) shows each read at once. */
static void test_timeouts_slow_reader_keeps_its_stream(void **state) {
  (void)state;
  struct turnd_proc t;
  start_big(&t, true, "1");
  int fd = harness_connect(&t, 1024);
  assert_true(fd >= 0);
  post_turn(fd, &t, "big");
  size_t total = 0;
  bool closed = false;
  for (int i = 0; i < 12 && !closed; i++) {
    pause_ms(500);
    char buf[1024];
    ssize_t got = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) closed = true;
    if (got > 0) total += (size_t)got;
  }
  if (closed) fail_msg("the slow reader was dropped after %zu bytes", total);
  assert_true(total >= 12 * 256); /* it did read, slowly */
  if (!read_to_end(fd, 65536, &total, &closed))
    fail_msg("no end after %zu bytes (%s)", total, closed ? "closed" : "silent");
  close(fd);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* Regression: libevent restarts its read timeout at every byte, so a client that
 * sent a request one byte at a time, each within --client-timeout of the last,
 * kept its connection for as long as it liked. Now the whole request must come
 * within the limit: a new connection trickling its first request, and a
 * kept-alive one trickling its second, are both closed before their requests
 * are whole (a byte every 0.4 s, against a limit of 1 s). */
static void test_timeouts_trickled_request_is_closed(void **state) {
  (void)state;
  struct turnd_proc t;
  assert_int_equal(harness_start(&t, one_second), 0);
  static const char slow[] = "GET /api/capabilities HTTP/1.1\r\nHost: x\r\n\r\n";
  int fd[2] = {harness_connect(&t, 0), harness_connect(&t, 0)};
  assert_true(fd[0] >= 0 && fd[1] >= 0);
  /* fd[1] is kept alive after a whole request first. */
  char req[256], got[4096];
  snprintf(req, sizeof req, "GET /api/capabilities HTTP/1.1\r\nHost: x\r\n%s\r\n\r\n",
           t.auth_header);
  send_all(fd[1], req);
  harness_read_until(fd[1], got, 0, sizeof got, "\"protocol\"");
  assert_non_null(strstr(got, "HTTP/1.1 200"));
  bool closed[2] = {false, false}, answered = false;
  size_t sent[2] = {0, 0};
  char answer[2][256] = {"", ""};
  for (size_t i = 0; i < sizeof slow - 1 && !answered && !(closed[0] && closed[1]); i++) {
    for (int k = 0; k < 2; k++) {
      if (closed[k]) continue;
      struct pollfd p = {.fd = fd[k], .events = POLLIN};
      if (poll(&p, 1, 0) == 1) {
        ssize_t n = recv(fd[k], answer[k], sizeof answer[k] - 1, MSG_DONTWAIT);
        if (n > 0) {
          answer[k][n] = '\0';
          answered = true;
        } else {
          closed[k] = true;
        }
      } else if (send(fd[k], slow + i, 1, MSG_NOSIGNAL) == 1) {
        sent[k]++;
      } else {
        closed[k] = true;
      }
    }
    pause_ms(400);
  }
  for (int k = 0; k < 2; k++) {
    if (answer[k][0] != '\0') fail_msg("connection %d was answered: %.40s", k, answer[k]);
    if (!closed[k]) assert_true(read_to_close(fd[k], NULL, 0));
    assert_true(sent[k] < sizeof slow - 1); /* closed before the request was whole */
    close(fd[k]);
  }
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_timeouts_silent_clients_are_closed),
      cmocka_unit_test(test_timeouts_quiet_stream_stays),
      cmocka_unit_test(test_timeouts_stuck_reader_is_dropped),
      cmocka_unit_test(test_timeouts_slow_reader_keeps_its_stream),
      cmocka_unit_test(test_timeouts_reader_has_its_own_limit),
      cmocka_unit_test(test_timeouts_trickled_request_is_closed),
  };
  return cmocka_run_group_tests(tests, NULL, harness_kill_all);
}
