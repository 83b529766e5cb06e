/* The single-pass JSON scanner (json_scan.c) against its oracle, jansson 2.14: every
 * hand-made case below is run through both, and the test asserts that they agree and
 * that both give the verdict written next to the case, so a table entry cannot pass
 * because both sides are wrong in the same way. Invalid UTF-8 must come back as
 * TURN_E_UTF8 and broken syntax as TURN_E_JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "json_scan.h"
#include "support.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ helpers */

/* jansson's verdict. Objects and arrays are loaded with flags 0, as the protocol's
 * Python and C halves do; a scalar at the top needs JSON_DECODE_ANY to be looked
 * at at all, which changes nothing else in jansson's grammar. */
static bool jansson_accepts(const char *text, size_t len) {
  size_t i = 0;
  while (i < len &&
         (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
    i++;
  size_t flags = i < len && (text[i] == '{' || text[i] == '[') ? 0 : JSON_DECODE_ANY;
  json_error_t e;
  json_t *j = json_loadb(text, len, flags, &e);
  bool ok = j != NULL;
  json_decref(j);
  return ok;
}

static int scan_validate(const char *text, size_t len) {
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  int rv = turn__json_validate(text, len, &arena);
  turn_arena_fini(&arena);
  return rv;
}

/* A printable form of a case for failure messages: bytes outside ASCII and control
 * characters as \xHH, long inputs cut after 60 bytes. */
static const char *show(const char *text, size_t len, char out[300]) {
  size_t n = 0;
  for (size_t i = 0; i < len && n < 280; i++) {
    unsigned char c = (unsigned char)text[i];
    if (i == 60) {
      n += (size_t)snprintf(out + n, 300 - n, "...(%zu bytes)", len);
      break;
    }
    if (c < 0x20 || c >= 0x7f)
      n += (size_t)snprintf(out + n, 300 - n, "\\x%02X", c);
    else
      out[n++] = (char)c;
  }
  out[n] = '\0';
  return out;
}

/* Runs one input through both parsers; returns 1 and prints why when the scanner
 * and jansson disagree with each other or with the expected verdict. */
static int check_agreement(const char *text, size_t len, bool expect_ok) {
  char shown[300];
  bool oracle = jansson_accepts(text, len);
  int rv = scan_validate(text, len);
  bool scanned = rv == TURN_OK;
  int bad = 0;
  if (oracle != expect_ok) {
    print_message("case written wrong: jansson %s %s\n", oracle ? "accepts" : "refuses",
                  show(text, len, shown));
    bad = 1;
  }
  if (scanned != oracle) {
    print_message("scanner %s (%s) but jansson %s: %s\n", scanned ? "accepts" : "refuses",
                  turn_errname(rv), oracle ? "accepts" : "refuses",
                  show(text, len, shown));
    bad = 1;
  }
  if (!scanned && rv != TURN_E_JSON && rv != TURN_E_UTF8) {
    print_message("scanner refused with %s, not E_JSON/E_UTF8: %s\n", turn_errname(rv),
                  show(text, len, shown));
    bad = 1;
  }
  return bad;
}

/* A small deterministic generator for the generated cases. */
static uint32_t lcg_next(uint32_t *x) {
  *x = *x * 1664525u + 1013904223u;
  return *x >> 8;
}

/* -------------------------------------------------------------- the table */

struct scan_case {
  const char *text;
  size_t len; /* explicit, so cases can hold NUL bytes */
  bool ok;
  int code; /* when refused: TURN_E_JSON or TURN_E_UTF8 */
};

#define ACCEPT(lit) \
  { lit, sizeof(lit) - 1, true, TURN_OK }
#define BAD_JSON(lit) \
  { lit, sizeof(lit) - 1, false, TURN_E_JSON }
#define BAD_UTF8(lit) \
  { lit, sizeof(lit) - 1, false, TURN_E_UTF8 }

static const struct scan_case cases[] = {
    /* containers and whitespace */
    ACCEPT("{}"),
    ACCEPT("[]"),
    ACCEPT(" \t\r\n{ \t\r\n} \t\r\n"),
    ACCEPT("[ ]"),
    ACCEPT("{\"a\":1}"),
    ACCEPT("{\"a\" : 1 , \"b\" : [ 1 , 2 ] }"),
    ACCEPT("{\"\":\"\"}"),
    ACCEPT("{\"a\":1,\"a\":2}"),
    ACCEPT("[true,false,null]"),
    ACCEPT("[[[]]]"),
    ACCEPT("[{\"a\":[{\"b\":[]}]}]"),
    ACCEPT("{\"a\":{\"b\":{\"c\":{}}}}"),
    ACCEPT("[1,[2,[3,[4]]],{\"x\":[{}]}]"),
    BAD_JSON(""),
    BAD_JSON(" "),
    BAD_JSON("\t\r\n"),
    BAD_JSON("{"),
    BAD_JSON("}"),
    BAD_JSON("["),
    BAD_JSON("]"),
    BAD_JSON("[1"),
    BAD_JSON("[1,"),
    BAD_JSON("{\"a\""),
    BAD_JSON("{\"a\":"),
    BAD_JSON("{\"a\":1"),
    BAD_JSON("[1,]"),
    BAD_JSON("[,1]"),
    BAD_JSON("[,]"),
    BAD_JSON("[1,,2]"),
    BAD_JSON("{,}"),
    BAD_JSON("{\"a\":1,}"),
    BAD_JSON("{\"a\"}"),
    BAD_JSON("{\"a\":}"),
    BAD_JSON("{\"a\" 1}"),
    BAD_JSON("{\"a\"::1}"),
    BAD_JSON("{a:1}"),
    BAD_JSON("{'a':1}"),
    BAD_JSON("{1:1}"),
    BAD_JSON("{null:1}"),
    BAD_JSON("[1 2]"),
    BAD_JSON("[1:2]"),
    BAD_JSON("{\"a\":1 \"b\":2}"),
    BAD_JSON("[}"),
    BAD_JSON("{]"),
    BAD_JSON("[{]}"),
    BAD_JSON("{\"a\":[}"),
    BAD_JSON("[{\"a\":1]}"),
    BAD_JSON("[1]]"),
    BAD_JSON("{}}"),
    /* trailing garbage and things that are not whitespace */
    BAD_JSON("[1]x"),
    BAD_JSON("[1][2]"),
    BAD_JSON("{}{}"),
    BAD_JSON("{} 1"),
    BAD_JSON("[1]\0"),
    BAD_JSON("\0[1]"),
    BAD_JSON("[1,\0 2]"),
    BAD_JSON("\f[1]"),
    BAD_JSON("\v[1]"),
    BAD_JSON("[1]\f"),
    BAD_JSON("/* c */[1]"),
    BAD_JSON("[1]// c"),
    BAD_JSON("\xEF\xBB\xBF[1]"), /* a BOM is valid UTF-8 but not whitespace */
    BAD_JSON("[\xC2\xA0"
             "1]"),              /* U+00A0 between tokens */
    BAD_JSON("[1]\xE2\x80\xA8"), /* U+2028 after the value */
    /* scalars at the top */
    ACCEPT("1"),
    ACCEPT(" -1 "),
    ACCEPT("\"x\""),
    ACCEPT("true"),
    ACCEPT("false"),
    ACCEPT("null"),
    BAD_JSON("tru"),
    BAD_JSON("nul"),
    BAD_JSON("True"),
    BAD_JSON("nulll"),
    BAD_JSON("[tru]"),
    BAD_JSON("[truex]"),
    BAD_JSON("[nulls]"),
    BAD_JSON("[NULL]"),
    BAD_JSON("[undefined]"),
    /* numbers: grammar */
    ACCEPT("[0]"),
    ACCEPT("[-0]"),
    ACCEPT("[0.0]"),
    ACCEPT("[-0.0]"),
    ACCEPT("[0e0]"),
    ACCEPT("[-0.0e-0]"),
    ACCEPT("[1e5]"),
    ACCEPT("[1E5]"),
    ACCEPT("[1e+5]"),
    ACCEPT("[1E-5]"),
    ACCEPT("[0.5]"),
    ACCEPT("[123.456e78]"),
    ACCEPT("[1.0000000000000000000000000000001]"),
    ACCEPT("[10,-20,3.5,-4e2]"),
    ACCEPT("[1e0001]"),
    BAD_JSON("[01]"),
    BAD_JSON("[00]"),
    BAD_JSON("[-01]"),
    BAD_JSON("[00.5]"),
    BAD_JSON("[1.]"),
    BAD_JSON("[1.e5]"),
    BAD_JSON("[.5]"),
    BAD_JSON("[-.5]"),
    BAD_JSON("[-]"),
    BAD_JSON("-"),
    BAD_JSON("[--1]"),
    BAD_JSON("[+1]"),
    BAD_JSON("[1e]"),
    BAD_JSON("[1e+]"),
    BAD_JSON("[1e-]"),
    BAD_JSON("[1E+-1]"),
    BAD_JSON("[1.5.5]"),
    BAD_JSON("[1e5e5]"),
    BAD_JSON("[0x10]"),
    BAD_JSON("[1_000]"),
    BAD_JSON("[NaN]"),
    BAD_JSON("[Infinity]"),
    BAD_JSON("[-Infinity]"),
    BAD_JSON("[- 1]"),
    BAD_JSON("1."),
    /* numbers: integers must fit in long long */
    ACCEPT("[9223372036854775807]"),
    ACCEPT("[-9223372036854775808]"),
    ACCEPT("[999999999999999999]"),
    BAD_JSON("[9223372036854775808]"),
    BAD_JSON("[-9223372036854775809]"),
    BAD_JSON("[9999999999999999999]"),
    BAD_JSON("[10000000000000000000]"),
    BAD_JSON("[-10000000000000000000]"),
    BAD_JSON("[123456789012345678901234567890]"),
    ACCEPT("[9223372036854775808.0]"), /* a real, not an integer */
    ACCEPT("[9223372036854775808e0]"),
    ACCEPT("[123456789012345678901234567890.5]"),
    /* numbers: reals must not overflow a double (underflow is fine) */
    ACCEPT("[1e308]"),
    ACCEPT("[1.0e+308]"),
    ACCEPT("[-1e308]"),
    ACCEPT("[1.7976931348623157e308]"),
    ACCEPT("[1.7976931348623158e308]"), /* rounds down to DBL_MAX */
    ACCEPT("[1.797693134862315807937289714053034150799e308]"),
    ACCEPT("[10e307]"),
    ACCEPT("[0.01e310]"),
    ACCEPT("[0.0000001e315]"),
    ACCEPT("[1e-400]"),
    ACCEPT("[-1e-400]"),
    ACCEPT("[0e400]"),
    ACCEPT("[0.0e99999]"),
    ACCEPT("[4.9e-324]"),
    ACCEPT("[2e-324]"),
    BAD_JSON("[1e400]"),
    BAD_JSON("[-1e400]"),
    BAD_JSON("[1E400]"),
    BAD_JSON("[1.0e400]"),
    BAD_JSON("[1e309]"),
    BAD_JSON("[100e307]"),
    BAD_JSON("[0.1e310]"),
    BAD_JSON("[1.7976931348623159e308]"),
    BAD_JSON("[1.8e308]"),
    BAD_JSON("[1e99999999999]"),
    BAD_JSON("1e400"),
    /* Just above the midpoint between DBL_MAX and 2^1024: strtod overflows, but
     * only the 41st significant digit tells this from the accepted case above. */
    BAD_JSON("[1.797693134862315807937289714053034150799999e308]"),
    BAD_JSON("[179769313486231580793728971405303415079999999e264]"),
    /* strings: escapes */
    ACCEPT("[\"\"]"),
    ACCEPT("[\"abc\"]"),
    ACCEPT("[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]"),
    ACCEPT("[\"\\u0041\\u00e9\\u20AC\"]"),
    ACCEPT("[\"\\u0001\\u001f\\u007F\"]"),
    ACCEPT("[\"\\uD83D\\uDE00\"]"),
    ACCEPT("[\"\\ud83d\\ude00\"]"),
    ACCEPT("[\"\\uD800\\uDC00\"]"),
    ACCEPT("[\"\\uDBFF\\uDFFF\"]"),
    ACCEPT("[\"\\uFFFF\\uFFFE\\uE000\\uD7FF\"]"),
    ACCEPT("{\"\\u0061\\n\":\"\\/\"}"),
    BAD_JSON("[\"\\u0000\"]"),
    BAD_JSON("[\"a\\u0000b\"]"),
    BAD_JSON("{\"a\\u0000\":1}"),
    BAD_JSON("[\"\\uD800\"]"),
    BAD_JSON("[\"\\uDBFF\"]"),
    BAD_JSON("[\"\\uDC00\"]"),
    BAD_JSON("[\"\\uDFFF\"]"),
    BAD_JSON("[\"\\uDE00\\uD83D\"]"),
    BAD_JSON("[\"\\uD800x\"]"),
    BAD_JSON("[\"\\uD800\\n\"]"),
    BAD_JSON("[\"\\uD800\\u0041\"]"),
    BAD_JSON("[\"\\uD800\\uD800\"]"),
    BAD_JSON("[\"\\uD800\\u\"]"),
    BAD_JSON("{\"\\uDC00\":1}"),
    BAD_JSON("[\"\\u12\"]"),
    BAD_JSON("[\"\\u12G4\"]"),
    BAD_JSON("[\"\\u 123\"]"),
    BAD_JSON("[\"\\U0041\"]"),
    BAD_JSON("[\"\\x41\"]"),
    BAD_JSON("[\"\\'\"]"),
    BAD_JSON("[\"\\a\"]"),
    BAD_JSON("[\"\\0\"]"),
    BAD_JSON("[\"\\ \"]"),
    BAD_JSON("[\"\\"),
    BAD_JSON("[\"\\u00"),
    BAD_JSON("[\"abc]"),
    BAD_JSON("[\"abc"),
    BAD_JSON("\"abc"),
    BAD_JSON("[\"abc\\\"]"),
    BAD_JSON("['abc']"),
    /* strings: raw control characters are refused, DEL is not a control here */
    ACCEPT("[\"\x7F\"]"),
    BAD_JSON("[\"a\x01"
             "b\"]"),
    BAD_JSON("[\"\t\"]"),
    BAD_JSON("[\"\n\"]"),
    BAD_JSON("[\"\r\"]"),
    BAD_JSON("[\"\x1F\"]"),
    BAD_JSON("[\"a\0b\"]"),
    BAD_JSON("{\"a\tb\":1}"),
    /* strings: valid UTF-8 at the edges of each length */
    ACCEPT("[\"\xC2\x80\"]"),         /* U+0080 */
    ACCEPT("[\"\xDF\xBF\"]"),         /* U+07FF */
    ACCEPT("[\"\xE0\xA0\x80\"]"),     /* U+0800 */
    ACCEPT("[\"\xED\x9F\xBF\"]"),     /* U+D7FF */
    ACCEPT("[\"\xEE\x80\x80\"]"),     /* U+E000 */
    ACCEPT("[\"\xEF\xBF\xBF\"]"),     /* U+FFFF */
    ACCEPT("[\"\xF0\x90\x80\x80\"]"), /* U+10000 */
    ACCEPT("[\"\xF4\x8F\xBF\xBF\"]"), /* U+10FFFF */
    ACCEPT("[\"h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80\"]"),
    ACCEPT("{\"\xC3\xA9\":\"\xE2\x80\xA8\"}"),
    /* strings: invalid UTF-8 */
    BAD_UTF8("[\"\x80\"]"), /* lone continuation */
    BAD_UTF8("[\"\xBF\"]"),
    BAD_UTF8("[\"\xC0\xAF\"]"), /* overlong '/' */
    BAD_UTF8("[\"\xC0\x80\"]"), /* overlong NUL */
    BAD_UTF8("[\"\xC1\xBF\"]"),
    BAD_UTF8("[\"\xE0\x80\xAF\"]"), /* overlong, 3 bytes */
    BAD_UTF8("[\"\xE0\x9F\xBF\"]"),
    BAD_UTF8("[\"\xF0\x80\x80\xAF\"]"), /* overlong, 4 bytes */
    BAD_UTF8("[\"\xF0\x8F\xBF\xBF\"]"),
    BAD_UTF8("[\"\xED\xA0\x80\"]"),             /* U+D800 encoded */
    BAD_UTF8("[\"\xED\xBF\xBF\"]"),             /* U+DFFF encoded */
    BAD_UTF8("[\"\xED\xA0\xBD\xED\xB8\x80\"]"), /* a surrogate pair encoded (CESU-8) */
    BAD_UTF8("[\"\xF4\x90\x80\x80\"]"),         /* U+110000 */
    BAD_UTF8("[\"\xF5\x80\x80\x80\"]"),
    BAD_UTF8("[\"\xF8\x88\x80\x80\x80\"]"),
    BAD_UTF8("[\"\xFE\"]"),
    BAD_UTF8("[\"\xFF\"]"),
    BAD_UTF8("[\"\xC3\"]"), /* cut before its continuation */
    BAD_UTF8("[\"\xE2\x82\"]"),
    BAD_UTF8("[\"\xF0\x9F\x98\"]"),
    BAD_UTF8("[\"\xC3\x28\"]"), /* continuation missing */
    BAD_UTF8("[\"\xE2\x28\xA1\"]"),
    BAD_UTF8("[\"\xE2\x82\x28\"]"),
    BAD_UTF8("[\"\xF0\x28\x8C\xBC\"]"),
    BAD_UTF8("[\"\xF0\x9F\x98\x28\"]"),
    BAD_UTF8("[\"\xC3\xA9\xA9\"]"), /* one continuation too many */
    BAD_UTF8("{\"\xFF\":1}"),
    BAD_UTF8("[\"abcdefghijklmnop\xFF\"]"), /* past the first 8-byte word */
    BAD_UTF8("[\"\xE2\x82"),                /* input ends inside the sequence */
    /* invalid UTF-8 outside strings */
    BAD_UTF8("[\xFF]"),
    BAD_UTF8("[1,\x80]"),
    BAD_UTF8("{\"a\":1}\xFF"),
    BAD_UTF8("\xC0[1]"),
    BAD_UTF8("{\xFF:1}"),
};

static void test_json_scan_table_matches_jansson(void **state) {
  (void)state;
  int bad = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    bad += check_agreement(cases[i].text, cases[i].len, cases[i].ok);
  assert_int_equal(bad, 0);
}

static void test_json_scan_refusals_name_utf8_or_syntax(void **state) {
  (void)state;
  int bad = 0;
  size_t refused = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const struct scan_case *c = &cases[i];
    if (c->ok) continue;
    refused++;
    int rv = scan_validate(c->text, c->len);
    if (rv != c->code) {
      char shown[300];
      print_message("%s: want %s, got %s\n", show(c->text, c->len, shown),
                    turn_errname(c->code), turn_errname(rv));
      bad++;
    }
  }
  assert_true(refused > 100);
  assert_int_equal(bad, 0);
}

/* ------------------------------------------------------------- generated */

/* n containers around inner: arrays "[...]" or objects "{\"k\":...}", or both in
 * turn when mixed. Returns owned text. */
enum nest_kind { NEST_ARRAY, NEST_OBJECT, NEST_MIXED };

static char *nest(int n, enum nest_kind kind, const char *inner, size_t *len) {
  size_t il = strlen(inner);
  char *b = malloc((size_t)n * 6 + il + 1);
  assert_non_null(b);
  size_t w = 0;
  for (int i = 0; i < n; i++) {
    bool obj = kind == NEST_OBJECT || (kind == NEST_MIXED && i % 2 == 1);
    if (obj) {
      memcpy(b + w, "{\"k\":", 5);
      w += 5;
    } else {
      b[w++] = '[';
    }
  }
  memcpy(b + w, inner, il);
  w += il;
  for (int i = n - 1; i >= 0; i--) {
    bool obj = kind == NEST_OBJECT || (kind == NEST_MIXED && i % 2 == 1);
    b[w++] = obj ? '}' : ']';
  }
  b[w] = '\0';
  *len = w;
  return b;
}

static int check_nest(int n, enum nest_kind kind, const char *inner, bool expect_ok) {
  size_t len;
  char *text = nest(n, kind, inner, &len);
  int bad = check_agreement(text, len, expect_ok);
  if (bad) print_message("  (%d containers of kind %d around \"%s\")\n", n, kind, inner);
  free(text);
  return bad;
}

/* jansson counts every value against JSON_PARSER_MAX_DEPTH (2048), scalars
 * included: 2048 empty arrays pass, but 2048 arrays around a number do not. */
static void test_json_scan_depth_limit_matches_jansson(void **state) {
  (void)state;
  int bad = 0;
  bad += check_nest(1, NEST_ARRAY, "", true);
  bad += check_nest(100, NEST_MIXED, "1", true);
  bad += check_nest(2047, NEST_ARRAY, "", true);
  bad += check_nest(2048, NEST_ARRAY, "", true);
  bad += check_nest(2049, NEST_ARRAY, "", false);
  bad += check_nest(5000, NEST_ARRAY, "", false);
  bad += check_nest(2048, NEST_OBJECT, "{}", false); /* 2049 containers */
  bad += check_nest(2047, NEST_OBJECT, "{}", true);
  bad += check_nest(2047, NEST_MIXED, "[]", true);
  bad += check_nest(2048, NEST_MIXED, "[]", false);
  bad += check_nest(2047, NEST_ARRAY, "[]", true);
  bad += check_nest(2047, NEST_ARRAY, "1", true);
  bad += check_nest(2047, NEST_ARRAY, "\"s\"", true);
  bad += check_nest(2047, NEST_OBJECT, "1", true);
  bad += check_nest(2047, NEST_MIXED, "true", true);
  bad += check_nest(2048, NEST_ARRAY, "1", false);
  bad += check_nest(2048, NEST_ARRAY, "null", false);
  bad += check_nest(2048, NEST_ARRAY, "\"s\"", false);
  bad += check_nest(2048, NEST_OBJECT, "1", false);
  bad += check_nest(2048, NEST_MIXED, "true", false);
  bad += check_nest(2047, NEST_ARRAY, "{\"a\":1}", false);
  assert_int_equal(bad, 0);
}

/* Each container's kind is one bit of a stack; a closer of the wrong kind at any
 * depth (across the bit stack's byte boundaries) is refused. */
static void test_json_scan_wrong_closer_at_every_depth(void **state) {
  (void)state;
  int bad = 0;
  for (int n = 1; n <= 40; n++) {
    size_t len;
    char *text = nest(n, NEST_MIXED, "0", &len);
    bad += check_agreement(text, len, true);
    for (int k = 0; k < n; k++) {
      /* the k-th closer from the end flips to the other kind */
      char *closer = text + len - 1 - k;
      *closer = *closer == ']' ? '}' : ']';
      bad += check_agreement(text, len, false);
      *closer = *closer == ']' ? '}' : ']';
    }
    free(text);
  }
  assert_int_equal(bad, 0);
}

static char *filled(const char *head, char fill, size_t n, const char *tail,
                    size_t *len) {
  size_t hl = strlen(head), tl = strlen(tail);
  char *b = malloc(hl + n + tl + 1);
  assert_non_null(b);
  memcpy(b, head, hl);
  memset(b + hl, fill, n);
  memcpy(b + hl + n, tail, tl + 1);
  *len = hl + n + tl;
  return b;
}

/* Reals whose size only shows once every digit is counted: a long run of zeros
 * balanced by an exponent with more digits than a short read would keep. */
static void test_json_scan_long_reals_match_jansson(void **state) {
  (void)state;
  int bad = 0;
  size_t len;
  char *text;
  /* 0.<9999999 zeros>1e10000400 is 1e400: overflow */
  text = filled("[0.", '0', 9999999, "1e10000400]", &len);
  bad += check_agreement(text, len, false);
  free(text);
  /* 1<10000000 zeros>e-10000000 is 1.0 */
  text = filled("[1", '0', 10000000, "e-10000000]", &len);
  bad += check_agreement(text, len, true);
  free(text);
  /* 400 integer digits are past DBL_MAX; 300 are not */
  text = filled("[1", '0', 399, ".0]", &len);
  bad += check_agreement(text, len, false);
  free(text);
  text = filled("[1", '0', 299, ".0]", &len);
  bad += check_agreement(text, len, true);
  free(text);
  /* 400 digits of fraction after "0." are a tiny number */
  text = filled("[0.", '0', 400, "1]", &len);
  bad += check_agreement(text, len, true);
  free(text);
  text = filled("[0.", '0', 400, "1e710]", &len); /* 1e309 */
  bad += check_agreement(text, len, false);
  free(text);
  text = filled("[0.", '0', 400, "1e709]", &len); /* 1e308 */
  bad += check_agreement(text, len, true);
  free(text);
  assert_int_equal(bad, 0);
}

/* 2^1024 - 2^970, the midpoint between DBL_MAX and 2^1024, written out: strtod
 * rounds it (ties to even) and everything above it to HUGE_VAL, which jansson
 * refuses, and everything below it to DBL_MAX. */
static const char midpoint[] =
    "179769313486231580793728971405303415079934132710037826936173"
    "778980444968292764750946649017977587207096330286416692887910"
    "946555547851940402630657488671505820681908902000708383676273"
    "854845817711531764475730270069855571366959622842914819860834"
    "936475292719074168444365510704342711559699508093042880177904"
    "174497792";

static int check_real(const char *head, const char *digits, size_t n, const char *tail,
                      bool expect_ok) {
  char text[512];
  size_t hl = strlen(head), tl = strlen(tail);
  assert_true(hl + n + tl < sizeof text);
  memcpy(text, head, hl);
  memcpy(text + hl, digits, n);
  memcpy(text + hl + n, tail, tl);
  return check_agreement(text, hl + n + tl, expect_ok);
}

static void test_json_scan_overflow_midpoint_matches_jansson(void **state) {
  (void)state;
  size_t n = sizeof midpoint - 1; /* 309 digits */
  char below[sizeof midpoint];
  memcpy(below, midpoint, sizeof midpoint);
  below[n - 1] = '1'; /* ...791: one unit below the midpoint */
  int bad = 0;
  bad += check_real("[", midpoint, n, ".0]", false);
  bad += check_real("[-", midpoint, n, ".0]", false);
  bad += check_real("[", midpoint, n, "]", false); /* too big an integer anyway */
  bad += check_real("[", below, n, ".0]", true);
  bad += check_real("[", below, n, ".9999999999]", true);
  bad += check_real("[", midpoint, n, ".0000000001]", false);
  bad += check_real("[0.", midpoint, n, "e309]", false);
  bad += check_real("[0.", below, n, "e309]", true);
  bad += check_real("[0.000", midpoint, n, "e312]", false);
  /* the first digits, then the rest as a fraction: "1.797...792e308" */
  char split[sizeof midpoint + 1];
  split[0] = midpoint[0];
  split[1] = '.';
  memcpy(split + 2, midpoint + 1, n - 1);
  bad += check_real("[", split, n + 1, "e308]", false);
  bad += check_real("[", split, n + 1, "000000e308]", false);
  bad += check_real("[", split, n, "e308]", true); /* last digit dropped: below */
  bad += check_real("[", split, 20, "e308]", true);
  bad += check_real("[", split, 20, "99e308]", false);
  assert_int_equal(bad, 0);
}

/* Random reals around the overflow boundary and the integer limits: a prefix of
 * the midpoint's digits (sometimes nudged), split anywhere by the decimal point,
 * with an exponent that puts it near 1e308; and integers near 2^63. */
static void test_json_scan_random_numbers_match_jansson(void **state) {
  (void)state;
  uint32_t x = 777;
  int bad = 0;
  for (int iter = 0; iter < 40000 && bad < 20; iter++) {
    char digits[400];
    size_t nd;
    if (lcg_next(&x) % 4 == 0) {
      /* an integer of 18..20 digits, near 9223372036854775807 */
      static const char max[] = "9223372036854775808";
      nd = 18 + lcg_next(&x) % 3;
      memcpy(digits, max, nd < 19 ? nd : 19);
      if (nd == 20) digits[19] = (char)('0' + lcg_next(&x) % 10);
      digits[nd - 1 - lcg_next(&x) % 3] = (char)('0' + lcg_next(&x) % 10);
    } else {
      nd = 1 + lcg_next(&x) % 330;
      for (size_t k = 0; k < nd; k++)
        digits[k] = k < sizeof midpoint - 1 ? midpoint[k] : '0';
      if (lcg_next(&x) % 2) /* nudge one digit */
        digits[lcg_next(&x) % nd] = (char)('0' + lcg_next(&x) % 10);
      if (digits[0] == '0') digits[0] = '1';
    }
    char text[512];
    size_t w = 0;
    text[w++] = '[';
    if (lcg_next(&x) % 3 == 0) text[w++] = '-';
    bool real = nd > 20 || lcg_next(&x) % 2;
    size_t point = real ? 1 + lcg_next(&x) % nd : nd; /* digits before the point */
    memcpy(text + w, digits, point);
    w += point;
    if (point < nd) {
      text[w++] = '.';
      memcpy(text + w, digits + point, nd - point);
      w += nd - point;
    } else if (real) {
      memcpy(text + w, ".0", 2);
      w += 2;
    }
    if (real) {
      /* aim the first digit's exponent at 306..310 */
      long want = 306 + (long)(lcg_next(&x) % 5);
      long e = want - (long)(point - 1);
      w += (size_t)snprintf(text + w, sizeof text - w, "e%s%0*ld", e < 0 ? "-" : "+",
                            (int)(lcg_next(&x) % 4), e < 0 ? -e : e);
    }
    text[w++] = ']';
    bad += check_agreement(text, w, jansson_accepts(text, w));
  }
  assert_int_equal(bad, 0);
}

/* The string scanner looks at 8 bytes at a time: put each kind of special byte at
 * every position of the first three words. */
static void test_json_scan_special_bytes_at_every_offset(void **state) {
  (void)state;
  static const struct {
    const char *bytes;
    bool ok;
  } specials[] = {
      {"\"", false}, /* ends the string early: garbage follows */
      {"\\\"", true},
      {"\\u0041", true},
      {"\\uD83D\\uDE00", true},
      {"\\u0000", false},
      {"\\q", false},
      {"\x01", false},
      {"\x1F", false},
      {"\x7F", true},
      {"\xC3\xA9", true},
      {"\xE2\x82\xAC", true},
      {"\xF0\x9F\x98\x80", true},
      {"\xC3", false},
      {"\xED\xA0\x80", false},
      {"\x80", false},
      {"\xF4\x90\x80\x80", false},
  };
  int bad = 0;
  for (size_t k = 0; k < sizeof specials / sizeof specials[0]; k++) {
    size_t sl = strlen(specials[k].bytes);
    for (size_t pos = 0; pos < 24; pos++) {
      char text[64];
      size_t n = 0;
      text[n++] = '[';
      text[n++] = '"';
      memset(text + n, 'a', pos);
      n += pos;
      memcpy(text + n, specials[k].bytes, sl);
      n += sl;
      memset(text + n, 'b', 9);
      n += 9;
      text[n++] = '"';
      text[n++] = ']';
      bad += check_agreement(text, n, specials[k].ok);
    }
  }
  assert_int_equal(bad, 0);
}

/* Small deterministic mutations of valid documents: whatever jansson says about
 * the result, the scanner must say the same. */
static void test_json_scan_mutations_match_jansson(void **state) {
  (void)state;
  static const char *const seeds[] = {
      "{\"v\":1,\"seq\":3,\"type\":\"text\",\"delta\":\"h\\u00e9llo \\\"w\\\"\"}",
      "{\"a\":[1,-2.5e3,0,true,false,null],\"b\":{\"c\":\"\\uD83D\\uDE00\"}}",
      "[\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\",{\"k\":[[],{}]},123456789,1e-5]",
      "{\"input\":{\"name\":\"desk\",\"on\":true},\"truncated\":false,\"x\":0.5}",
      "[9223372036854775807,-9223372036854775808,1.7976931348623157e308]",
  };
  static const unsigned char alphabet[] = {
      '"',  '\\', '{',  '}',  '[',  ']',  ',',  ':',  '0',  '1',  '9',
      '-',  '+',  '.',  'e',  'E',  'u',  'n',  't',  'f',  'a',  'D',
      '8',  '/',  ' ',  '\t', '\n', '\r', '\f', 0x00, 0x01, 0x1F, 0x7F,
      0x80, 0xBF, 0xC0, 0xC2, 0xC3, 0xE0, 0xED, 0xF0, 0xF4, 0xF5, 0xFF};
  uint32_t x = 12345;
  int bad = 0;
  for (int iter = 0; iter < 30000 && bad < 20; iter++) {
    const char *seed = seeds[iter % (sizeof seeds / sizeof seeds[0])];
    char text[256];
    size_t n = strlen(seed);
    memcpy(text, seed, n);
    int edits = 1 + (int)(lcg_next(&x) % 3);
    for (int e = 0; e < edits && n > 0; e++) {
      size_t at = lcg_next(&x) % n;
      unsigned char c = alphabet[lcg_next(&x) % sizeof alphabet];
      switch (lcg_next(&x) % 3) {
      case 0:
        text[at] = (char)c;
        break;
      case 1:
        memmove(text + at, text + at + 1, n - at - 1);
        n--;
        break;
      default:
        memmove(text + at + 1, text + at, n - at);
        text[at] = (char)c;
        n++;
        break;
      }
    }
    bool oracle = jansson_accepts(text, n);
    if (oracle && memchr(text, '\0', n) != NULL) {
      /* jansson's quirk, pinned down in test_json_scan_refuses_nul_jansson_skips */
      bad += scan_validate(text, n) != TURN_E_JSON;
      continue;
    }
    bad += check_agreement(text, n, oracle);
  }
  assert_int_equal(bad, 0);
}

/* jansson 2.14 drops one NUL byte that directly follows a number or a literal:
 * its stream ungets the byte, and a 0 in its look-ahead buffer means "empty", so
 * "[1\0]" loads. RFC 8259 has no NUL outside strings and the protocol's other
 * halves refuse it, so the scanner refuses it too; this test notices if either
 * side changes. */
static void test_json_scan_refuses_nul_jansson_skips(void **state) {
  (void)state;
  static const struct {
    const char *text;
    size_t len;
  } quirks[] = {
      {"[1\0]", 4},       {"[true\0]", 7}, {"[1\0,2]", 6},
      {"{\"a\":1\0}", 8}, {"[1.5\0]", 6},  {"1\0", 2},
  };
  for (size_t i = 0; i < sizeof quirks / sizeof quirks[0]; i++) {
    assert_true(jansson_accepts(quirks[i].text, quirks[i].len));
    assert_int_equal(scan_validate(quirks[i].text, quirks[i].len), TURN_E_JSON);
  }
  /* everywhere else jansson reads a NUL as the end of the input and refuses */
  assert_false(jansson_accepts("[\"s\"\0]", 5));
  assert_int_equal(scan_validate("[\"s\"\0]", 5), TURN_E_JSON);
}

/* -------------------------------------------------------------- decoding */

/* Strings decoded into the arena are the text jansson decodes. */
static void test_json_scan_strings_decode_like_jansson(void **state) {
  (void)state;
  static const char *const strings[] = {
      "\"\"",
      "\"plain ascii longer than one word\"",
      "\"\\u0041\\u00e9\\u20AC\\uD83D\\uDE00\"",
      "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
      "\"\\u0001\\u001f\\u007f\"",
      "\"h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80\"",
      "\"abcdefgh\\nijklmnop\\u00e9qrstuvwx\"",
      "\"\\uDBFF\\uDFFF\\uE000\\uFFFF\"",
      "\"a\\\\u0041\"",
  };
  int bad = 0;
  for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) {
    const char *text = strings[i];
    size_t len = strlen(text);
    json_error_t e;
    json_t *j = json_loadb(text, len, JSON_DECODE_ANY, &e);
    assert_non_null(j);
    turn_arena arena;
    turn_arena_init(&arena, NULL);
    turn__scan s;
    turn__jval v;
    turn__scan_init(&s, text, len, &arena);
    assert_int_equal(turn__scan_value(&s, &v, true), TURN_OK);
    assert_int_equal(turn__scan_finish(&s), TURN_OK);
    assert_int_equal(v.kind, TURN__J_STRING);
    assert_ptr_equal(v.raw.p, text);
    assert_int_equal(v.raw.len, len);
    if (v.str.len != json_string_length(j) ||
        memcmp(v.str.p, json_string_value(j), v.str.len) != 0) {
      print_message("decoded %s differently from jansson\n", text);
      bad++;
    }
    turn_arena_fini(&arena);
    json_decref(j);
  }
  assert_int_equal(bad, 0);
}

