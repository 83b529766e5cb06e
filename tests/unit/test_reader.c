/* Unit tests for the NDJSON reader (src/proto/reader.c). Every callback is
 * recorded as one text line (event type, seq, line number and the event encoded
 * again, or error code and line), so a stream fed whole, one byte at a time and
 * split at every offset and every pair of offsets must give the same record. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "spec_example.h"
#include "support.h"
#include "turn/turn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------- the recorder */

struct rec {
  turn_reader *r; /* the reader whose callbacks we record */
  char *log;      /* one line per callback; owned, grows */
  size_t len, cap;
  turn_buf enc;           /* scratch for turn_event_encode */
  size_t n_calls;         /* callbacks so far */
  size_t n_events;        /* ... with an event */
  size_t n_errors;        /* ... with an error */
  size_t line_mismatch;   /* error callbacks where turn_reader_line != err->line */
  size_t stop_at;         /* return stop_code from callback number stop_at; 0: never */
  int stop_code;          /* what to return then */
  const uint64_t *lines;  /* if set: turn_reader_line expected at each callback */
  size_t n_lines;         /* entries in lines */
  size_t lines_wrong;     /* callbacks where turn_reader_line != lines[i] */
  uint64_t last_err_line; /* err->line of the last error callback */
  int last_err_code;      /* its code */
};

static void rec_init(struct rec *c) {
  memset(c, 0, sizeof *c);
  turn_buf_init(&c->enc, 1u << 22, NULL);
}

static void rec_fini(struct rec *c) {
  turn_reader_free(c->r);
  c->r = NULL;
  free(c->log);
  c->log = NULL;
  turn_buf_fini(&c->enc);
}

/* Forget the record, keep the settings. */
static void rec_clear(struct rec *c) {
  c->len = 0;
  c->n_calls = c->n_events = c->n_errors = 0;
  c->line_mismatch = c->lines_wrong = 0;
  c->last_err_line = 0;
  c->last_err_code = 0;
}

static void rec_put(struct rec *c, const char *p, size_t n) {
  if (c->cap - c->len < n + 1) {
    size_t cap = c->cap == 0 ? 4096 : c->cap;
    while (cap - c->len < n + 1)
      cap *= 2;
    char *grown = realloc(c->log, cap);
    assert_non_null(grown);
    c->log = grown;
    c->cap = cap;
  }
  memcpy(c->log + c->len, p, n);
  c->len += n;
  c->log[c->len] = '\0';
}

static int on_event(void *ctx, const turn_event *ev, const turn_error *err) {
  struct rec *c = ctx;
  uint64_t rl = turn_reader_line(c->r);
  char head[160];
  int n;
  if (c->lines != NULL) {
    if (c->n_calls >= c->n_lines || c->lines[c->n_calls] != rl) c->lines_wrong++;
  }
  c->n_calls++;
  if (ev != NULL) {
    assert_null(err);
    c->n_events++;
    turn_buf_reset(&c->enc);
    assert_int_equal(turn_event_encode(ev, &c->enc), TURN_OK);
    n = snprintf(head, sizeof head, "event %s seq=%llu line=%llu ",
                 turn_event_type_name(ev->type), (unsigned long long)ev->seq,
                 (unsigned long long)rl);
    rec_put(c, head, (size_t)n);
    rec_put(c, c->enc.data, c->enc.len);
    rec_put(c, "\n", 1);
  } else {
    assert_non_null(err);
    c->n_errors++;
    if (rl != err->line) c->line_mismatch++;
    c->last_err_line = err->line;
    c->last_err_code = err->code;
    n = snprintf(head, sizeof head, "error %s line=%llu\n", turn_errname(err->code),
                 (unsigned long long)err->line);
    rec_put(c, head, (size_t)n);
  }
  if (c->stop_at != 0 && c->n_calls == c->stop_at) return c->stop_code;
  return 0;
}

/* ------------------------------------------------------------ feeding */

/* Feeds data[0..len) from a copy of exactly len bytes, so ASan sees any read past
 * the chunk. */
static int feed_copy(struct rec *c, const char *data, size_t len) {
  char *copy = malloc(len > 0 ? len : 1);
  assert_non_null(copy);
  if (len > 0) memcpy(copy, data, len);
  int rv = turn_reader_feed(c->r, copy, len, on_event, c);
  free(copy);
  return rv;
}

static void reader_open(struct rec *c, size_t max_line) {
  turn_reader_free(c->r);
  c->r = turn_reader_new(max_line, NULL);
  assert_non_null(c->r);
}

/* One run: the chunks end at cuts[0..n) (ascending) and at len; then finish. */
static void run_cuts(struct rec *c, const char *data, size_t len, size_t max_line,
                     const size_t *cuts, size_t n) {
  rec_clear(c);
  reader_open(c, max_line);
  size_t at = 0;
  for (size_t i = 0; i <= n; i++) {
    size_t to = i < n ? cuts[i] : len;
    assert_int_equal(feed_copy(c, data + at, to - at), TURN_OK);
    at = to;
  }
  assert_int_equal(turn_reader_finish(c->r, on_event, c), TURN_OK);
  turn_reader_free(c->r);
  c->r = NULL;
}

