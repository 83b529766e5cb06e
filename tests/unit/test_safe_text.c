/* Text made safe to show (safe_text.c, turn_safe_text): controls and bytes
 * that are not UTF-8 are replaced, the flags add line keeping, bidirectional
 * formatting, U+FFFD and trimming, and a cut falls only between characters.
 * The three programs' uses are pinned here: a provider's error message
 * (TRIM), a tool's summary (BIDI) and the CLI's terminal text (KEEP_LINES |
 * FFFD). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "turn/turn.h"

#include <string.h>

/* turn_safe_text into a NUL-terminated buffer of cap bytes (+1). */
static const char *safe(const char *in, size_t len, size_t cap, unsigned flags) {
  static char out[512];
  assert_true(cap < sizeof out);
  size_t used = 0;
  size_t n = turn_safe_text(out, cap, in, len, flags, &used);
  assert_true(n <= cap);
  assert_true(used <= len);
  out[n] = '\0';
  return out;
}

#define SAFE(lit, cap, flags) safe(lit, sizeof lit - 1, cap, flags)

static void test_safe_text_replaces_controls_with_spaces(void **state) {
  (void)state;
  assert_string_equal(SAFE("plain é text", 100, 0), "plain é text");
  assert_string_equal(SAFE("a\nb\tc\rd\x1b[2Je\x7f", 100, 0), "a b c d [2Je ");
  assert_string_equal(SAFE("c1:\xC2\x85\xC2\x9F!\xC2\xA0", 100, 0), "c1:  !\xC2\xA0");
  assert_string_equal(SAFE("nul\0x", 100, 0), "nul x");
}

static void test_safe_text_replaces_each_byte_that_is_not_utf8(void **state) {
  (void)state;
  assert_string_equal(SAFE("a\xFF\xC3z", 100, 0), "a  z");
  assert_string_equal(SAFE("\xED\xA0\x80!", 100, 0), "   !"); /* a surrogate */
  assert_string_equal(SAFE("\xE2\x82", 100, 0), "  ");        /* cut short */
}

static void test_safe_text_bidi_flag_replaces_reordering_characters(void **state) {
  (void)state;
  const char in[] = "a\xE2\x80\xAE"
                    "b\xE2\x80\xA8"
                    "c\xD8\x9C"
                    "d\xE2\x81\xA6"
                    "e";
  assert_string_equal(safe(in, sizeof in - 1, 100, TURN_SAFE_BIDI), "a b c d e");
  assert_string_equal(safe(in, sizeof in - 1, 100, 0), in); /* kept without it */
}

static void test_safe_text_keep_lines_and_fffd_for_a_terminal(void **state) {
  (void)state;
  unsigned f = TURN_SAFE_KEEP_LINES | TURN_SAFE_FFFD;
  assert_string_equal(SAFE("a\nb\tc\x1b]0;x\x07"
                           "d\xC2\x9B",
                           100, f),
                      "a\nb\tc\xEF\xBF\xBD]0;x\xEF\xBF\xBD"
                      "d\xEF\xBF\xBD");
  assert_string_equal(SAFE("\r", 100, f), "\xEF\xBF\xBD");
}

static void test_safe_text_trim_drops_outer_spaces_after_the_cut(void **state) {
  (void)state;
  assert_string_equal(SAFE("\n  hello \x01 world \r\n", 100, TURN_SAFE_TRIM),
                      "hello   world");
  assert_string_equal(SAFE(" \n\t ", 100, TURN_SAFE_TRIM), "");
  /* The cut counts the leading spaces: trimming comes after it. */
  assert_string_equal(SAFE("   abcdef", 6, TURN_SAFE_TRIM), "abc");
}

static void test_safe_text_cuts_between_characters(void **state) {
  (void)state;
  const char in[] = "ab\xE2\x82\xAC"
                    "cd"; /* ab€cd */
  assert_string_equal(safe(in, sizeof in - 1, 2, 0), "ab");
  assert_string_equal(safe(in, sizeof in - 1, 4, 0), "ab");
  assert_string_equal(safe(in, sizeof in - 1, 5, 0), "ab\xE2\x82\xAC");
  /* A replacement that does not fit is not written either. */
  assert_string_equal(SAFE("ab\x01", 3, TURN_SAFE_FFFD), "ab");
  char out[4];
  size_t used = 99;
  assert_int_equal(turn_safe_text(out, 0, "x", 1, 0, &used), 0);
  assert_int_equal(used, 0);
  assert_int_equal(turn_safe_text(out, sizeof out, "", 0, 0, NULL), 0);
}

static void test_safe_text_goes_on_from_used_in_pieces(void **state) {
  (void)state;
  /* A small buffer at a time gives what one big buffer gives. */
  const char in[] = "x\xE2\x82\xAC\x1b\xF0\x9F\x98\x80y\nz\xFF";
  unsigned f = TURN_SAFE_KEEP_LINES | TURN_SAFE_FFFD;
  char whole[64];
  size_t whole_len = turn_safe_text(whole, sizeof whole, in, sizeof in - 1, f, NULL);
  char joined[64];
  size_t joined_len = 0;
  for (size_t i = 0; i < sizeof in - 1;) {
    char piece[4];
    size_t used;
    size_t n = turn_safe_text(piece, sizeof piece, in + i, sizeof in - 1 - i, f, &used);
    assert_true(used > 0);
    memcpy(joined + joined_len, piece, n);
    joined_len += n;
    i += used;
  }
  assert_int_equal(joined_len, whole_len);
  assert_memory_equal(joined, whole, whole_len);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_safe_text_replaces_controls_with_spaces),
      cmocka_unit_test(test_safe_text_replaces_each_byte_that_is_not_utf8),
      cmocka_unit_test(test_safe_text_bidi_flag_replaces_reordering_characters),
      cmocka_unit_test(test_safe_text_keep_lines_and_fffd_for_a_terminal),
      cmocka_unit_test(test_safe_text_trim_drops_outer_spaces_after_the_cut),
      cmocka_unit_test(test_safe_text_cuts_between_characters),
      cmocka_unit_test(test_safe_text_goes_on_from_used_in_pieces),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
