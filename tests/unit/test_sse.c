/* The text/event-stream parser (src/agent/sse.c). Every stream is fed whole, one
 * byte at a time and split in two at every offset, and must give the same events
 * and the same result each way: a line end split across feeds (a CR closing one
 * feed and its LF opening the next) is still one line end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/provider.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The events one run dispatched, written as name{data} one after another. */
struct log {
  char *p;
  size_t len, cap;
  int n; /* events */
};

static void log_put(struct log *l, const char *data, size_t len) {
  if (len > l->cap - l->len) {
    size_t cap = l->cap < 256 ? 256 : l->cap;
    while (len > cap - l->len)
      cap *= 2;
    char *p = realloc(l->p, cap);
    assert_non_null(p);
    l->p = p;
    l->cap = cap;
  }
  if (len > 0) memcpy(l->p + l->len, data, len);
  l->len += len;
}

static void on_event(void *ctx, const char *event, const char *data, size_t len) {
  struct log *l = ctx;
  assert_non_null(event);
  assert_non_null(data);
  assert_true(event[0] != '\0'); /* an empty name is reported as "message" */
  assert_int_equal(data[len], '\0');
  log_put(l, event, strlen(event));
  log_put(l, "{", 1);
  log_put(l, data, len);
  log_put(l, "}", 1);
  l->n++;
}

/* Feeds stream in pieces cut at cuts[0..n_cuts) (ascending) and finishes. The
 * result is the last feed's: once a feed fails, every later one must fail too. */
static int run(const char *stream, size_t len, size_t max, const size_t *cuts,
               size_t n_cuts, struct log *l) {
  memset(l, 0, sizeof *l);
  struct sse *p = sse_new(max, on_event, l);
  assert_non_null(p);
  int rv = 0;
  size_t off = 0;
  for (size_t k = 0; k <= n_cuts; k++) {
    size_t end = k < n_cuts ? cuts[k] : len;
    int r = sse_feed(p, stream + off, end - off);
    if (rv < 0) assert_int_equal(r, -1); /* the error is sticky */
    rv = r;
    off = end;
  }
  sse_finish(p);
  sse_free(p);
  return rv;
}

/* memcmp() may not be given NULL, which an empty log holds. */
static bool same(const char *a, size_t a_len, const char *b, size_t b_len) {
  return a_len == b_len && (a_len == 0 || memcmp(a, b, a_len) == 0);
}

static void expect_same(const struct log *got, const struct log *want, const char *how,
                        size_t at) {
  if (!same(got->p, got->len, want->p, want->len)) {
    print_error("%s (at %zu) gave %.*s\nwhole gave %.*s\n", how, at, (int)got->len,
                got->p, (int)want->len, want->p);
    fail();
  }
}

/* Checks stream's events (want, as name{data}...) and result against every way
 * of feeding it. */
static void expect_events_n(const char *stream, size_t len, size_t max, const char *want,
                            size_t want_len, int want_rv) {
  struct log whole;
  assert_int_equal(run(stream, len, max, NULL, 0, &whole), want_rv);
  if (!same(whole.p, whole.len, want, want_len)) {
    print_error("got  %.*s\nwant %.*s\n", (int)whole.len, whole.p, (int)want_len, want);
    free(whole.p);
    fail();
  }

  /* One byte at a time. */
  size_t *cuts = malloc(len > 0 ? len * sizeof *cuts : 1);
  assert_non_null(cuts);
  for (size_t i = 0; i < len; i++)
    cuts[i] = i + 1;
  struct log bytes;
  assert_int_equal(run(stream, len, max, cuts, len, &bytes), want_rv);
  expect_same(&bytes, &whole, "one byte at a time", 0);
  free(bytes.p);
  free(cuts);

  /* In two at every offset, with an empty feed at either end too. */
  for (size_t at = 0; at <= len; at++) {
    struct log split;
    assert_int_equal(run(stream, len, max, &at, 1, &split), want_rv);
    expect_same(&split, &whole, "split", at);
    free(split.p);
  }
  free(whole.p);
}

static void expect_events(const char *stream, size_t max, const char *want, int want_rv) {
  expect_events_n(stream, strlen(stream), max, want, strlen(want), want_rv);
}

#define NO_LIMIT (1u << 20)

static void test_sse_events_with_names_and_default_name(void **state) {
  (void)state;
  expect_events("data: hello\n\n"
                "event: ping\ndata: {}\n\n"
                "data: after\n\n",
                NO_LIMIT, "message{hello}ping{{}}message{after}", 0);
}

static void test_sse_lf_crlf_and_cr_line_ends_mixed(void **state) {
  (void)state;
  expect_events("data: a\r\ndata: b\rdata: c\n\r\n"
                "event: x\rdata: y\r\r"
                "data: z\r\n\r\n",
                NO_LIMIT, "message{a\nb\nc}x{y}message{z}", 0);
}