/* ------------------------------------------------------------ member walk */

static void test_json_scan_object_walk_gives_members(void **state) {
  (void)state;
  const char *doc = " { \"a\" : 1 , \"b\\u0063\" : [true, {\"x\":null}] ,\"s\":\"t\\n\","
                    "\"n\":-2.5e3, \"f\":false } ";
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  turn__scan s;
  turn__jval v;
  turn_str key;
  turn__scan_init(&s, doc, strlen(doc), &arena);

  assert_int_equal(turn__scan_object_begin(&s), 1);
  assert_int_equal(turn__scan_key(&s, &key), TURN_OK);
  assert_true(turn_str_eq(key, TURN_STR("a")));
  assert_int_equal(turn__scan_value(&s, &v, true), TURN_OK);
  assert_int_equal(v.kind, TURN__J_NUMBER);
  assert_true(v.is_int);
  assert_true(turn_str_eq(v.raw, TURN_STR("1")));
  assert_int_equal(turn__scan_member_end(&s), 1);

  assert_int_equal(turn__scan_key(&s, &key), TURN_OK);
  assert_true(turn_str_eq(key, TURN_STR("bc"))); /* escaped keys are decoded */
  assert_int_equal(turn__scan_value(&s, &v, true), TURN_OK);
  assert_int_equal(v.kind, TURN__J_ARRAY);
  assert_true(turn_str_eq(v.raw, TURN_STR("[true, {\"x\":null}]")));
  assert_int_equal(turn__scan_member_end(&s), 1);

  assert_int_equal(turn__scan_key(&s, &key), TURN_OK);
  assert_true(turn_str_eq(key, TURN_STR("s")));
  assert_int_equal(turn__scan_value(&s, &v, true), TURN_OK);
  assert_int_equal(v.kind, TURN__J_STRING);
  assert_true(turn_str_eq(v.raw, TURN_STR("\"t\\n\"")));
  assert_true(turn_str_eq(v.str, TURN_STR("t\n")));
  assert_int_equal(turn__scan_member_end(&s), 1);

  assert_int_equal(turn__scan_key(&s, &key), TURN_OK);
  assert_int_equal(turn__scan_value(&s, &v, true), TURN_OK);
  assert_int_equal(v.kind, TURN__J_NUMBER);
  assert_false(v.is_int);
  assert_true(turn_str_eq(v.raw, TURN_STR("-2.5e3")));
  assert_int_equal(turn__scan_member_end(&s), 1);

  assert_int_equal(turn__scan_key(&s, &key), TURN_OK);
  assert_int_equal(turn__scan_value(&s, &v, true), TURN_OK);
  assert_int_equal(v.kind, TURN__J_FALSE);
  assert_int_equal(turn__scan_member_end(&s), 0);
  assert_int_equal(s.depth, 0);
  assert_int_equal(turn__scan_finish(&s), TURN_OK);

  turn__scan_init(&s, "{ }", 3, &arena);
  assert_int_equal(turn__scan_object_begin(&s), 0);
  assert_int_equal(turn__scan_finish(&s), TURN_OK);

  turn__scan_init(&s, "[1]", 3, &arena);
  assert_true(turn__scan_object_begin(&s) < 0);
  turn_arena_fini(&arena);
}