static void run_bytes(struct rec *c, const char *data, size_t len, size_t max_line) {
  rec_clear(c);
  reader_open(c, max_line);
  for (size_t i = 0; i < len; i++)
    assert_int_equal(feed_copy(c, data + i, 1), TURN_OK);
  assert_int_equal(turn_reader_finish(c->r, on_event, c), TURN_OK);
  turn_reader_free(c->r);
  c->r = NULL;
}

static void same_log(const struct rec *c, const char *want, size_t want_len,
                     const char *how) {
  if (c->len == want_len && memcmp(c->log, want, want_len) == 0) return;
  print_error("%s gave a different record.\nwant:\n%.*s\ngot:\n%.*s\n", how,
              (int)want_len, want, (int)c->len, c->log != NULL ? c->log : "");
  fail();
}

/* The stream fed whole must give `expected` (when not NULL); fed one byte at a
 * time, in two chunks split at every offset and in three chunks split at every
 * pair of offsets (every stride-th offset) it must give the same record. */
static void check_every_split(const char *data, size_t len, size_t max_line,
                              const char *expected, size_t stride) {
  struct rec c;
  rec_init(&c);
  run_cuts(&c, data, len, max_line, NULL, 0);
  if (expected != NULL) same_log(&c, expected, strlen(expected), "whole feed");
  size_t ref_len = c.len;
  char *ref = malloc(ref_len + 1);
  assert_non_null(ref);
  memcpy(ref, c.log != NULL ? c.log : "", ref_len);
  ref[ref_len] = '\0';

  run_bytes(&c, data, len, max_line);
  same_log(&c, ref, ref_len, "one byte at a time");

  char how[64];
  for (size_t i = 0; i <= len; i++) {
    run_cuts(&c, data, len, max_line, &i, 1);
    if (c.len != ref_len || memcmp(c.log, ref, ref_len) != 0) {
      snprintf(how, sizeof how, "split at %zu", i);
      same_log(&c, ref, ref_len, how);
    }
  }
  for (size_t i = 0; i <= len; i += stride) {
    for (size_t j = i; j <= len; j += stride) {
      size_t cuts[2] = {i, j};
      run_cuts(&c, data, len, max_line, cuts, 2);
      if (c.len != ref_len || memcmp(c.log, ref, ref_len) != 0) {
        snprintf(how, sizeof how, "split at %zu and %zu", i, j);
        same_log(&c, ref, ref_len, how);
      }
    }
  }
  free(ref);
  rec_fini(&c);
}

/* --------------------------------------------------------------- streams */

/* The types of the spec's example turn's events, line by line. */
static const char *const example_types[SPEC_EXAMPLE_LINES] = {
    "turn",        "tool_use", "tool_input", "approval", "approval_decided",
    "tool_result", "text",     "end"};

/* A growable string for building streams and expected records. */
struct text {
  char *p;
  size_t len, cap;
};

static void text_put(struct text *t, const char *p, size_t n) {
  if (t->cap - t->len < n + 1) {
    size_t cap = t->cap == 0 ? 1024 : t->cap;
    while (cap - t->len < n + 1)
      cap *= 2;
    char *grown = realloc(t->p, cap);
    assert_non_null(grown);
    t->p = grown;
    t->cap = cap;
  }
  memcpy(t->p + t->len, p, n);
  t->len += n;
  t->p[t->len] = '\0';
}

static void text_puts(struct text *t, const char *s) {
  text_put(t, s, strlen(s));
}

static void text_fill(struct text *t, char ch, size_t n) {
  for (size_t i = 0; i < n; i++)
    text_put(t, &ch, 1);
}

/* The example joined with eol, and the record it must give. */
static void example_stream(struct text *data, struct text *want, const char *eol) {
  char head[96];
  for (size_t i = 0; i < SPEC_EXAMPLE_LINES; i++) {
    text_puts(data, spec_example[i]);
    text_puts(data, eol);
    int n = snprintf(head, sizeof head, "event %s seq=%zu line=%zu ", example_types[i], i,
                     i + 1);
    text_put(want, head, (size_t)n);
    text_puts(want, spec_example[i]); /* the example is already in the encoder's form */
    text_puts(want, "\n");
  }
}

/* ----------------------------------------------------------------- tests */

static void test_reader_example_fed_whole(void **state) {
  (void)state;
  struct text data = {0}, want = {0};
  example_stream(&data, &want, "\n");
  struct rec c;
  rec_init(&c);
  reader_open(&c, TURN_READER_DEFAULT_MAX_LINE);
  assert_int_equal(turn_reader_feed(c.r, data.p, data.len, on_event, &c), TURN_OK);
  assert_int_equal(turn_reader_line(c.r), SPEC_EXAMPLE_LINES);
  assert_int_equal(turn_reader_finish(c.r, on_event, &c), TURN_OK);
  assert_int_equal(c.n_events, SPEC_EXAMPLE_LINES);
  assert_int_equal(c.n_errors, 0);
  same_log(&c, want.p, want.len, "whole feed");
  rec_fini(&c);
  free(data.p);
  free(want.p);
}