/* A CR at the end of one feed and an LF at the start of the next are one line end:
 * counted as two, the LF would be a blank line that dispatches "a" alone. */
static void test_sse_crlf_split_across_feeds_is_one_line_end(void **state) {
  (void)state;
  const char *stream = "data: a\r\ndata: b\r\n\r\n";
  size_t cut = strlen("data: a\r");
  struct log l;
  assert_int_equal(run(stream, strlen(stream), NO_LIMIT, &cut, 1, &l), 0);
  assert_int_equal(l.n, 1);
  assert_int_equal(l.len, strlen("message{a\nb}"));
  assert_memory_equal(l.p, "message{a\nb}", l.len);
  free(l.p);

  /* CR, CR, LF in three feeds: a line end, then a blank line ended by CRLF, which
   * dispatches once; the LF is not a second blank line. */
  const char *s2 = "data: a\r\r\ndata: b\n\n";
  size_t cuts[] = {strlen("data: a\r"), strlen("data: a\r\r")};
  assert_int_equal(run(s2, strlen(s2), NO_LIMIT, cuts, 2, &l), 0);
  assert_int_equal(l.len, strlen("message{a}message{b}"));
  assert_memory_equal(l.p, "message{a}message{b}", l.len);
  free(l.p);
}

static void test_sse_bom_at_start_is_skipped_once(void **state) {
  (void)state;
  expect_events("\xef\xbb\xbf"
                "data: x\n\n",
                NO_LIMIT, "message{x}", 0);
  /* Only the first: a second one makes the field name "\xef\xbb\xbf" "data",
   * which is unknown, so that event has no data. */
  expect_events("\xef\xbb\xbf\xef\xbb\xbf"
                "data: x\n\ndata: y\n\n",
                NO_LIMIT, "message{y}", 0);
  /* Two bytes of a BOM are not one: they start the first line. */
  expect_events("\xef\xbb"
                "data: x\n\ndata: y\n\n",
                NO_LIMIT, "message{y}", 0);
  expect_events("\xef\xbb\n"
                "data: y\n\n",
                NO_LIMIT, "message{y}", 0);
  /* A BOM later in the stream is data like any other bytes. */
  expect_events("data: \xef\xbb\xbf\n\n", NO_LIMIT, "message{\xef\xbb\xbf}", 0);
}

static void test_sse_comments_are_ignored(void **state) {
  (void)state;
  expect_events(": ping\n:\ndata: a\n: in the middle\ndata: b\n\n"
                ": a comment alone\n\n"
                ":\r\n\r\n",
                NO_LIMIT, "message{a\nb}", 0);
}

static void test_sse_field_forms(void **state) {
  (void)state;
  /* No colon: the field's value is empty, so "data" alone is an empty data line,
   * and an empty data buffer that saw a data line still dispatches. */
  expect_events("data\n\n", NO_LIMIT, "message{}", 0);
  expect_events("data:\n\n", NO_LIMIT, "message{}", 0);
  expect_events("data\ndata\n\n", NO_LIMIT, "message{\n}", 0);
  /* One space after the colon goes, no more, and trailing spaces stay. */
  expect_events("data:x\n\ndata:  x \n\n", NO_LIMIT, "message{x}message{ x }", 0);
  /* The value may hold colons. */
  expect_events("data: a: b:c\n\n", NO_LIMIT, "message{a: b:c}", 0);
  /* Field names are exact and case-sensitive. */
  expect_events("DATA: a\n\ndata : b\n\nData: c\n\n", NO_LIMIT, "", 0);
  /* id, retry and unknown fields are ignored, also between data lines. */
  expect_events("id: 7\nretry: 100\ndata: a\nfoo: bar\nid\ndata: b\n\n", NO_LIMIT,
                "message{a\nb}", 0);
  /* "event" without a value is the default name. */
  expect_events("event\ndata: a\n\nevent:\ndata: b\n\n", NO_LIMIT, "message{a}message{b}",
                0);
}

/* llama.cpp's server says why a stream failed in an "error" line: read as an
 * "error" event with that data, within the same limit. */
static void test_sse_error_line_is_an_error_event(void **state) {
  (void)state;
  expect_events("data: a\n\nerror: {\"code\":400}\n\ndata: [DONE]\n\n", NO_LIMIT,
                "message{a}error{{\"code\":400}}message{[DONE]}", 0);
  expect_events("error: 012345678\n\n", 16, "error{012345678}", 0);
  expect_events("error: 0123456789\n\n", 16, "", -1);
  /* A bare "error" is no such line (it would add more than its own length). */
  expect_events("data:0123456789A\nerror\n\n", 16, "message{0123456789A}", 0);
}

static void test_sse_event_name_resets_after_each_event(void **state) {
  (void)state;
  expect_events("event: a\ndata: 1\n\ndata: 2\n\n", NO_LIMIT, "a{1}message{2}", 0);
  /* The last "event" line wins, wherever it is among the data lines. */
  expect_events("event: a\ndata: 1\nevent: b\n\n", NO_LIMIT, "b{1}", 0);
  /* A blank line with no data dispatches nothing but still resets the name. */
  expect_events("event: a\n\ndata: 2\n\n", NO_LIMIT, "message{2}", 0);
}

