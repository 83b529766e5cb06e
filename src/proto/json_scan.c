/* The JSON scanner: one pass, no tree, no recursion (nested containers are walked
 * with a bit stack), bounded by TURN__JSON_MAX_DEPTH. Strings are first scanned
 * word-at-a-time for the bytes that need attention, then copied or unescaped into
 * the arena only when the caller wants their text. */
#include "json_scan.h"

#include "utf8.h"

#include <string.h>

static int fail(turn__scan *s, const char *at, int code) {
  s->err_off = (size_t)(at - s->beg);
  return code;
}

void turn__scan_init(turn__scan *s, const char *data, size_t len, turn_arena *arena) {
  s->beg = data;
  s->p = data;
  s->end = len > 0 ? data + len : data; /* (NULL, 0) is an empty input, not NULL + 0 */
  s->arena = arena;
  s->err_off = 0;
  s->depth = 0;
}

/* An unexpected byte: invalid UTF-8 gets its own code so a reader can tell a
 * broken encoding from broken syntax. */
static int fail_byte(turn__scan *s, const char *at) {
  if (at < s->end && (unsigned char)*at >= 0x80 &&
      turn__utf8_seq_len((const unsigned char *)at, (size_t)(s->end - at)) == 0)
    return fail(s, at, TURN_E_UTF8);
  return fail(s, at, TURN_E_JSON);
}

static int hex4(const char *p, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    v <<= 4;
    if (c >= '0' && c <= '9')
      v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f')
      v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      v |= (unsigned)(c - 'A' + 10);
    else
      return -1;
  }
  *out = v;
  return 0;
}

/* Reads the escape after a backslash at p[-1]; returns the code point and moves *pp
 * past it, or returns -1 (invalid: bad letter, bad hex, \u0000, lone surrogate). */
static long read_escape(const char **pp, const char *end) {
  const char *p = *pp;
  if (p >= end) return -1;
  char c = *p++;
  long cp;
  switch (c) {
  case '"':
    cp = '"';
    break;
  case '\\':
    cp = '\\';
    break;
  case '/':
    cp = '/';
    break;
  case 'b':
    cp = '\b';
    break;
  case 'f':
    cp = '\f';
    break;
  case 'n':
    cp = '\n';
    break;
  case 'r':
    cp = '\r';
    break;
  case 't':
    cp = '\t';
    break;
  case 'u': {
    unsigned u;
    if (end - p < 4 || hex4(p, &u) != 0) return -1;
    p += 4;
    if (u == 0) return -1; /* jansson refuses NUL without JSON_ALLOW_NUL */
    if (u >= 0xDC00 && u <= 0xDFFF) return -1;
    if (u >= 0xD800 && u <= 0xDBFF) {
      unsigned lo;
      if (end - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, &lo) != 0) return -1;
      if (lo < 0xDC00 || lo > 0xDFFF) return -1;
      p += 6;
      cp = 0x10000 + (((long)u - 0xD800) << 10) + ((long)lo - 0xDC00);
    } else {
      cp = (long)u;
    }
    break;
  }
  default:
    return -1;
  }
  *pp = p;
  return cp;
}