static void test_reader_every_split_example(void **state) {
  (void)state;
  struct text data = {0}, want = {0};
  example_stream(&data, &want, "\n");
  check_every_split(data.p, data.len, TURN_READER_DEFAULT_MAX_LINE, want.p, 1);
  free(data.p);
  free(want.p);
}

static void test_reader_every_split_example_crlf(void **state) {
  (void)state;
  struct text data = {0}, want = {0};
  example_stream(&data, &want, "\r\n");
  check_every_split(data.p, data.len, TURN_READER_DEFAULT_MAX_LINE, want.p, 1);
  free(data.p);
  free(want.p);
}

/* Multi-byte UTF-8 (2, 3 and 4 bytes, raw and escaped), blank lines of both kinds,
 * mixed line ends and no newline after a final blank-free line's "\r\n". */
static const char utf8_stream[] =
    "\n"
    "{\"v\":1,\"seq\":0,\"type\":\"turn\",\"turn\":\"t-\xc3\xbc\",\"session\":\"s-"
    "\xe6\x97\xa5\xe6\x9c\xac\"}\n"
    "\r\n"
    "{\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":\"h\xc3\xa9llo \xe2\x80\x94 "
    "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x98\x80\"}\n"
    "\n"
    "\n"
    "{\"v\":1,\"seq\":2,\"type\":\"reasoning\",\"delta\":\"\\u00e9\\ud83d\\ude00 "
    "ok\"}\r\n"
    "{\"v\":1,\"seq\":3,\"type\":\"notice\",\"text\":\"\xce\xa9\xce\xbc\xce\xad\xce\xb3"
    "\xce\xb1\"}\n"
    "{\"v\":1,\"seq\":4,\"type\":\"guard\",\"action\":\"passed\",\"message\":\"\xe2\x9c"
    "\x93 \xec\x99\x84\xeb\xa3\x8c\"}\n"
    "{\"v\":1,\"seq\":5,\"type\":\"end\",\"stop_reason\":\"end_turn\"}\r\n"
    "\r\n";

static const char utf8_want[] =
    "event turn seq=0 line=2 "
    "{\"v\":1,\"seq\":0,\"type\":\"turn\",\"turn\":\"t-\xc3\xbc\","
    "\"session\":\"s-\xe6\x97\xa5\xe6\x9c\xac\"}\n"
    "event text seq=1 line=4 "
    "{\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":\"h\xc3\xa9llo "
    "\xe2\x80\x94 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x98\x80\"}\n"
    "event reasoning seq=2 line=7 {\"v\":1,\"seq\":2,\"type\":\"reasoning\",\"delta\":"
    "\"\xc3\xa9\xf0\x9f\x98\x80 ok\"}\n"
    "event notice seq=3 line=8 {\"v\":1,\"seq\":3,\"type\":\"notice\",\"text\":\"\xce\xa9"
    "\xce\xbc\xce\xad\xce\xb3\xce\xb1\"}\n"
    "event guard seq=4 line=9 "
    "{\"v\":1,\"seq\":4,\"type\":\"guard\",\"action\":\"passed\","
    "\"message\":\"\xe2\x9c\x93 \xec\x99\x84\xeb\xa3\x8c\"}\n"
    "event end seq=5 line=10 {\"v\":1,\"seq\":5,\"type\":\"end\",\"stop_reason\":"
    "\"end_turn\"}\n";

static void test_reader_every_split_utf8_and_blank_lines(void **state) {
  (void)state;
  check_every_split(utf8_stream, sizeof utf8_stream - 1, TURN_READER_DEFAULT_MAX_LINE,
                    utf8_want, 1);
}

/* Bad lines between good ones, an overlong line (limit 80), and a partial last
 * line: every error is reported once with its line, and the next line parses. */
static const char mixed_stream[] =
    "{\"v\":1,\"seq\":0,\"type\":\"turn\",\"turn\":\"t-1\",\"session\":\"s\"}\n"
    "{\"v\":1,\"seq\":1,\n"
    "{\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":\"\xc3\xa9\"}\r\n"
    "{\"v\":1,\"seq\":2,\"type\":\"text\",\"delta\":"
    "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}\n"
    "\n"
    "{\"v\":1,\"seq\":3,\"type\":\"text\",\"delta\":\"\xff\"}\n"
    "{\"v\":1,\"seq\":4,\"type\":\"end\",\"stop_reason\":\"end_turn\"}\n"
    "{\"v\":1,\"seq\":0,\"type\":\"tu";

static const char mixed_want[] =
    "event turn seq=0 line=1 {\"v\":1,\"seq\":0,\"type\":\"turn\",\"turn\":\"t-1\","
    "\"session\":\"s\"}\n"
    "error E_JSON line=2\n"
    "event text seq=1 line=3 "
    "{\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":\"\xc3\xa9\"}\n"
    "error E_TOOBIG line=4\n"
    "error E_UTF8 line=6\n"
    "event end seq=4 line=7 {\"v\":1,\"seq\":4,\"type\":\"end\",\"stop_reason\":"
    "\"end_turn\"}\n"
    "error E_PARTIAL line=8\n";

