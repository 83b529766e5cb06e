/* What libevent took of a request (src/turnd/http/req_lines.c): whether a 413 from
 * libevent is for a chunk it could not read. The requests are taken here as
 * libevent 2.1 takes them from a connection's input: evbuffer_readln drains a
 * line's content (when there is any) and then its end, a chunk's data goes in
 * one drain; the daemon tests (test_daemon_limits.c) check the same against
 * libevent itself. Each request is fed whole and one byte at a time, with the
 * same outcome. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "turnd/http/req_lines.h"

#include <stdio.h>
#include <string.h>

/* How libevent takes the request: a line, or n bytes of data (n > 0). */
struct take {
  size_t data; /* 0: a line */
};

#define LINE \
  { 0 }
#define DATA(n) \
  { n }

/* A connection's input, as conn_watch.c shows it to req_lines. */
struct sim {
  struct req_lines t;
  const char *in;
  size_t arrived; /* bytes of in that came */
  size_t taken;   /* bytes of in libevent took */
  const struct take *steps;
  size_t n_steps, step;
};

static void show_front(struct sim *s) {
  req_lines_front(&s->t, s->in + s->taken, s->arrived - s->taken);
}

static void drain(struct sim *s, size_t n) {
  req_lines_took(&s->t, n);
  s->taken += n;
  show_front(s);
}

/* Takes what libevent would take now. */
static void take_what_came(struct sim *s) {
  while (s->step < s->n_steps) {
    size_t avail = s->arrived - s->taken;
    const char *p = s->in + s->taken;
    if (s->steps[s->step].data > 0) {
      if (avail < s->steps[s->step].data) return;
      drain(s, s->steps[s->step].data);
    } else {
      const char *nl = memchr(p, '\n', avail);
      if (nl == NULL) return;
      size_t content = (size_t)(nl - p);
      size_t end = 1;
      if (content > 0 && p[content - 1] == '\r') {
        content--;
        end = 2;
      }
      if (content > 0) drain(s, content);
      drain(s, end);
    }
    s->step++;
  }
}

/* Feeds in, chunk bytes at a time (0: whole), taking as libevent would; returns
 * whether a 413 then would be for a chunk libevent could not read. */
static bool feed(const char *in, const struct take *steps, size_t n_steps, size_t chunk) {
  struct sim s = {.in = in, .steps = steps, .n_steps = n_steps};
  req_lines_reset(&s.t);
  show_front(&s);
  size_t len = strlen(in);
  while (s.arrived < len) {
    size_t n = chunk == 0 || len - s.arrived < chunk ? len - s.arrived : chunk;
    s.arrived += n;
    if (req_lines_wants_front(&s.t)) show_front(&s);
    take_what_came(&s);
  }
  assert_int_equal(s.step, n_steps); /* the test took all it meant to */
  return req_lines_bad_chunk(&s.t);
}

/* The outcome, fed whole and one byte at a time (which must agree). */
static bool outcome(const char *in, const struct take *steps, size_t n_steps) {
  bool whole = feed(in, steps, n_steps, 0);
  assert_int_equal(feed(in, steps, n_steps, 1), whole);
  return whole;
}

#define HEAD    "POST /api/turns HTTP/1.1\r\nHost: x\r\n"
#define CHUNKED "Transfer-Encoding: chunked\r\n"

/* Request line, Host, the Transfer-Encoding header, the empty line: 4 lines. */
static const struct take four_lines_and_a_size[] = {LINE, LINE, LINE, LINE, LINE};

