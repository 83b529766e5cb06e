/* JSON output (json_write.c): doubles exactly as Python's repr writes them, so that
 * lines made by the protocol's Python half round-trip byte for byte, and strings in
 * the canonical escaping, where invalid UTF-8 becomes U+FFFD and the output is
 * always valid JSON. The expected texts below were produced by CPython's repr()
 * and by jansson reading the output back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "json_scan.h"
#include "json_write.h"
#include "number.h"
#include "support.h"

#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ doubles */

static const struct {
  double v;
  const char *repr;
} reprs[] = {
    {0.0, "0.0"},
    {-0.0, "-0.0"},
    {1.0, "1.0"},
    {-1.5, "-1.5"},
    {0.1, "0.1"},
    {0.5, "0.5"},
    {2.5, "2.5"},
    {0.3, "0.3"},
    {0.1 + 0.2, "0.30000000000000004"},
    {3.14159, "3.14159"},
    {4.35, "4.35"},
    {123.456, "123.456"},
    {100.0, "100.0"},
    {1790841900.0, "1790841900.0"},
    {1e15, "1000000000000000.0"},
    {9007199254740992.0, "9007199254740992.0"},
    {9999999999999998.0, "9999999999999998.0"},
    {1e16, "1e+16"},
    {1.5e16, "1.5e+16"},
    {123456789012345680.0, "1.2345678901234568e+17"},
    {1e22, "1e+22"},
    {1e100, "1e+100"},
    {1.7976931348623157e+308, "1.7976931348623157e+308"},
    {1e-4, "0.0001"},
    {0.00011, "0.00011"},
    {1e-5, "1e-05"},
    {1e-7, "1e-07"},
    {2.2250738585072014e-308, "2.2250738585072014e-308"},
    {1e-320, "1e-320"},
    {5e-324, "5e-324"},
    {-5e-324, "-5e-324"},
};

static void test_json_write_double_matches_python_repr(void **state) {
  (void)state;
  int bad = 0;
  for (size_t i = 0; i < sizeof reprs / sizeof reprs[0]; i++) {
    char out[32];
    memset(out, 'X', sizeof out);
    size_t n = turn__format_double(reprs[i].v, out);
    if (n != strlen(reprs[i].repr) || strcmp(out, reprs[i].repr) != 0) {
      print_message("repr %s: got \"%.*s\" (%zu)\n", reprs[i].repr, (int)n, out, n);
      bad++;
    }
  }
  assert_int_equal(bad, 0);
}

/* What is written reads back as the same double, bit for bit. */
static void test_json_write_double_round_trips(void **state) {
  (void)state;
  static const double values[] = {
      0.1,     1.0 / 3,  2.0 / 3,  1e23,      5e-324, DBL_MIN, DBL_MAX, 1e-4,
      9.99e-5, 1e16 - 2, 1e16 + 2, 123.0e200, 0.7,    1e21,    1e-300,  299792458.0};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    for (int sign = 0; sign < 2; sign++) {
      double v = sign ? -values[i] : values[i];
      char out[32];
      size_t n = turn__format_double(v, out);
      assert_true(n > 0 && n < 32);
      assert_int_equal(strlen(out), n);
      double back = strtod(out, NULL);
      assert_memory_equal(&back, &v, sizeof v);
    }
  }
}

static void test_json_write_double_refuses_non_finite(void **state) {
  (void)state;
  char out[32];
  assert_int_equal(turn__format_double(INFINITY, out), 0);
  assert_int_equal(turn__format_double(-INFINITY, out), 0);
  assert_int_equal(turn__format_double(NAN, out), 0);

  turn_buf b;
  turn_buf_init(&b, 64, NULL);
  assert_int_equal(turn_buf_append(&b, "[", 1), TURN_OK);
  assert_int_equal(turn__json_write_double(&b, NAN), TURN_E_INVALID);
  assert_int_equal(turn__json_write_double(&b, INFINITY), TURN_E_INVALID);
  assert_int_equal(b.len, 1);
  assert_int_equal(turn__json_write_double(&b, 0.5), TURN_OK);
  assert_int_equal(b.len, 4);
  assert_memory_equal(b.data, "[0.5", 4);
  turn_buf_fini(&b);
}