static void test_reader_every_split_bad_lines(void **state) {
  (void)state;
  check_every_split(mixed_stream, sizeof mixed_stream - 1, 80, mixed_want, 1);
}

/* A line long enough to make the reader buffer and grow a split line (and the
 * scanner run its word-at-a-time loop across chunk ends). Pairs of cuts every
 * 13th offset keep the run short. */
static void test_reader_every_split_long_line(void **state) {
  (void)state;
  struct text data = {0}, want = {0};
  text_puts(&data,
            "{\"v\":1,\"seq\":0,\"type\":\"turn\",\"turn\":\"t\",\"session\":\"s\"}\n");
  text_puts(&data, "{\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":\"");
  for (int i = 0; i < 300; i++)
    text_puts(&data, "ab\\\"\xc3\xa9\xe2\x82\xac"); /* 10 bytes: escape and UTF-8 */
  text_puts(&data, "\"}\r\n");
  text_puts(&data, "{\"v\":1,\"seq\":2,\"type\":\"end\",\"stop_reason\":\"busy\"}\n");

  text_puts(&want,
            "event turn seq=0 line=1 {\"v\":1,\"seq\":0,\"type\":\"turn\",\"turn\":"
            "\"t\",\"session\":\"s\"}\n");
  text_puts(&want, "event text seq=1 line=2 {\"v\":1,\"seq\":1,\"type\":\"text\","
                   "\"delta\":\"");
  for (int i = 0; i < 300; i++)
    text_puts(&want, "ab\\\"\xc3\xa9\xe2\x82\xac");
  text_puts(&want, "\"}\n");
  text_puts(&want, "event end seq=2 line=3 {\"v\":1,\"seq\":2,\"type\":\"end\","
                   "\"stop_reason\":\"busy\"}\n");
  check_every_split(data.p, data.len, TURN_READER_DEFAULT_MAX_LINE, want.p, 13);
  free(data.p);
  free(want.p);
}

/* The line used by the limit tests, and its length. */
static const char limit_line[] =
    "{\"v\":1,\"seq\":0,\"type\":\"text\",\"delta\":\"abc\"}";
#define LIMIT_LEN (sizeof limit_line - 1)
static const char short_line[] = "{\"v\":1,\"seq\":9,\"type\":\"text\",\"delta\":\"\"}";

static void test_reader_max_line_exact_is_accepted(void **state) {
  (void)state;
  struct text data = {0}, want = {0};
  for (int i = 0; i < 3; i++) {
    text_puts(&data, limit_line);
    text_puts(&data, i == 1 ? "\r\n" : "\n"); /* the "\r" does not count */
    char head[64];
    int n = snprintf(head, sizeof head, "event text seq=0 line=%d ", i + 1);
    text_put(&want, head, (size_t)n);
    text_puts(&want, limit_line);
    text_puts(&want, "\n");
  }
  check_every_split(data.p, data.len, LIMIT_LEN, want.p, 1);
  free(data.p);
  free(want.p);
}

static void test_reader_max_line_plus_one_is_toobig(void **state) {
  (void)state;
  struct text data = {0};
  text_puts(&data, limit_line);
  text_puts(&data, "\n");
  text_puts(&data, short_line);
  text_puts(&data, "\n");
  text_puts(&data, limit_line);
  text_puts(&data, "\r\n");
  text_puts(&data, short_line);
  text_puts(&data, "\r\n");
  static const char want[] =
      "error E_TOOBIG line=1\n"
      "event text seq=9 line=2 {\"v\":1,\"seq\":9,\"type\":\"text\",\"delta\":\"\"}\n"
      "error E_TOOBIG line=3\n"
      "event text seq=9 line=4 {\"v\":1,\"seq\":9,\"type\":\"text\",\"delta\":\"\"}\n";
  check_every_split(data.p, data.len, LIMIT_LEN - 1, want, 1);
  free(data.p);
}

/* Only the "\r" right before the "\n" is dropped; another one is part of the line
 * (JSON whitespace after the object) and counts against the limit. */
static void test_reader_only_last_cr_is_dropped(void **state) {
  (void)state;
  struct text data = {0};
  text_puts(&data, limit_line);
  text_puts(&data, "\r\r\n"); /* LIMIT_LEN + 1 bytes: fits */
  text_puts(&data, limit_line);
  text_puts(&data, "\r\r\r\n"); /* LIMIT_LEN + 2 bytes: too long */
  text_puts(&data, limit_line);
  text_puts(&data, "\n");
  static const char want[] =
      "event text seq=0 line=1 {\"v\":1,\"seq\":0,\"type\":\"text\",\"delta\":"
      "\"abc\"}\n"
      "error E_TOOBIG line=2\n"
      "event text seq=0 line=3 {\"v\":1,\"seq\":0,\"type\":\"text\",\"delta\":"
      "\"abc\"}\n";
  check_every_split(data.p, data.len, LIMIT_LEN + 1, want, 1);
  free(data.p);
}