static void test_req_lines_chunk_sizes(void **state) {
  (void)state;
  static const struct {
    const char *size; /* the first chunk-size line */
    bool bad;
  } cases[] = {
      {"zz\r\n", true},      {"-1\r\n", true},     {"5;ext=1\r\n", true},
      {"1a\r\n", false},     {"0x1a\r\n", false},  {" 1a\r\n", false},
      {"1a ext\r\n", false}, {"10001\r\n", false}, {"ffffffffffffffffffff\r\n", false},
      {"zz\n", true},        {"10001\n", false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char in[256];
    snprintf(in, sizeof in, "%s%s\r\n%s", HEAD, CHUNKED, cases[i].size);
    assert_int_equal(outcome(in, four_lines_and_a_size, 5), cases[i].bad);
  }
}

/* A bad size after a good chunk, and a trailer that is no header, are bad; the
 * chunk's own data, whatever it holds, is not judged as a size. */
static void test_req_lines_after_a_chunk(void **state) {
  (void)state;
  static const struct take bad_size[] = {LINE, LINE,    LINE, LINE,
                                         LINE, DATA(3), LINE, LINE};
  assert_true(outcome(HEAD CHUNKED "\r\n3\r\nabc\r\nzz\r\n", bad_size, 8));
  assert_false(outcome(HEAD CHUNKED "\r\n3\r\nzzz\r\n10000\r\n", bad_size, 8));
  static const struct take trailer[] = {LINE,    LINE, LINE, LINE, LINE,
                                        DATA(3), LINE, LINE, LINE};
  assert_true(outcome(HEAD CHUNKED "\r\n3\r\nabc\r\n0\r\nno colon\r\n", trailer, 9));
}

/* Only a chunked body's failure is a bad chunk: a body with a Content-Length whose
 * last bytes look like a bad size line is not one. */
static void test_req_lines_not_chunked(void **state) {
  (void)state;
  static const struct take cl[] = {LINE, LINE, LINE, LINE, DATA(6), DATA(4)};
  assert_false(outcome(HEAD "Content-Length: 10\r\n\r\naaaaaazz\r\n", cl, 6));
  static const struct take lines[] = {LINE, LINE, LINE, LINE, LINE};
  assert_false(outcome(HEAD "Content-Length: 4\r\n\r\nzz\r\n", lines, 5));
}

/* The Transfer-Encoding header as libevent reads it: the first one counts, any
 * case, spaces (not tabs) before the value, spaces and tabs after it; a line
 * folded into it makes it something else. */
static void test_req_lines_transfer_encoding(void **state) {
  (void)state;
  static const struct {
    const char *headers; /* with their line ends, then the empty line */
    size_t n_headers;
    bool chunked;
  } cases[] = {
      {"transfer-encoding: CHUNKED\r\n", 1, true},
      {"Transfer-Encoding:chunked\r\n", 1, true},
      {"Transfer-Encoding:   chunked \t\r\n", 1, true},
      {"Transfer-Encoding:\tchunked\r\n", 1, false},
      {"Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n", 2, false},
      {"Transfer-Encoding: chunked\r\n more\r\n", 2, false},
      {"Transfer-Encoding: chunked\r\nX-A: 1\r\n more\r\n", 3, true},
      {"Transfer-Encodings: chunked\r\n", 1, false},
      {"X-Transfer-Encoding: chunked\r\n", 1, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char in[512];
    snprintf(in, sizeof in, "%s%s\r\nzz\r\n", HEAD, cases[i].headers);
    struct take steps[8] = {LINE, LINE, LINE, LINE, LINE, LINE, LINE, LINE};
    /* request line, Host, the headers, the empty line, the size line */
    assert_int_equal(outcome(in, steps, 2 + cases[i].n_headers + 2), cases[i].chunked);
  }
}

/* A header or size line longer than what is kept is not judged: the 413 stays.
 * A long header before the Transfer-Encoding one changes nothing. */
static void test_req_lines_long_lines(void **state) {
  (void)state;
  char in[1024];
  char pad[200];
  memset(pad, 'a', sizeof pad - 1);
  pad[sizeof pad - 1] = '\0';
  snprintf(in, sizeof in, "%sX-Long: %s\r\n%s\r\nzz\r\n", HEAD, pad, CHUNKED);
  static const struct take six[] = {LINE, LINE, LINE, LINE, LINE, LINE};
  assert_true(outcome(in, six, 6));
  snprintf(in, sizeof in, "%s%s\r\n%szz\r\n", HEAD, CHUNKED, pad);
  assert_false(outcome(in, four_lines_and_a_size, 5));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_req_lines_chunk_sizes),
      cmocka_unit_test(test_req_lines_after_a_chunk),
      cmocka_unit_test(test_req_lines_not_chunked),
      cmocka_unit_test(test_req_lines_transfer_encoding),
      cmocka_unit_test(test_req_lines_long_lines),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
