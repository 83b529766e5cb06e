/* Input fields (input_field.c): a tool input is made compact and canonical, goes
 * inline when that text is at most TURN_INPUT_LIMIT bytes, and otherwise travels
 * as a preview of its first TURN_INPUT_LIMIT code points, never cutting a
 * character in two. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "support.h"
#include "turn/turn.h"
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

static turn_arena arena;

static int group_setup(void **state) {
  (void)state;
  turn_arena_init(&arena, NULL);
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  turn_arena_fini(&arena);
  return 0;
}

static int from_json(const char *json, size_t len, turn_input *out, turn_error *err) {
  turn_arena_reset(&arena);
  return turn_input_from_json(out, &arena, json, len, err);
}

/* ------------------------------------------------------------------ compact */

static void test_input_field_compacts_and_canonicalises(void **state) {
  (void)state;
  static const struct {
    const char *in, *out;
  } forms[] = {
      {"{}", "{}"},
      {" \t\r\n{ \t\r\n} \t\r\n", "{}"},
      {"{ \"a\" : [ 1 , 2 ] , \"b\" : { } }", "{\"a\":[1,2],\"b\":{}}"},
      {"{\"a b\":\" x  y \"}", "{\"a b\":\" x  y \"}"}, /* strings keep their spaces */
      {"{\"k\":\"\\u0041\"}", "{\"k\":\"A\"}"},
      {"{\"k\":\"\\/\"}", "{\"k\":\"/\"}"},
      {"{\"\\u0061\\u0062\":1}", "{\"ab\":1}"}, /* keys too */
      {"{\"e\":\"\\u00e9\\u20ac\"}", "{\"e\":\"\xC3\xA9\xE2\x82\xAC\"}"},
      {"{\"s\":\"\\uD83D\\uDE00\"}", "{\"s\":\"\xF0\x9F\x98\x80\"}"},
      {"{\"t\":\"\\u0009\\u000A\\u0008\\u000c\\u000D\"}", "{\"t\":\"\\t\\n\\b\\f\\r\"}"},
      {"{\"c\":\"\\u001F\\u0001\"}", "{\"c\":\"\\u001f\\u0001\"}"},
      {"{\"q\":\"\\\"\\\\\"}", "{\"q\":\"\\\"\\\\\"}"},
      {"{\"d\":\"\\u007f\"}", "{\"d\":\"\x7F\"}"},
      {"{\"n\":1.50E+3,\"m\":-0,\"z\":0.0e-0}", "{\"n\":1.50E+3,\"m\":-0,\"z\":0.0e-0}"},
      {"{\"a\" : true ,\"b\": false, \"c\" :null}",
       "{\"a\":true,\"b\":false,\"c\":null}"},
      {"{\"x\":[ [ ] , { \"y\" : [ \"\\u0020\" ] } ]}", "{\"x\":[[],{\"y\":[\" \"]}]}"},
      {"{\"name\": \"desk\", \"on\": true}", "{\"name\":\"desk\",\"on\":true}"},
  };
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
    turn_input in;
    turn_error err = {0, NULL, 0, 0};
    int rv = from_json(forms[i].in, strlen(forms[i].in), &in, &err);
    assert_int_equal(rv, TURN_OK);
    if (!turn_str_eq(in.json, turn_str_c(forms[i].out)))
      print_message("%s -> %.*s, want %s\n", forms[i].in, (int)in.json.len, in.json.p,
                    forms[i].out);
    assert_false(in.truncated);
    assert_true(turn_str_eq(in.json, turn_str_c(forms[i].out)));
    assert_int_equal(in.preview.len, 0);
  }
}

/* The compact text goes straight into an event and parses back unchanged. */
static void test_input_field_result_encodes_into_an_event(void **state) {
  (void)state;
  const char *raw = "{ \"path\" : \"/tmp/a\\u00e9\" ,\n \"n\" : [1, 2] }";
  turn_input in;
  assert_int_equal(from_json(raw, strlen(raw), &in, NULL), TURN_OK);
  turn_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = TURN_EV_TOOL_INPUT;
  ev.tool_input.id = TURN_STR("u1");
  ev.tool_input.tool = TURN_STR("fs_read");
  ev.tool_input.input = in;
  turn_buf out;
  turn_buf_init(&out, 4096, NULL);
  assert_int_equal(turn_event_encode(&ev, &out), TURN_OK);
  const char *want = "{\"v\":1,\"seq\":0,\"type\":\"tool_input\",\"id\":\"u1\",\"tool\":"
                     "\"fs_read\",\"input\":{\"path\":\"/tmp/a\xC3\xA9\",\"n\":[1,2]},"
                     "\"truncated\":false}";
  assert_int_equal(out.len, strlen(want));
  assert_memory_equal(out.data, want, out.len);
  turn_buf_fini(&out);
}