/* Overlong lines among good and blank lines keep the line numbers right. */
static void test_reader_toobig_lines_numbered(void **state) {
  (void)state;
  struct text data = {0};
  text_puts(&data, short_line);
  text_puts(&data, "\n");
  text_fill(&data, 'x', 200);
  text_puts(&data, "\n\n");
  text_puts(&data, short_line);
  text_puts(&data, "\n");
  text_fill(&data, 'y', 61);
  text_puts(&data, "\r\n");
  text_fill(&data, 'z', 1000);
  text_puts(&data, "\n");
  text_puts(&data, short_line);
  text_puts(&data, "\n");
  text_fill(&data, 'w', 70); /* overlong last line without a newline */
  static const char want[] =
      "event text seq=9 line=1 {\"v\":1,\"seq\":9,\"type\":\"text\",\"delta\":\"\"}\n"
      "error E_TOOBIG line=2\n"
      "event text seq=9 line=4 {\"v\":1,\"seq\":9,\"type\":\"text\",\"delta\":\"\"}\n"
      "error E_TOOBIG line=5\n"
      "error E_TOOBIG line=6\n"
      "event text seq=9 line=7 {\"v\":1,\"seq\":9,\"type\":\"text\",\"delta\":\"\"}\n"
      "error E_TOOBIG line=8\n";
  check_every_split(data.p, data.len, 60, want, 7);
  free(data.p);
}

/* Fed in pieces that never hold the newline, an overlong line is reported once,
 * while it is still arriving, and the next line parses. */
static void test_reader_toobig_reported_once_in_pieces(void **state) {
  (void)state;
  const size_t max_line = 64;
  struct rec c;
  rec_init(&c);
  reader_open(&c, max_line);
  assert_int_equal(feed_copy(&c, short_line, sizeof short_line - 1), TURN_OK);
  assert_int_equal(feed_copy(&c, "\n", 1), TURN_OK);
  assert_int_equal(c.n_events, 1);
  char piece[10];
  memset(piece, 'x', sizeof piece);
  for (size_t fed = 0; fed < 500; fed += sizeof piece) {
    assert_int_equal(feed_copy(&c, piece, sizeof piece), TURN_OK);
    if (fed + sizeof piece >= max_line + 2) {
      assert_int_equal(c.n_errors, 1);
      assert_int_equal(c.last_err_code, TURN_E_TOOBIG);
      assert_int_equal(c.last_err_line, 2);
    }
  }
  assert_int_equal(c.n_errors, 1);
  assert_int_equal(feed_copy(&c, "xx\r\n", 4), TURN_OK);
  assert_int_equal(c.n_errors, 1);
  assert_int_equal(turn_reader_line(c.r), 2);
  assert_int_equal(feed_copy(&c, short_line, sizeof short_line - 1), TURN_OK);
  assert_int_equal(feed_copy(&c, "\n", 1), TURN_OK);
  assert_int_equal(c.n_events, 2);
  assert_int_equal(turn_reader_line(c.r), 3);
  assert_int_equal(turn_reader_finish(c.r, on_event, &c), TURN_OK);
  assert_int_equal(c.n_calls, 3);
  rec_fini(&c);
}

/* "As soon as it passes the limit": max_line + 1 bytes, the last not a "\r", can
 * no longer be a line of the stream, so the report must come with that byte. */
static void test_reader_toobig_reported_at_first_byte_past_limit(void **state) {
  (void)state;
  const size_t max_line = 64;
  struct rec c;
  rec_init(&c);
  reader_open(&c, max_line);
  for (size_t i = 1; i <= max_line + 10; i++) {
    assert_int_equal(feed_copy(&c, "x", 1), TURN_OK);
    if (c.n_errors != (i > max_line ? 1u : 0u)) {
      print_error("after %zu bytes of a %zu-byte limit: %zu reports\n", i, max_line,
                  c.n_errors);
      fail();
    }
  }
  assert_int_equal(c.last_err_code, TURN_E_TOOBIG);
  assert_int_equal(c.last_err_line, 1);
  rec_fini(&c);
}

/* An unterminated line of max_line + 1 bytes is too long whatever follows: the
 * end of input must not turn it into a mere partial line. */
static void test_reader_toobig_unterminated_at_limit_plus_one(void **state) {
  (void)state;
  struct text data = {0};
  text_fill(&data, 'x', LIMIT_LEN + 1);
  struct rec c;
  rec_init(&c);
  reader_open(&c, LIMIT_LEN);
  assert_int_equal(feed_copy(&c, data.p, 10), TURN_OK);
  assert_int_equal(feed_copy(&c, data.p + 10, data.len - 10), TURN_OK);
  assert_int_equal(turn_reader_finish(c.r, on_event, &c), TURN_OK);
  assert_int_equal(c.n_errors, 1);
  assert_string_equal(turn_errname(c.last_err_code), "E_TOOBIG");
  rec_fini(&c);
  free(data.p);
}