static void test_json_write_integers(void **state) {
  (void)state;
  turn_buf b;
  turn_buf_init(&b, 256, NULL);
  assert_int_equal(turn__json_write_u64(&b, 0), TURN_OK);
  assert_int_equal(turn_buf_append(&b, ",", 1), TURN_OK);
  assert_int_equal(turn__json_write_u64(&b, UINT64_MAX), TURN_OK);
  assert_int_equal(turn_buf_append(&b, ",", 1), TURN_OK);
  assert_int_equal(turn__json_write_i64(&b, INT64_MIN), TURN_OK);
  assert_int_equal(turn_buf_append(&b, ",", 1), TURN_OK);
  assert_int_equal(turn__json_write_i64(&b, -1), TURN_OK);
  assert_int_equal(turn_buf_append(&b, ",", 1), TURN_OK);
  assert_int_equal(turn__json_write_i64(&b, INT64_MAX), TURN_OK);
  const char *want = "0,18446744073709551615,-9223372036854775808,-1,9223372036854775807";
  assert_int_equal(b.len, strlen(want));
  assert_memory_equal(b.data, want, b.len);
  turn_buf_fini(&b);
}

/* ------------------------------------------------------------------ strings */

static const struct {
  const char *in;
  size_t in_len;
  const char *out; /* with its quotes */
} escapes[] = {
#define ESC(in, out) \
  { in, sizeof(in) - 1, out }
    ESC("", "\"\""),
    ESC("abc", "\"abc\""),
    ESC("\"", "\"\\\"\""),
    ESC("\\", "\"\\\\\""),
    ESC("/", "\"/\""),
    ESC("a\"b\\c", "\"a\\\"b\\\\c\""),
    ESC("\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\""),
    ESC("\0", "\"\xEF\xBF\xBD\""), /* no \u0000 in the protocol's JSON: U+FFFD */
    ESC("\x01", "\"\\u0001\""),
    ESC("\x0B", "\"\\u000b\""),
    ESC("\x1F", "\"\\u001f\""),
    ESC("\x1B[0m", "\"\\u001b[0m\""),
    ESC(" ", "\" \""),
    ESC("\x7F", "\"\x7F\""),
    ESC("<script>&'", "\"<script>&'\""),
    ESC("\xC3\xA9", "\"\xC3\xA9\""),
    ESC("\xE2\x82\xAC", "\"\xE2\x82\xAC\""),
    ESC("\xE2\x80\xA8\xE2\x80\xA9", "\"\xE2\x80\xA8\xE2\x80\xA9\""),
    ESC("\xF0\x9F\x98\x80", "\"\xF0\x9F\x98\x80\""),
    ESC("\xF4\x8F\xBF\xBF", "\"\xF4\x8F\xBF\xBF\""),
    ESC("\xEF\xBF\xBD", "\"\xEF\xBF\xBD\""),
    /* invalid UTF-8: one U+FFFD for each byte that starts no valid sequence */
    ESC("\xFF", "\"\xEF\xBF\xBD\""),
    ESC("a\x80"
        "b",
        "\"a\xEF\xBF\xBD"
        "b\""),
    ESC("\xC3", "\"\xEF\xBF\xBD\""),
    ESC("\xC3(", "\"\xEF\xBF\xBD(\""),
    ESC("\xC0\xAF", "\"\xEF\xBF\xBD\xEF\xBF\xBD\""),
    ESC("\xED\xA0\x80", "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\""),
    ESC("\xE2\x82", "\"\xEF\xBF\xBD\xEF\xBF\xBD\""),
    ESC("\xF4\x90\x80\x80", "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\""),
    ESC("ok\xF5!", "\"ok\xEF\xBF\xBD!\""),
    /* long enough for the 8-byte fast path, with specials in and after it */
    ESC("abcdefghijklmnop", "\"abcdefghijklmnop\""),
    ESC("abcdefg\"hijklmnop", "\"abcdefg\\\"hijklmnop\""),
    ESC("abcdefgh\nijklmnop", "\"abcdefgh\\nijklmnop\""),
    ESC("abcdefghijklmno\xFF", "\"abcdefghijklmno\xEF\xBF\xBD\""),
    ESC("abcdefg\xC3\xA9hijklmnop", "\"abcdefg\xC3\xA9hijklmnop\""),
#undef ESC
};