/* ------------------------------------------------------------------ the limit */

/* {"a":"<fill>"} is 8 bytes around its fill. */
static char *object_with(const char *fill, size_t fill_len, size_t *len) {
  char *b = malloc(fill_len + 9);
  assert_non_null(b);
  memcpy(b, "{\"a\":\"", 6);
  memcpy(b + 6, fill, fill_len);
  memcpy(b + 6 + fill_len, "\"}", 2);
  *len = fill_len + 8;
  b[*len] = '\0';
  return b;
}

static char *ascii_fill(size_t n) {
  char *f = malloc(n + 1);
  assert_non_null(f);
  memset(f, 'x', n);
  f[n] = '\0';
  return f;
}

static void test_input_field_limit_is_in_compact_bytes(void **state) {
  (void)state;
  size_t len;
  char *fill = ascii_fill(TURN_INPUT_LIMIT);
  turn_input in;

  /* exactly 8192 bytes compact: inline */
  char *json = object_with(fill, TURN_INPUT_LIMIT - 8, &len);
  assert_int_equal(len, TURN_INPUT_LIMIT);
  assert_int_equal(from_json(json, len, &in, NULL), TURN_OK);
  assert_false(in.truncated);
  assert_int_equal(in.json.len, TURN_INPUT_LIMIT);
  assert_memory_equal(in.json.p, json, len);
  assert_int_equal(in.preview.len, 0);
  free(json);

  /* 8193 bytes: a preview of the first 8192, and no inline JSON */
  json = object_with(fill, TURN_INPUT_LIMIT - 7, &len);
  assert_int_equal(len, TURN_INPUT_LIMIT + 1);
  assert_int_equal(from_json(json, len, &in, NULL), TURN_OK);
  assert_true(in.truncated);
  assert_int_equal(in.json.len, 0);
  assert_int_equal(in.preview.len, TURN_INPUT_LIMIT);
  assert_memory_equal(in.preview.p, json, TURN_INPUT_LIMIT);
  free(json);

  /* whitespace does not count: 8192 bytes compact written in many more */
  char *spaced = malloc(3 * TURN_INPUT_LIMIT);
  assert_non_null(spaced);
  size_t w = 0;
  memcpy(spaced + w, " {\n \"a\" :\t\"", 11);
  w += 11;
  memcpy(spaced + w, fill, TURN_INPUT_LIMIT - 8);
  w += TURN_INPUT_LIMIT - 8;
  memcpy(spaced + w, "\" \r\n}", 5);
  w += 5;
  memset(spaced + w, ' ', TURN_INPUT_LIMIT);
  w += TURN_INPUT_LIMIT;
  assert_int_equal(from_json(spaced, w, &in, NULL), TURN_OK);
  assert_false(in.truncated);
  assert_int_equal(in.json.len, TURN_INPUT_LIMIT);
  free(spaced);

  /* escapes count as their canonical form: "\u0078" is one byte "x" */
  size_t esc_n = TURN_INPUT_LIMIT - 8;
  char *escaped = malloc(esc_n * 6 + 9);
  assert_non_null(escaped);
  w = 0;
  memcpy(escaped, "{\"a\":\"", 6);
  w = 6;
  for (size_t k = 0; k < esc_n; k++) {
    memcpy(escaped + w, "\\u0078", 6);
    w += 6;
  }
  memcpy(escaped + w, "\"}", 2);
  w += 2;
  assert_int_equal(from_json(escaped, w, &in, NULL), TURN_OK);
  assert_false(in.truncated);
  assert_int_equal(in.json.len, TURN_INPUT_LIMIT);
  /* and "\n" written as \u000a is two bytes compact: one more pushes it over */
  memcpy(escaped + 6, "\\u000a", 6);
  assert_int_equal(from_json(escaped, w, &in, NULL), TURN_OK);
  assert_true(in.truncated);
  assert_int_equal(in.preview.len, TURN_INPUT_LIMIT);
  assert_memory_equal(in.preview.p, "{\"a\":\"\\nxx", 10);
  free(escaped);
  free(fill);
}

/* Builds a compact object of ASCII fill with the character ch at code point index
 * at (0-based, counting from the object's first byte) and more fill after it, so
 * that the whole text is total_cp code points. ch_before, when not NULL, is put
 * before it n_before times to shift bytes against code points. */