/* A line of exactly max_line bytes then "\r", fed without its newline, waits. */
static void test_reader_max_line_with_cr_in_pieces(void **state) {
  (void)state;
  struct rec c;
  rec_init(&c);
  reader_open(&c, LIMIT_LEN);
  assert_int_equal(feed_copy(&c, limit_line, 5), TURN_OK);
  assert_int_equal(feed_copy(&c, limit_line + 5, LIMIT_LEN - 5), TURN_OK);
  assert_int_equal(feed_copy(&c, "\r", 1), TURN_OK);
  assert_int_equal(c.n_calls, 0);
  assert_int_equal(feed_copy(&c, "\n", 1), TURN_OK);
  assert_int_equal(c.n_events, 1);
  assert_int_equal(c.n_errors, 0);
  assert_int_equal(turn_reader_finish(c.r, on_event, &c), TURN_OK);
  assert_int_equal(c.n_calls, 1);
  rec_fini(&c);
}

/* Each kind of bad line in the middle is reported with its number and code. */
static void test_reader_bad_lines_in_the_middle(void **state) {
  (void)state;
  static const char data[] =
      "{\"v\":1,\"seq\":0,\"type\":\"turn\",\"turn\":\"t-1\",\"session\":\"s\"}\n"
      "{\"v\":1,\n"
      "{\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":\"a\"}\n"
      "{\"v\":2,\"seq\":2,\"type\":\"text\",\"delta\":\"x\"}\n"
      "{\"v\":1,\"seq\":2,\"type\":\"nope\"}\n"
      "\n"
      "{\"v\":1,\"seq\":2,\"type\":\"text\"}\n"
      "{\"v\":1,\"seq\":2,\"type\":\"text\",\"delta\":5}\n"
      "[1,2]\n"
      "{\"v\":1,\"seq\":2,\"type\":\"end\",\"stop_reason\":\"done\"}\n"
      "not json at all\r\n"
      "{\"v\":1,\"seq\":2,\"type\":\"text\",\"delta\":\"a\0b\"}\n"
      "{\"v\":1,\"seq\":2,\"type\":\"end\",\"stop_reason\":\"end_turn\"}\n";
  static const char want[] =
      "event turn seq=0 line=1 {\"v\":1,\"seq\":0,\"type\":\"turn\",\"turn\":\"t-1\","
      "\"session\":\"s\"}\n"
      "error E_JSON line=2\n"
      "event text seq=1 line=3 {\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":\"a\"}\n"
      "error E_VERSION line=4\n"
      "error E_TYPE line=5\n"
      "error E_MISSING line=7\n"
      "error E_FIELD line=8\n"
      "error E_NOT_OBJECT line=9\n"
      "error E_VALUE line=10\n"
      "error E_JSON line=11\n"
      "error E_JSON line=12\n"
      "event end seq=2 line=13 {\"v\":1,\"seq\":2,\"type\":\"end\",\"stop_reason\":"
      "\"end_turn\"}\n";
  check_every_split(data, sizeof data - 1, TURN_READER_DEFAULT_MAX_LINE, want, 1);
}

static void test_reader_invalid_utf8_is_reported(void **state) {
  (void)state;
  static const char data[] =
      "{\"v\":1,\"seq\":0,\"type\":\"text\",\"delta\":\"\xff\"}\n"             /* 1 */
      "{\"v\":1,\"seq\":0,\"type\":\"text\",\"delta\":\"\xc0\xaf\"}\n"         /* 2 */
      "{\"v\":1,\"seq\":0,\"type\":\"text\",\"delta\":\"\xed\xa0\x80\"}\n"     /* 3 */
      "{\"v\":1,\"seq\":0,\"type\":\"text\",\"delta\":\"\xe2\x82\"}\n"         /* 4 */
      "{\"v\":1,\"seq\":0,\"type\":\"text\",\"delta\":\"\xf4\x90\x80\x80\"}\n" /* 5 */
      "{\"v\":1,\"seq\":0,\"type\":\"text\",\"delta\":\"\x80\"}\n"             /* 6 */
      "{\"v\":1,\"seq\":0,\"type\":\"notice\",\"text\":\"ok \xe2\x82\xac\"}\n"
      "{\"v\":1,\"seq\":0,\"type\":\"text\",\"\xfe\":1,\"delta\":\"a\"}\n" /* 8 */
      "{\"v\":1,\"seq\":0,\"type\":\"text\",\"delta\":\"a\"}\n";
  static const char want[] =
      "error E_UTF8 line=1\n"
      "error E_UTF8 line=2\n"
      "error E_UTF8 line=3\n"
      "error E_UTF8 line=4\n"
      "error E_UTF8 line=5\n"
      "error E_UTF8 line=6\n"
      "event notice seq=0 line=7 {\"v\":1,\"seq\":0,\"type\":\"notice\",\"text\":\"ok "
      "\xe2\x82\xac\"}\n"
      "error E_UTF8 line=8\n"
      "event text seq=0 line=9 {\"v\":1,\"seq\":0,\"type\":\"text\",\"delta\":\"a\"}\n";
  check_every_split(data, sizeof data - 1, TURN_READER_DEFAULT_MAX_LINE, want, 1);
}