static void test_json_write_str_escaping_table(void **state) {
  (void)state;
  int bad = 0;
  for (size_t i = 0; i < sizeof escapes / sizeof escapes[0]; i++) {
    turn_buf b;
    turn_buf_init(&b, 1024, NULL);
    int rv = turn__json_write_str(&b, escapes[i].in, escapes[i].in_len);
    size_t want = strlen(escapes[i].out);
    if (rv != TURN_OK || b.len != want || memcmp(b.data, escapes[i].out, want) != 0) {
      print_message("case %zu: got %s \"%.*s\"\n", i, turn_errname(rv), (int)b.len,
                    b.data != NULL ? b.data : "");
      bad++;
    }
    turn_buf_fini(&b);
  }
  assert_int_equal(bad, 0);
}

/* Writes in[0..len) and reads it back with jansson (the oracle) and the scanner;
 * returns 1 when the output is not one valid JSON string, or when valid UTF-8 did
 * not come back unchanged. */
static int written_reads_back(const char *in, size_t len, turn_buf *b,
                              turn_arena *arena) {
  turn_buf_reset(b);
  if (turn__json_write_str(b, in, len) != TURN_OK) return 1;
  int bad = 0;
  json_error_t e;
  json_t *j = json_loadb(b->data, b->len, JSON_DECODE_ANY, &e);
  /* NUL is written as U+FFFD (the scanner and jansson refuse \u0000), so text
   * with NUL comes back changed, like invalid UTF-8. */
  bool has_nul = memchr(in, '\0', len) != NULL;
  if (j == NULL || !json_is_string(j) ||
      turn__json_validate(b->data, b->len, arena) != TURN_OK) {
    bad = 1;
  } else {
    json_t *probe = json_stringn(in, len); /* NULL iff in is not valid UTF-8 */
    if (probe != NULL && !has_nul &&
        (json_string_length(j) != len || memcmp(json_string_value(j), in, len) != 0))
      bad = 1;
    json_decref(probe);
  }
  json_decref(j);
  turn_arena_reset(arena);
  return bad;
}

/* Every byte and every pair of bytes (alone and before an ASCII byte) gives valid
 * JSON. */
static void test_json_write_str_output_always_parses(void **state) {
  (void)state;
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  turn_buf b;
  turn_buf_init(&b, 64, NULL);
  int bad = 0;
  for (unsigned x = 0; x < 256; x++) {
    char in[1] = {(char)x};
    bad += written_reads_back(in, 1, &b, &arena);
  }
  for (unsigned x = 0; x < 256 * 256; x++) {
    char in[3] = {(char)(x >> 8), (char)(x & 0xFF), 'z'};
    bad += written_reads_back(in, 2, &b, &arena);
    bad += written_reads_back(in, 3, &b, &arena);
  }
  turn_buf_fini(&b);
  turn_arena_fini(&arena);
  assert_int_equal(bad, 0);
}

/* A cap that holds the escaped text exactly is enough (the writer counts instead
 * of assuming 6 bytes per input byte); one byte less is TURN_E_TOOBIG, with the
 * buffer as it was. */
static void test_json_write_str_fits_exact_cap(void **state) {
  (void)state;
  const char *in = "a\nb\x01\xFF\xC3\xA9";
  const char *want = "[\"a\\nb\\u0001\xEF\xBF\xBD\xC3\xA9\"";
  size_t want_len = strlen(want);
  turn_buf b;
  turn_buf_init(&b, want_len, NULL);
  assert_int_equal(turn_buf_append(&b, "[", 1), TURN_OK);
  assert_int_equal(turn__json_write_str(&b, in, strlen(in)), TURN_OK);
  assert_int_equal(b.len, want_len);
  assert_memory_equal(b.data, want, want_len);
  turn_buf_fini(&b);

  turn_buf_init(&b, want_len - 1, NULL);
  assert_int_equal(turn_buf_append(&b, "[", 1), TURN_OK);
  assert_int_equal(turn__json_write_str(&b, in, strlen(in)), TURN_E_TOOBIG);
  assert_int_equal(b.len, 1);
  assert_memory_equal(b.data, "[", 1);
  turn_buf_fini(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_json_write_double_matches_python_repr),
      cmocka_unit_test(test_json_write_double_round_trips),
      cmocka_unit_test(test_json_write_double_refuses_non_finite),
      cmocka_unit_test(test_json_write_integers),
      cmocka_unit_test(test_json_write_str_escaping_table),
      cmocka_unit_test(test_json_write_str_output_always_parses),
      cmocka_unit_test(test_json_write_str_fits_exact_cap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