static size_t put_utf8(char *w, long cp) {
  if (cp < 0x80) {
    w[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    w[0] = (char)(0xC0 | (cp >> 6));
    w[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    w[0] = (char)(0xE0 | (cp >> 12));
    w[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    w[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  w[0] = (char)(0xF0 | (cp >> 18));
  w[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  w[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  w[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* Scans the string at s->p (a '"'). *inner is the text between the quotes as it
 * is in the input; *escaped says whether it holds backslashes. */
static int scan_string_raw(turn__scan *s, turn_str *inner, bool *escaped) {
  const char *p = s->p + 1;
  const char *end = s->end;
  bool esc = false;
  for (;;) {
    /* Skip plain bytes a word at a time and land on the first one that is not. */
    while (end - p >= 8) {
      uint64_t special = turn__json_special8(turn__load8(p));
      if (special != 0) {
        p += turn__clean_prefix8(special);
        break;
      }
      p += 8;
    }
    if (p >= end) return fail(s, p, TURN_E_JSON);
    unsigned char c = (unsigned char)*p;
    if (c == '"') break;
    if (c == '\\') {
      const char *at = p;
      p++;
      if (read_escape(&p, end) < 0) return fail(s, at, TURN_E_JSON);
      esc = true;
    } else if (c < 0x20) {
      return fail(s, p, TURN_E_JSON);
    } else if (c >= 0x80) {
      size_t n = turn__utf8_seq_len((const unsigned char *)p, (size_t)(end - p));
      if (n == 0) return fail(s, p, TURN_E_UTF8);
      p += n;
    } else {
      p++;
    }
  }
  inner->p = s->p + 1;
  inner->len = (size_t)(p - inner->p);
  *escaped = esc;
  s->p = p + 1;
  return TURN_OK;
}

/* Copies a scanned string's text into the arena, unescaping it. The input was
 * validated, so every escape is well formed; the text never grows. */
static int decode_string(turn__scan *s, turn_str inner, bool escaped, turn_str *out) {
  char *w = turn_arena_alloc(s->arena, inner.len + 1);
  if (w == NULL) return fail(s, inner.p, TURN_E_NOMEM);
  if (!escaped) {
    memcpy(w, inner.p, inner.len);
    w[inner.len] = '\0';
    out->p = w;
    out->len = inner.len;
    return TURN_OK;
  }
  const char *p = inner.p;
  const char *end = inner.p + inner.len;
  size_t n = 0;
  while (p < end) {
    const char *bs = memchr(p, '\\', (size_t)(end - p));
    size_t plain = bs != NULL ? (size_t)(bs - p) : (size_t)(end - p);
    memcpy(w + n, p, plain);
    n += plain;
    p += plain;
    if (p < end) {
      p++;
      n += put_utf8(w + n, read_escape(&p, end));
    }
  }
  w[n] = '\0';
  out->p = w;
  out->len = n;
  return TURN_OK;
}

static bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

/* 2^1024 - 2^970, the midpoint between DBL_MAX and 2^1024: a correctly rounding
 * strtod (glibc's, which jansson uses) turns every value from here up into HUGE_VAL,
 * which jansson refuses as "real number overflow". 309 digits, exponent 308. */
static const char overflow_digits[] =
    "179769313486231580793728971405303415079934132710037826936173"
    "778980444968292764750946649017977587207096330286416692887910"
    "946555547851940402630657488671505820681908902000708383676273"
    "854845817711531764475730270069855571366959622842914819860834"
    "936475292719074168444365510704342711559699508093042880177904"
    "174497792";

/* Whether a real overflows a double, decided exactly from its digits: by the
 * decimal exponent of its first significant digit, and at exponent 308 by
 * comparing the digits with overflow_digits. */
static bool real_overflows(const char *int_p, size_t int_n, const char *frac_p,
                           size_t frac_n, long long exp10) {
  const char *frac_end = frac_p != NULL ? frac_p + frac_n : NULL;
  const char *seg[2][2] = {{int_p, int_p + int_n}, {frac_p, frac_end}};
  long long e;
  size_t i;
  for (i = 0; i < int_n && int_p[i] == '0'; i++)
    ;
  if (i < int_n) {
    e = (long long)(int_n - 1 - i) + exp10;
    seg[0][0] = int_p + i;
  } else {
    for (i = 0; i < frac_n && frac_p[i] == '0'; i++)
      ;
    if (i == frac_n) return false; /* zero */
    e = -(long long)(i + 1) + exp10;
    seg[0][0] = frac_p + i;
    seg[0][1] = frac_end;
    seg[1][0] = seg[1][1] = NULL;
  }
  if (e != 308) return e > 308;
  size_t k = 0;
  for (int g = 0; g < 2; g++)
    for (const char *p = seg[g][0]; p != NULL && p < seg[g][1] && k < 309; p++, k++)
      if (*p != overflow_digits[k]) return *p > overflow_digits[k];
  for (; k < 309; k++) /* the number ran out of digits: the rest are zeros */
    if (overflow_digits[k] != '0') return false;
  return true; /* equal to the midpoint in its first 309 digits: it rounds up */
}

static int scan_number(turn__scan *s, turn__jval *v) {
  const char *p = s->p;
  const char *end = s->end;
  const char *start = p;
  bool negative = false;
  if (p < end && *p == '-') {
    negative = true;
    p++;
  }
  const char *int_p = p;
  if (p < end && *p == '0') {
    p++;
  } else if (p < end && *p >= '1' && *p <= '9') {
    while (p < end && is_digit(*p))
      p++;
  } else {
    return fail_byte(s, p);
  }
  size_t int_n = (size_t)(p - int_p);
  const char *frac_p = NULL;
  size_t frac_n = 0;
  bool is_int = true;
  long long exp10 = 0;
  if (p < end && *p == '.') {
    p++;
    frac_p = p;
    while (p < end && is_digit(*p))
      p++;
    frac_n = (size_t)(p - frac_p);
    if (frac_n == 0) return fail_byte(s, p);
    is_int = false;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    bool exp_negative = false;
    if (p < end && (*p == '+' || *p == '-')) exp_negative = *p++ == '-';
    if (p >= end || !is_digit(*p)) return fail_byte(s, p);
    while (p < end && is_digit(*p)) {
      /* Saturate far beyond any digit count a line can hold, so that a long
       * mantissa and a long exponent still cancel out exactly. */
      if (exp10 < 1000000000000000LL) exp10 = exp10 * 10 + (*p - '0');
      p++;
    }
    if (exp_negative) exp10 = -exp10;
    is_int = false;
  }
  if (is_int) {
    /* jansson reads integers as long long and refuses the rest ("too big integer"). */
    static const char max_pos[] = "9223372036854775807";
    static const char max_neg[] = "9223372036854775808";
    if (int_n > 19 ||
        (int_n == 19 && memcmp(int_p, negative ? max_neg : max_pos, 19) > 0))
      return fail(s, start, TURN_E_JSON);
  } else if (real_overflows(int_p, int_n, frac_p, frac_n, exp10)) {
    return fail(s, start, TURN_E_JSON);
  }
  v->kind = TURN__J_NUMBER;
  v->is_int = is_int;
  v->raw.p = start;
  v->raw.len = (size_t)(p - start);
  s->p = p;
  return TURN_OK;
}

static int scan_literal(turn__scan *s, const char *word, size_t len,
                        enum turn__jkind kind, turn__jval *v) {
  if ((size_t)(s->end - s->p) < len || memcmp(s->p, word, len) != 0) {
    const char *p = s->p;
    for (size_t i = 0; i < len && p < s->end && *p == word[i]; i++)
      p++;
    return fail_byte(s, p);
  }
  v->kind = kind;
  v->raw.p = s->p;
  v->raw.len = len;
  s->p += len;
  return TURN_OK;
}

/* A scalar at s->p (whitespace already skipped). */
static int scan_scalar(turn__scan *s, turn__jval *v, bool decode) {
  if (s->p >= s->end) return fail(s, s->p, TURN_E_JSON);
  switch (*s->p) {
  case '"': {
    turn_str inner;
    bool escaped;
    const char *start = s->p;
    int rv = scan_string_raw(s, &inner, &escaped);
    if (rv != TURN_OK) return rv;
    v->kind = TURN__J_STRING;
    v->raw.p = start;
    v->raw.len = (size_t)(s->p - start);
    v->str.p = NULL;
    v->str.len = 0;
    if (decode) return decode_string(s, inner, escaped, &v->str);
    return TURN_OK;
  }
  case 't':
    return scan_literal(s, "true", 4, TURN__J_TRUE, v);
  case 'f':
    return scan_literal(s, "false", 5, TURN__J_FALSE, v);
  case 'n':
    return scan_literal(s, "null", 4, TURN__J_NULL, v);
  default:
    return scan_number(s, v);
  }
}

/* Walks a whole object or array at s->p without recursion: one bit per open
 * container says object (1) or array (0). */
static int scan_container(turn__scan *s, turn__jval *v) {
  unsigned char is_object[TURN__JSON_MAX_DEPTH / 8];
  int top = 0;     /* containers open inside this call */
  int deepest = 1; /* the most levels seen: top, or top + 1 at a scalar */
  const char *start = s->p;
  turn__jval scalar;

open:
  if (s->depth + top + 1 > TURN__JSON_MAX_DEPTH) return fail(s, s->p, TURN_E_JSON);
  {
    bool obj = *s->p == '{';
    if (obj)
      is_object[top / 8] |= (unsigned char)(1u << (top % 8));
    else
      is_object[top / 8] &= (unsigned char)~(1u << (top % 8));
    top++;
    if (top > deepest) deepest = top;
    s->p++;
    turn__scan_ws(s);
    if (s->p < s->end && *s->p == (obj ? '}' : ']')) {
      s->p++;
      goto closed;
    }
    if (obj) goto key;
    goto value;
  }

key:
  if (s->p >= s->end || *s->p != '"') return fail_byte(s, s->p);
  {
    turn_str inner;
    bool escaped;
    int rv = scan_string_raw(s, &inner, &escaped);
    if (rv != TURN_OK) return rv;
  }
  turn__scan_ws(s);
  if (s->p >= s->end || *s->p != ':') return fail_byte(s, s->p);
  s->p++;
  turn__scan_ws(s);

value:
  if (s->p < s->end && (*s->p == '{' || *s->p == '[')) goto open;
  /* jansson counts every value's depth, scalars included. */
  if (s->depth + top + 1 > TURN__JSON_MAX_DEPTH) return fail(s, s->p, TURN_E_JSON);
  {
    int rv = scan_scalar(s, &scalar, false);
    if (top + 1 > deepest) deepest = top + 1;
    if (rv != TURN_OK) return rv;
  }

after_value:
  turn__scan_ws(s);
  if (s->p >= s->end) return fail(s, s->p, TURN_E_JSON);
  {
    bool obj = (is_object[(top - 1) / 8] >> ((top - 1) % 8)) & 1;
    if (*s->p == ',') {
      s->p++;
      turn__scan_ws(s);
      if (obj) goto key;
      goto value;
    }
    if (*s->p != (obj ? '}' : ']')) return fail_byte(s, s->p);
    s->p++;
  }

closed:
  top--;
  if (top > 0) goto after_value;
  v->kind = *start == '{' ? TURN__J_OBJECT : TURN__J_ARRAY;
  v->nest = deepest;
  v->raw.p = start;
  v->raw.len = (size_t)(s->p - start);
  return TURN_OK;
}

int turn__scan_value(turn__scan *s, turn__jval *v, bool decode) {
  turn__scan_ws(s);
  if (s->p < s->end && (*s->p == '{' || *s->p == '[')) return scan_container(s, v);
  v->nest = 1;
  return scan_scalar(s, v, decode);
}

int turn__scan_object_begin(turn__scan *s) {
  turn__scan_ws(s);
  if (s->p >= s->end || *s->p != '{') return fail_byte(s, s->p);
  if (s->depth + 1 > TURN__JSON_MAX_DEPTH) return fail(s, s->p, TURN_E_JSON);
  s->depth++;
  s->p++;
  turn__scan_ws(s);
  if (s->p < s->end && *s->p == '}') {
    s->p++;
    s->depth--;
    return 0;
  }
  return 1;
}

int turn__scan_key(turn__scan *s, turn_str *key) {
  if (s->p >= s->end || *s->p != '"') return fail_byte(s, s->p);
  turn_str inner;
  bool escaped;
  int rv = scan_string_raw(s, &inner, &escaped);
  if (rv != TURN_OK) return rv;
  if (escaped) {
    rv = decode_string(s, inner, true, key);
    if (rv != TURN_OK) return rv;
  } else {
    *key = inner;
  }
  turn__scan_ws(s);
  if (s->p >= s->end || *s->p != ':') return fail_byte(s, s->p);
  s->p++;
  turn__scan_ws(s);
  return TURN_OK;
}

static int container_next(turn__scan *s, char close) {
  turn__scan_ws(s);
  if (s->p >= s->end) return fail(s, s->p, TURN_E_JSON);
  if (*s->p == ',') {
    s->p++;
    turn__scan_ws(s);
    return 1;
  }
  if (*s->p != close) return fail_byte(s, s->p);
  s->p++;
  s->depth--;
  return 0;
}

int turn__scan_member_end(turn__scan *s) {
  return container_next(s, '}');
}

int turn__scan_array_begin(turn__scan *s) {
  turn__scan_ws(s);
  if (s->p >= s->end || *s->p != '[') return fail_byte(s, s->p);
  if (s->depth + 1 > TURN__JSON_MAX_DEPTH) return fail(s, s->p, TURN_E_JSON);
  s->depth++;
  s->p++;
  turn__scan_ws(s);
  if (s->p < s->end && *s->p == ']') {
    s->p++;
    s->depth--;
    return 0;
  }
  return 1;
}

int turn__scan_element_end(turn__scan *s) {
  return container_next(s, ']');
}

int turn__scan_finish(turn__scan *s) {
  turn__scan_ws(s);
  if (s->p != s->end) return fail_byte(s, s->p);
  return TURN_OK;
}

int turn__scan_not_object(turn__scan *s) {
  const char *start = s->p;
  turn__jval v;
  int rv = turn__scan_value(s, &v, false);
  if (rv == TURN_OK) rv = turn__scan_finish(s);
  if (rv != TURN_OK) return rv;
  s->err_off = (size_t)(start - s->beg);
  return TURN_E_NOT_OBJECT;
}

int turn__json_validate(const char *data, size_t len, turn_arena *arena) {
  (void)arena; /* validation decodes nothing */
  return turn__json_validate_at(data, len, 0);
}

int turn__json_validate_at(const char *data, size_t len, int depth) {
  turn__scan s;
  turn__jval v;
  turn__scan_init(&s, data, len, NULL);
  s.depth = depth;
  int rv = turn__scan_value(&s, &v, false);
  if (rv != TURN_OK) return rv;
  return turn__scan_finish(&s);
}