static void test_reader_finish_reports_partial_line(void **state) {
  (void)state;
  static const char data[] = "{\"v\":1,\"seq\":0,\"type\":\"text\",\"delta\":\"a\"}\n"
                             "{\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":\"b\"}";
  /* Fed whole and byte by byte: the complete JSON object of line 2 is still only
   * a partial line, never an event. */
  for (int mode = 0; mode < 2; mode++) {
    struct rec c;
    rec_init(&c);
    reader_open(&c, TURN_READER_DEFAULT_MAX_LINE);
    if (mode == 0) {
      assert_int_equal(feed_copy(&c, data, sizeof data - 1), TURN_OK);
    } else {
      for (size_t i = 0; i < sizeof data - 1; i++)
        assert_int_equal(feed_copy(&c, data + i, 1), TURN_OK);
    }
    assert_int_equal(c.n_events, 1);
    assert_int_equal(c.n_errors, 0);
    assert_int_equal(turn_reader_finish(c.r, on_event, &c), TURN_OK);
    assert_int_equal(c.n_events, 1);
    assert_int_equal(c.n_errors, 1);
    assert_int_equal(c.last_err_code, TURN_E_PARTIAL);
    assert_int_equal(c.last_err_line, 2);
    assert_int_equal(turn_reader_line(c.r), 2);
    /* Nothing is left: a second finish reports nothing. */
    assert_int_equal(turn_reader_finish(c.r, on_event, &c), TURN_OK);
    assert_int_equal(c.n_calls, 2);
    rec_fini(&c);
  }
}

static void test_reader_finish_without_partial_is_quiet(void **state) {
  (void)state;
  struct rec c;
  rec_init(&c);
  reader_open(&c, 100);
  assert_int_equal(turn_reader_finish(c.r, on_event, &c), TURN_OK);
  assert_int_equal(feed_copy(&c, "\n\r\n\n", 4), TURN_OK);
  assert_int_equal(turn_reader_line(c.r), 3);
  assert_int_equal(turn_reader_finish(c.r, on_event, &c), TURN_OK);
  assert_int_equal(c.n_calls, 0);
  rec_fini(&c);
}

static void test_reader_finish_returns_callback_stop(void **state) {
  (void)state;
  struct rec c;
  rec_init(&c);
  reader_open(&c, 100);
  c.stop_at = 1;
  c.stop_code = 99;
  assert_int_equal(feed_copy(&c, "{\"v\":1", 6), TURN_OK);
  assert_int_equal(turn_reader_finish(c.r, on_event, &c), 99);
  assert_int_equal(c.last_err_code, TURN_E_PARTIAL);
  rec_fini(&c);
}

/* Five good lines; the callback stops at the second. */
static const char five_lines[] =
    "{\"v\":1,\"seq\":0,\"type\":\"text\",\"delta\":\"a\"}\n"
    "{\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":\"b\"}\n"
    "{\"v\":1,\"seq\":2,\"type\":\"text\",\"delta\":\"c\"}\n"
    "{\"v\":1,\"seq\":3,\"type\":\"text\",\"delta\":\"d\"}\n"
    "{\"v\":1,\"seq\":4,\"type\":\"text\",\"delta\":\"e\"}\n";

static void test_reader_callback_stop_ends_feed(void **state) {
  (void)state;
  struct rec c;
  rec_init(&c);
  reader_open(&c, 1000);
  c.stop_at = 2;
  c.stop_code = 42;
  assert_int_equal(feed_copy(&c, five_lines, sizeof five_lines - 1), 42);
  assert_int_equal(c.n_calls, 2);
  assert_int_equal(c.n_events, 2);
  rec_fini(&c);

  /* One byte at a time: only the byte that completes line 2 returns the stop. */
  rec_init(&c);
  reader_open(&c, 1000);
  c.stop_at = 2;
  c.stop_code = -7;
  size_t second_nl = strchr(strchr(five_lines, '\n') + 1, '\n') - five_lines;
  for (size_t i = 0; i <= second_nl; i++)
    assert_int_equal(feed_copy(&c, five_lines + i, 1), i == second_nl ? -7 : TURN_OK);
  assert_int_equal(c.n_calls, 2);
  rec_fini(&c);

  /* Split inside line 2: the stop comes from the buffered line. */
  rec_init(&c);
  reader_open(&c, 1000);
  c.stop_at = 2;
  c.stop_code = 5;
  assert_int_equal(feed_copy(&c, five_lines, second_nl - 3), TURN_OK);
  assert_int_equal(feed_copy(&c, five_lines + second_nl - 3, 20), 5);
  assert_int_equal(c.n_calls, 2);
  rec_fini(&c);
}

static void test_reader_callback_stop_on_error(void **state) {
  (void)state;
  static const char data[] =
      "garbage\n{\"v\":1,\"seq\":0,\"type\":\"text\",\"delta\":\"a\"}\n";
  struct rec c;
  rec_init(&c);
  reader_open(&c, 1000);
  c.stop_at = 1;
  c.stop_code = 3;
  assert_int_equal(feed_copy(&c, data, sizeof data - 1), 3);
  assert_int_equal(c.n_calls, 1);
  assert_int_equal(c.n_events, 0);
  rec_fini(&c);

  /* An overlong line reported before its newline stops the feed too. */
  rec_init(&c);
  reader_open(&c, 16);
  c.stop_at = 1;
  c.stop_code = 4;
  assert_int_equal(feed_copy(&c, "xxxxxxxx", 8), TURN_OK);
  assert_int_equal(feed_copy(&c, "xxxxxxxxxxxxxxxxxxxxxxxx", 24), 4);
  assert_int_equal(c.n_calls, 1);
  assert_int_equal(c.last_err_code, TURN_E_TOOBIG);
  rec_fini(&c);
}