static char *placed(const char *ch, size_t at_cp, size_t total_cp, const char *ch_before,
                    size_t n_before, size_t *len) {
  size_t cl = strlen(ch), bl = ch_before ? strlen(ch_before) : 0;
  size_t cap = total_cp * 4 + 16;
  char *b = malloc(cap);
  assert_non_null(b);
  size_t w = 0, cp = 0;
  memcpy(b, "{\"a\":\"", 6);
  w = cp = 6;
  for (size_t k = 0; k < n_before; k++, cp++) {
    memcpy(b + w, ch_before, bl);
    w += bl;
  }
  assert_true(cp <= at_cp);
  while (cp < at_cp) {
    b[w++] = 'x';
    cp++;
  }
  memcpy(b + w, ch, cl);
  w += cl;
  cp++;
  while (cp < total_cp - 2) {
    b[w++] = 'y';
    cp++;
  }
  memcpy(b + w, "\"}", 2);
  w += 2;
  assert_true(w < cap);
  *len = w;
  return b;
}

/* The preview is the first 8192 code points: a character that starts before the
 * cut is kept whole, one that starts after it is left out whole. */
static void check_preview(const char *json, size_t len) {
  turn_input in;
  turn_error err;
  assert_int_equal(from_json(json, len, &in, &err), TURN_OK);
  assert_true(in.truncated);
  assert_int_equal(in.json.len, 0);
  /* my own count of the bytes of the first 8192 code points */
  size_t want = 0, cps = 0;
  while (want < len && cps < TURN_INPUT_LIMIT) {
    want++;
    while (want < len && ((unsigned char)json[want] & 0xC0) == 0x80)
      want++;
    cps++;
  }
  if (in.preview.len != want)
    print_message("preview is %zu bytes, want %zu\n", in.preview.len, want);
  assert_int_equal(in.preview.len, want);
  assert_memory_equal(in.preview.p, json, want);
  assert_true(turn__utf8_valid(in.preview.p, in.preview.len));
  assert_int_equal(turn__utf8_count(in.preview.p, in.preview.len), TURN_INPUT_LIMIT);

  /* the preview travels in an event that parses back */
  turn_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = TURN_EV_TOOL_INPUT;
  ev.tool_input.id = TURN_STR("u1");
  ev.tool_input.tool = TURN_STR("t");
  ev.tool_input.input = in;
  turn_buf out;
  turn_buf_init(&out, 1 << 20, NULL);
  assert_int_equal(turn_event_encode(&ev, &out), TURN_OK);
  turn_arena other;
  turn_arena_init(&other, NULL);
  turn_event back;
  assert_int_equal(turn_event_parse(&back, &other, out.data, out.len, NULL), TURN_OK);
  assert_true(turn_str_eq(back.tool_input.input.preview, in.preview));
  turn_arena_fini(&other);
  turn_buf_fini(&out);
}

static void test_input_field_preview_never_splits_a_character(void **state) {
  (void)state;
  static const char *const chars[] = {"\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"};
  size_t len;
  for (size_t c = 0; c < 3; c++) {
    size_t cl = strlen(chars[c]);
    /* straddling byte 8192: starting 1..cl-1 bytes before it (ASCII before, so
     * byte and code point offsets agree up to the character) */
    for (size_t back = 1; back < cl; back++) {
      char *json = placed(chars[c], TURN_INPUT_LIMIT - back, TURN_INPUT_LIMIT + 100, NULL,
                          0, &len);
      check_preview(json, len);
      free(json);
    }
    /* as the 8192nd code point (kept) and as the 8193rd (left out), with
     * multi-byte characters before it so bytes run ahead of code points */
    for (size_t at = TURN_INPUT_LIMIT - 2; at <= TURN_INPUT_LIMIT + 1; at++) {
      for (size_t b = 0; b < 3; b++) {
        char *json = placed(chars[c], at, TURN_INPUT_LIMIT + 50, chars[b], 1000, &len);
        check_preview(json, len);
        free(json);
      }
    }
    /* only multi-byte characters: the preview is far longer than 8192 bytes */
    char *json = placed(chars[c], TURN_INPUT_LIMIT - 1, TURN_INPUT_LIMIT + 10, chars[c],
                        TURN_INPUT_LIMIT - 7, &len);
    check_preview(json, len);
    free(json);
  }
}

/* More than 8192 bytes but fewer than 8192 code points: truncated, and the
 * preview is the whole compact text. */
static void test_input_field_preview_of_short_multibyte_text_is_whole(void **state) {
  (void)state;
  size_t n = 3000; /* 3000 x 3 bytes = 9000 bytes, 3008 code points */
  char *fill = malloc(n * 3);
  assert_non_null(fill);
  for (size_t k = 0; k < n; k++)
    memcpy(fill + 3 * k, "\xE2\x82\xAC", 3);
  size_t len;
  char *json = object_with(fill, n * 3, &len);
  turn_input in;
  assert_int_equal(from_json(json, len, &in, NULL), TURN_OK);
  assert_true(in.truncated);
  assert_int_equal(in.json.len, 0);
  assert_int_equal(in.preview.len, len);
  assert_memory_equal(in.preview.p, json, len);
  free(json);

  /* 2728 of them (8184 + 8 bytes) are exactly the limit: inline */
  json = object_with(fill, 2728 * 3, &len);
  assert_int_equal(len, TURN_INPUT_LIMIT);
  assert_int_equal(from_json(json, len, &in, NULL), TURN_OK);
  assert_false(in.truncated);
  free(json);
  free(fill);
}