static void test_json_scan_array_walk_gives_elements(void **state) {
  (void)state;
  const char *doc = "[ 1 , 2.5e3 ,\"x\", null ,{} ]";
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  turn__scan s;
  turn__jval v;
  turn__scan_init(&s, doc, strlen(doc), &arena);
  assert_int_equal(turn__scan_array_begin(&s), 1);
  assert_int_equal(turn__scan_value(&s, &v, false), TURN_OK);
  assert_true(v.kind == TURN__J_NUMBER && v.is_int);
  assert_int_equal(turn__scan_element_end(&s), 1);
  assert_int_equal(turn__scan_value(&s, &v, false), TURN_OK);
  assert_true(v.kind == TURN__J_NUMBER && !v.is_int);
  assert_int_equal(turn__scan_element_end(&s), 1);
  assert_int_equal(turn__scan_value(&s, &v, false), TURN_OK);
  assert_int_equal(v.kind, TURN__J_STRING);
  assert_true(turn_str_eq(v.raw, TURN_STR("\"x\"")));
  assert_int_equal(turn__scan_element_end(&s), 1);
  assert_int_equal(turn__scan_value(&s, &v, false), TURN_OK);
  assert_int_equal(v.kind, TURN__J_NULL);
  assert_int_equal(turn__scan_element_end(&s), 1);
  assert_int_equal(turn__scan_value(&s, &v, false), TURN_OK);
  assert_int_equal(v.kind, TURN__J_OBJECT);
  assert_int_equal(turn__scan_element_end(&s), 0);
  assert_int_equal(turn__scan_finish(&s), TURN_OK);

  turn__scan_init(&s, "[]", 2, &arena);
  assert_int_equal(turn__scan_array_begin(&s), 0);
  assert_int_equal(turn__scan_finish(&s), TURN_OK);

  turn__scan_init(&s, "[1,]", 4, &arena);
  assert_int_equal(turn__scan_array_begin(&s), 1);
  assert_int_equal(turn__scan_value(&s, &v, false), TURN_OK);
  assert_int_equal(turn__scan_element_end(&s), 1);
  assert_int_equal(turn__scan_value(&s, &v, false), TURN_E_JSON);
  assert_int_equal(s.err_off, 3);
  turn_arena_fini(&arena);
}

