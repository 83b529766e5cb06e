/* UTF-8 decoding and cutting (utf8.c's public turn_utf8_decode and
 * turn_utf8_cut): the decoder is as strict as the protocol (no overlongs, no
 * surrogates, nothing past U+10FFFF, nothing cut short), and a cut never splits
 * a character. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "turn/turn.h"

#include <string.h>

static size_t decode(const char *s, uint32_t *cp) {
  return turn_utf8_decode(s, strlen(s), cp);
}

static void test_utf8_decode_gives_each_length_and_code_point(void **state) {
  (void)state;
  uint32_t cp = 0;
  assert_int_equal(decode("A", &cp), 1);
  assert_int_equal(cp, 0x41);
  assert_int_equal(turn_utf8_decode("\0", 1, &cp), 1); /* NUL is a character */
  assert_int_equal(cp, 0);
  assert_int_equal(decode("\xC2\x80", &cp), 2);
  assert_int_equal(cp, 0x80);
  assert_int_equal(decode("\xC3\xA9x", &cp), 2);
  assert_int_equal(cp, 0xE9);
  assert_int_equal(decode("\xE2\x80\xAE", &cp), 3);
  assert_int_equal(cp, 0x202E);
  assert_int_equal(decode("\xEF\xBF\xBD", &cp), 3);
  assert_int_equal(cp, 0xFFFD);
  assert_int_equal(decode("\xF0\x9F\x98\x80", &cp), 4);
  assert_int_equal(cp, 0x1F600);
  assert_int_equal(decode("\xF4\x8F\xBF\xBF", &cp), 4);
  assert_int_equal(cp, 0x10FFFF);
  assert_int_equal(decode("\xC3\xA9", NULL), 2); /* cp may be NULL */
}

static void test_utf8_decode_refuses_what_is_not_utf8(void **state) {
  (void)state;
  uint32_t cp = 7;
  assert_int_equal(turn_utf8_decode("", 0, &cp), 0);
  assert_int_equal(decode("\x80", &cp), 0);             /* a continuation */
  assert_int_equal(decode("\xC0\xAF", &cp), 0);         /* overlong '/' */
  assert_int_equal(decode("\xC1\xBF", &cp), 0);         /* overlong */
  assert_int_equal(decode("\xE0\x80\xAF", &cp), 0);     /* overlong */
  assert_int_equal(decode("\xED\xA0\x80", &cp), 0);     /* a surrogate */
  assert_int_equal(decode("\xF0\x80\x80\xAF", &cp), 0); /* overlong */
  assert_int_equal(decode("\xF4\x90\x80\x80", &cp), 0); /* past U+10FFFF */
  assert_int_equal(decode("\xF5\x80\x80\x80", &cp), 0);
  assert_int_equal(decode("\xFF", &cp), 0);
  assert_int_equal(decode("\xC3x", &cp), 0);                 /* no continuation */
  assert_int_equal(turn_utf8_decode("\xE2\x80", 2, &cp), 0); /* cut short */
  assert_int_equal(turn_utf8_decode("\xF0\x9F\x98\x80", 3, &cp), 0);
  assert_int_equal(cp, 7); /* untouched on refusal */
}

static void test_utf8_cut_never_splits_a_character(void **state) {
  (void)state;
  const char *s = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z"; /* a é € 😀 z */
  size_t len = strlen(s);
  /* The character boundaries: every cut lands on the last one at or below max. */
  static const size_t bounds[] = {0, 1, 3, 6, 10, 11};
  for (size_t max = 0; max <= len + 2; max++) {
    size_t want = 0;
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++)
      if (bounds[i] <= max) want = bounds[i];
    assert_int_equal(turn_utf8_cut(s, len, max), want);
  }
  assert_int_equal(turn_utf8_cut(s, 3, 2), 1); /* len bounds what is looked at */
  assert_int_equal(turn_utf8_cut("", 0, 5), 0);
}

static void test_utf8_cut_moves_back_at_most_three_bytes(void **state) {
  (void)state;
  /* Not UTF-8: a run of continuation bytes. The cut stays near max, so a
   * caller that cuts in a loop always makes progress. */
  const char s[] = "ab\x80\x80\x80\x80\x80\x80";
  assert_int_equal(turn_utf8_cut(s, sizeof s - 1, 7), 4);
  assert_int_equal(turn_utf8_cut(s, sizeof s - 1, 1), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_utf8_decode_gives_each_length_and_code_point),
      cmocka_unit_test(test_utf8_decode_refuses_what_is_not_utf8),
      cmocka_unit_test(test_utf8_cut_never_splits_a_character),
      cmocka_unit_test(test_utf8_cut_moves_back_at_most_three_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