/* ------------------------------------------------------------------ errors */

static void test_input_field_errors_leave_output_untouched(void **state) {
  (void)state;
  static const struct {
    const char *json;
    size_t len;
    int code;
  } bad[] = {
#define B(lit, code) {lit, sizeof(lit) - 1, code}
      B("", TURN_E_JSON),
      B("  ", TURN_E_JSON),
      B("{", TURN_E_JSON),
      B("{\"a\":}", TURN_E_JSON),
      B("{\"a\":1,}", TURN_E_JSON),
      B("{\"a\":1} x", TURN_E_JSON),
      B("{\"a\":1}{}", TURN_E_JSON),
      B("{'a':1}", TURN_E_JSON),
      B("{\"a\":\"\\u0000\"}", TURN_E_JSON),
      B("{\"a\":01}", TURN_E_JSON),
      B("{\"a\":1e400}", TURN_E_JSON),
      B("[1,2]", TURN_E_NOT_OBJECT),
      B("[]", TURN_E_NOT_OBJECT),
      B(" [ {} ] ", TURN_E_NOT_OBJECT),
      B("\"{}\"", TURN_E_NOT_OBJECT),
      B("1", TURN_E_NOT_OBJECT),
      B("null", TURN_E_NOT_OBJECT),
      B("{\"a\":\"\xFF\"}", TURN_E_UTF8),
      B("{\"a\":\"\xC0\xAF\"}", TURN_E_UTF8),
      B("{\"a\":\"\xED\xA0\x80\"}", TURN_E_UTF8),
      B("{\"\xF5\":1}", TURN_E_UTF8),
      B("[\"\xFF\"]", TURN_E_UTF8),
#undef B
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    turn_input in, before;
    memset(&in, 0x77, sizeof in);
    memcpy(&before, &in, sizeof in);
    turn_error err = {0, NULL, 0, 0};
    int rv = from_json(bad[i].json, bad[i].len, &in, &err);
    if (rv != bad[i].code)
      print_message("case %zu: want %s, got %s\n", i, turn_errname(bad[i].code),
                    turn_errname(rv));
    assert_int_equal(rv, bad[i].code);
    assert_int_equal(err.code, rv);
    assert_true(err.offset <= bad[i].len);
    assert_memory_equal(&in, &before, sizeof in);
  }
  /* err may be NULL */
  turn_input in;
  assert_int_equal(from_json("[1]", 3, &in, NULL), TURN_E_NOT_OBJECT);
}

/* Failing the N-th allocation for every N, on inputs that go inline and that
 * need a preview: TURN_OK or TURN_E_NOMEM, *out untouched on failure, no leak. */
static void test_input_field_allocation_failure(void **state) {
  (void)state;
  size_t len;
  char *fill = ascii_fill(TURN_INPUT_LIMIT + 100);
  char *big = object_with(fill, TURN_INPUT_LIMIT + 100, &len);
  const char *small = "{ \"a\\u0041\" : [1, \"x\\n\"] }";
  const struct {
    const char *json;
    size_t len;
  } inputs[] = {{small, strlen(small)}, {big, len}};
  for (size_t i = 0; i < 2; i++) {
    bool succeeded = false;
    for (unsigned long n = 1; n < 200 && !succeeded; n++) {
      struct support_failmem fm;
      support_failmem_init(&fm, n);
      turn_arena a;
      turn_arena_init(&a, &fm.mem);
      turn_input in, before;
      memset(&in, 0x11, sizeof in);
      memcpy(&before, &in, sizeof in);
      int rv = turn_input_from_json(&in, &a, inputs[i].json, inputs[i].len, NULL);
      if (rv == TURN_OK) {
        succeeded = true;
        assert_int_equal(in.truncated, i == 1);
      } else {
        assert_int_equal(rv, TURN_E_NOMEM);
        assert_memory_equal(&in, &before, sizeof in);
      }
      turn_arena_fini(&a);
      assert_int_equal(fm.live, 0);
    }
    assert_true(succeeded);
  }
  free(big);
  free(fill);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_input_field_compacts_and_canonicalises),
      cmocka_unit_test(test_input_field_result_encodes_into_an_event),
      cmocka_unit_test(test_input_field_limit_is_in_compact_bytes),
      cmocka_unit_test(test_input_field_preview_never_splits_a_character),
      cmocka_unit_test(test_input_field_preview_of_short_multibyte_text_is_whole),
      cmocka_unit_test(test_input_field_errors_leave_output_untouched),
      cmocka_unit_test(test_input_field_allocation_failure),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