static void test_sse_unfinished_event_is_dropped_at_the_end(void **state) {
  (void)state;
  expect_events("data: a\n\ndata: b\n", NO_LIMIT, "message{a}", 0);
  expect_events("data: a\n\ndata: b", NO_LIMIT, "message{a}", 0);
  expect_events("data: a\n\ndata: b\r", NO_LIMIT, "message{a}", 0);
  expect_events("", NO_LIMIT, "", 0);
}

static void test_sse_data_may_hold_nul_bytes(void **state) {
  (void)state;
  static const char stream[] = "data: a\0b\n\n";
  static const char want[] = "message{a\0b}";
  expect_events_n(stream, sizeof stream - 1, NO_LIMIT, want, sizeof want - 1, 0);
}

/* The limit counts the event's data and name and the line being read. */
static void test_sse_limit_is_an_error_that_sticks(void **state) {
  (void)state;
  /* "data: 0123456789" is 16 bytes: at the limit it passes, one more fails. */
  expect_events("data: 0123456789\n\n", 16, "message{0123456789}", 0);
  expect_events("data: 01234567890\n\n", 16, "", -1);
  /* Events before the one that breaks it are dispatched; none after. */
  expect_events("data: a\n\ndata: 0123456789abcdef\n\ndata: b\n\n", 16, "message{a}", -1);
  /* Data lines add up: 5 bytes of data, then an 11-byte line fits exactly. */
  expect_events("data: 12345\ndata: 12345\n\n", 16, "message{12345\n12345}", 0);
  expect_events("data: 12345\ndata: 12345\ndata: 1\n\n", 16, "", -1);
  /* The name counts as well. */
  expect_events("event: abcdefghi\ndata: 1\n\n", 16, "abcdefghi{1}", 0);
  expect_events("event: abcdefghi\ndata: 12\n\n", 16, "", -1);
  /* A long line is refused even when it is a comment: it would be buffered. */
  expect_events(": 0123456789abcdef\ndata: a\n\n", 16, "", -1);
  /* An unterminated long line fails as soon as it passes, not at its end. */
  struct log l;
  assert_int_equal(run("data: 0123456789abcdef", 22, 16, NULL, 0, &l), -1);
  assert_int_equal(l.n, 0);
  free(l.p);
}

static void test_sse_nothing_is_dispatched_after_the_error(void **state) {
  (void)state;
  struct log l = {NULL, 0, 0, 0};
  struct sse *p = sse_new(8, on_event, &l);
  assert_non_null(p);
  assert_int_equal(sse_feed(p, "data: 1\n\n", 9), 0);
  assert_int_equal(l.n, 1);
  assert_int_equal(sse_feed(p, "data: 123456\n\n", 14), -1);
  assert_int_equal(sse_feed(p, "data: 2\n\n", 9), -1);
  assert_int_equal(sse_feed(p, "", 0), -1);
  sse_finish(p);
  assert_int_equal(l.n, 1);
  sse_free(p);
  free(l.p);
  sse_free(NULL);
}

/* A realistic stream with every construct at once, so the every-split check
 * crosses each of them. */
static void test_sse_every_split_of_a_mixed_stream(void **state) {
  (void)state;
  expect_events("\xef\xbb\xbf: hello\r\n"
                "event: message_start\r\ndata: {\"a\":1}\r\n\r\n"
                "event: ping\rdata: {}\r\r"
                "id: 3\ndata: line 1\ndata\ndata:line 3\n\n"
                "event: x\n\n"
                ":\n"
                "data: last\r\n\r\n"
                "data: dropped",
                NO_LIMIT,
                "message_start{{\"a\":1}}ping{{}}message{line 1\n\nline 3}message{last}",
                0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sse_events_with_names_and_default_name),
      cmocka_unit_test(test_sse_lf_crlf_and_cr_line_ends_mixed),
      cmocka_unit_test(test_sse_crlf_split_across_feeds_is_one_line_end),
      cmocka_unit_test(test_sse_bom_at_start_is_skipped_once),
      cmocka_unit_test(test_sse_comments_are_ignored),
      cmocka_unit_test(test_sse_error_line_is_an_error_event),
      cmocka_unit_test(test_sse_field_forms),
      cmocka_unit_test(test_sse_event_name_resets_after_each_event),
      cmocka_unit_test(test_sse_unfinished_event_is_dropped_at_the_end),
      cmocka_unit_test(test_sse_data_may_hold_nul_bytes),
      cmocka_unit_test(test_sse_limit_is_an_error_that_sticks),
      cmocka_unit_test(test_sse_nothing_is_dispatched_after_the_error),
      cmocka_unit_test(test_sse_every_split_of_a_mixed_stream),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
