/* Numbers on the wire do not depend on the host program's locale. ctest runs this
 * with LOCPATH pointing at a de_DE.UTF-8 locale it built (decimal comma), and the
 * test fails rather than skips if that locale cannot be set. */
#include "support.h"

#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

static int enter_comma_locale(void **state) {
  (void)state;
  if (setlocale(LC_ALL, "de_DE.UTF-8") == NULL) return -1;
  return strcmp(localeconv()->decimal_point, ",") == 0 ? 0 : -1;
}

static int leave_comma_locale(void **state) {
  (void)state;
  setlocale(LC_ALL, "C");
  return 0;
}

static void test_locale_encode_writes_a_decimal_point(void **state) {
  (void)state;
  turn_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = TURN_EV_THROTTLED;
  ev.seq = 4;
  ev.throttled.delay_seconds = 2.5;
  turn_buf out;
  turn_buf_init(&out, 256, NULL);
  assert_int_equal(turn_event_encode(&ev, &out), TURN_OK);
  static const char want[] =
      "{\"v\":1,\"seq\":4,\"type\":\"throttled\",\"delay_seconds\":2.5}";
  assert_int_equal(out.len, sizeof want - 1);
  assert_memory_equal(out.data, want, out.len);
  turn_buf_reset(&out);
  ev.throttled.delay_seconds = 1.5e-7;
  assert_int_equal(turn_event_encode(&ev, &out), TURN_OK);
  static const char small[] =
      "{\"v\":1,\"seq\":4,\"type\":\"throttled\",\"delay_seconds\":1.5e-07}";
  assert_int_equal(out.len, sizeof small - 1);
  assert_memory_equal(out.data, small, out.len);
  turn_buf_fini(&out);
}

static void test_locale_parse_reads_a_decimal_point(void **state) {
  (void)state;
  static const char line[] =
      "{\"v\":1,\"seq\":3,\"type\":\"approval\",\"request\":\"a1\","
      "\"tool\":\"lamp_set\",\"tier\":2,\"effect\":\"physical\","
      "\"input\":{},\"truncated\":false,\"expires_at\":1790841900.25}";
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  turn_event ev;
  turn_error err;
  assert_int_equal(turn_event_parse(&ev, &arena, line, sizeof line - 1, &err), TURN_OK);
  assert_true(ev.approval.has_expires_at);
  assert_true(ev.approval.expires_at_s == 1790841900.25);
  turn_arena_fini(&arena);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_locale_encode_writes_a_decimal_point),
      cmocka_unit_test(test_locale_parse_reads_a_decimal_point),
  };
  return cmocka_run_group_tests(tests, enter_comma_locale, leave_comma_locale);
}