/* During each callback turn_reader_line is the line being delivered. */
static void test_reader_line_during_callbacks(void **state) {
  (void)state;
  static const char data[] = "\n"
                             "{\"v\":1,\"seq\":0,\"type\":\"text\",\"delta\":\"a\"}\n"
                             "bad\r\n"
                             "\r\n"
                             "{\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":\"b\"}\r\n"
                             "{\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":\"\xff\"}\n"
                             "{\"v\":1,\"seq\":1,\"type";
  static const uint64_t lines[] = {2, 3, 5, 6, 7};
  for (int mode = 0; mode < 2; mode++) {
    struct rec c;
    rec_init(&c);
    c.lines = lines;
    c.n_lines = sizeof lines / sizeof lines[0];
    if (mode == 0)
      run_cuts(&c, data, sizeof data - 1, 1000, NULL, 0);
    else
      run_bytes(&c, data, sizeof data - 1, 1000);
    assert_int_equal(c.n_calls, 5);
    assert_int_equal(c.lines_wrong, 0);
    assert_int_equal(c.line_mismatch, 0);
    rec_fini(&c);
  }
}

/* The same for an overlong line, whole and in pieces that hold no newline. */
static void test_reader_line_during_toobig_callback(void **state) {
  (void)state;
  struct text data = {0};
  text_puts(&data, short_line);
  text_puts(&data, "\n");
  text_fill(&data, 'x', 300);
  text_puts(&data, "\n");
  text_puts(&data, short_line);
  text_puts(&data, "\n");
  static const uint64_t lines[] = {1, 2, 3};
  size_t cuts[] = {sizeof short_line + 100};
  for (int mode = 0; mode < 3; mode++) {
    struct rec c;
    rec_init(&c);
    c.lines = lines;
    c.n_lines = 3;
    if (mode == 0)
      run_cuts(&c, data.p, data.len, 64, NULL, 0);
    else if (mode == 1)
      run_cuts(&c, data.p, data.len, 64, cuts, 1);
    else
      run_bytes(&c, data.p, data.len, 64);
    assert_int_equal(c.n_calls, 3);
    assert_int_equal(c.n_errors, 1);
    assert_int_equal(c.last_err_line, 2);
    if (c.lines_wrong != 0 || c.line_mismatch != 0) {
      print_error("mode %d (0 whole, 1 split, 2 bytes): turn_reader_line was not the "
                  "reported line in %zu callbacks\n",
                  mode, c.lines_wrong);
      fail();
    }
    rec_fini(&c);
  }
  free(data.p);
}

static void test_reader_new_rejects_bad_limits(void **state) {
  (void)state;
  assert_null(turn_reader_new(0, NULL));
  assert_null(turn_reader_new(SIZE_MAX, NULL));
  turn_reader_free(NULL);
  turn_reader *r = turn_reader_new(1, NULL);
  assert_non_null(r);
  assert_int_equal(turn_reader_line(r), 0);
  turn_reader_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reader_example_fed_whole),
      cmocka_unit_test(test_reader_every_split_example),
      cmocka_unit_test(test_reader_every_split_example_crlf),
      cmocka_unit_test(test_reader_every_split_utf8_and_blank_lines),
      cmocka_unit_test(test_reader_every_split_bad_lines),
      cmocka_unit_test(test_reader_every_split_long_line),
      cmocka_unit_test(test_reader_max_line_exact_is_accepted),
      cmocka_unit_test(test_reader_max_line_plus_one_is_toobig),
      cmocka_unit_test(test_reader_only_last_cr_is_dropped),
      cmocka_unit_test(test_reader_toobig_lines_numbered),
      cmocka_unit_test(test_reader_toobig_reported_once_in_pieces),
      cmocka_unit_test(test_reader_toobig_reported_at_first_byte_past_limit),
      cmocka_unit_test(test_reader_toobig_unterminated_at_limit_plus_one),
      cmocka_unit_test(test_reader_max_line_with_cr_in_pieces),
      cmocka_unit_test(test_reader_bad_lines_in_the_middle),
      cmocka_unit_test(test_reader_invalid_utf8_is_reported),
      cmocka_unit_test(test_reader_finish_reports_partial_line),
      cmocka_unit_test(test_reader_finish_without_partial_is_quiet),
      cmocka_unit_test(test_reader_finish_returns_callback_stop),
      cmocka_unit_test(test_reader_callback_stop_ends_feed),
      cmocka_unit_test(test_reader_callback_stop_on_error),
      cmocka_unit_test(test_reader_line_during_callbacks),
      cmocka_unit_test(test_reader_line_during_toobig_callback),
      cmocka_unit_test(test_reader_new_rejects_bad_limits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
