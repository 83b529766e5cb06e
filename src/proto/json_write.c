/* JSON output: string escaping, integers and Python-style doubles. The escaping is
 * the protocol's canonical form: only '"', '\\' and control characters are escaped
 * (the short forms where JSON has them, \u00XX otherwise); everything else,
 * non-ASCII included, goes out as UTF-8. NUL has no place in the protocol's JSON
 * (jansson refuses \u0000), so like invalid UTF-8 it becomes U+FFFD. */
#include "json_write.h"

#include "number.h"
#include "utf8.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char hex_digits[] = "0123456789abcdef";

/* The escape for a byte below 0x20, '"' or '\\'; returns its length. */
static size_t escape_byte(unsigned char c, char esc[6]) {
  esc[0] = '\\';
  switch (c) {
  case '"':
    esc[1] = '"';
    return 2;
  case '\\':
    esc[1] = '\\';
    return 2;
  case '\b':
    esc[1] = 'b';
    return 2;
  case '\f':
    esc[1] = 'f';
    return 2;
  case '\n':
    esc[1] = 'n';
    return 2;
  case '\r':
    esc[1] = 'r';
    return 2;
  case '\t':
    esc[1] = 't';
    return 2;
  default:
    esc[1] = 'u';
    esc[2] = '0';
    esc[3] = '0';
    esc[4] = hex_digits[c >> 4];
    esc[5] = hex_digits[c & 15];
    return 6;
  }
}

int turn__json_write_str(turn_buf *out, const char *s, size_t len) {
  /* Worst case is 6 output bytes per input byte; reserving that up front keeps the
   * loop free of bound checks, and for the short strings of a stream it is cheap. */
  size_t worst = len > (SIZE_MAX - 2) / 6 ? SIZE_MAX : len * 6 + 2;
  int rv = turn_buf_reserve(out, worst);
  if (rv == TURN_E_TOOBIG) {
    /* The cap may still hold the real (shorter) escaped text: count it exactly. */
    worst = 2;
    for (size_t i = 0; i < len;) {
      unsigned char c = (unsigned char)s[i];
      char esc[6];
      if (c == 0) {
        worst += 3;
        i++;
      } else if (c < 0x20 || c == '"' || c == '\\') {
        worst += escape_byte(c, esc);
        i++;
      } else if (c < 0x80) {
        worst++;
        i++;
      } else {
        size_t n = turn__utf8_seq_len((const unsigned char *)s + i, len - i);
        worst += n ? n : 3;
        i += n ? n : 1;
      }
    }
    rv = turn_buf_reserve(out, worst);
  }
  if (rv != TURN_OK) return rv;

  char *w = out->data + out->len;
  *w++ = '"';
  size_t i = 0;
  while (i < len) {
    if (i + 8 <= len) {
      uint64_t special = turn__json_special8(turn__load8(s + i));
      size_t plain = special == 0 ? 8 : turn__clean_prefix8(special);
      memcpy(w, s + i, 8); /* the reserve above leaves room for 8 */
      w += plain;
      i += plain;
      if (plain == 8) continue;
    }
    unsigned char c = (unsigned char)s[i];
    if (c == 0) {
      memcpy(w, "\xEF\xBF\xBD", 3);
      w += 3;
      i++;
    } else if (c < 0x20 || c == '"' || c == '\\') {
      w += escape_byte(c, w);
      i++;
    } else if (c < 0x80) {
      *w++ = (char)c;
      i++;
    } else {
      size_t n = turn__utf8_seq_len((const unsigned char *)s + i, len - i);
      if (n == 0) {
        memcpy(w, "\xEF\xBF\xBD", 3); /* U+FFFD for each byte that starts no sequence */
        w += 3;
        i++;
      } else {
        memcpy(w, s + i, n);
        w += n;
        i += n;
      }
    }
  }
  *w++ = '"';
  out->len = (size_t)(w - out->data);
  return TURN_OK;
}

int turn__json_write_u64(turn_buf *out, uint64_t v) {
  char tmp[20];
  size_t n = 0;
  do {
    tmp[sizeof tmp - 1 - n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  return turn_buf_append(out, tmp + sizeof tmp - n, n);
}

int turn__json_write_i64(turn_buf *out, int64_t v) {
  if (v >= 0) return turn__json_write_u64(out, (uint64_t)v);
  int rv = turn_buf_append(out, "-", 1);
  if (rv != TURN_OK) return rv;
  return turn__json_write_u64(out, (uint64_t)0 - (uint64_t)v);
}

int turn__json_write_double(turn_buf *out, double v) {
  char tmp[32];
  size_t n = turn__format_double(v, tmp);
  if (n == 0) return TURN_E_INVALID;
  return turn_buf_append(out, tmp, n);
}