/* err_off is the offset of the byte where the input went wrong. */
static void test_json_scan_error_offset_points_at_the_fault(void **state) {
  (void)state;
  static const struct {
    const char *text;
    int code;
    size_t off;
  } faults[] = {
      {"[1,]", TURN_E_JSON, 3},         {"[1 2]", TURN_E_JSON, 3},
      {"{\"a\":1}x", TURN_E_JSON, 7},   {"{\"a\" 1}", TURN_E_JSON, 5},
      {"[\"ab\xFF\"]", TURN_E_UTF8, 4}, {"[\"abcdefghijk\xC0\xAF\"]", TURN_E_UTF8, 13},
      {"[\"a\x01\"]", TURN_E_JSON, 3},  {"[\"a\\q\"]", TURN_E_JSON, 3},
      {"[tru]", TURN_E_JSON, 4},        {"  [1.]", TURN_E_JSON, 5},
  };
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
    turn__scan s;
    turn__jval v;
    turn__scan_init(&s, faults[i].text, strlen(faults[i].text), &arena);
    int rv = turn__scan_value(&s, &v, false);
    if (rv == TURN_OK) rv = turn__scan_finish(&s);
    if (rv != faults[i].code || s.err_off != faults[i].off)
      print_message("case %zu: got %s at %zu\n", i, turn_errname(rv), s.err_off);
    assert_int_equal(rv, faults[i].code);
    assert_int_equal(s.err_off, faults[i].off);
  }
  turn_arena_fini(&arena);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_json_scan_table_matches_jansson),
      cmocka_unit_test(test_json_scan_refusals_name_utf8_or_syntax),
      cmocka_unit_test(test_json_scan_depth_limit_matches_jansson),
      cmocka_unit_test(test_json_scan_wrong_closer_at_every_depth),
      cmocka_unit_test(test_json_scan_long_reals_match_jansson),
      cmocka_unit_test(test_json_scan_overflow_midpoint_matches_jansson),
      cmocka_unit_test(test_json_scan_random_numbers_match_jansson),
      cmocka_unit_test(test_json_scan_special_bytes_at_every_offset),
      cmocka_unit_test(test_json_scan_mutations_match_jansson),
      cmocka_unit_test(test_json_scan_refuses_nul_jansson_skips),
      cmocka_unit_test(test_json_scan_strings_decode_like_jansson),
      cmocka_unit_test(test_json_scan_object_walk_gives_members),
      cmocka_unit_test(test_json_scan_array_walk_gives_elements),
      cmocka_unit_test(test_json_scan_error_offset_points_at_the_fault),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
