/* JSON output: string escaping, integers and Python-style doubles. The escaping is
 * the protocol's canonical form: only '"', '\\' and control characters are escaped
 * (the short forms where JSON has them, \u00XX otherwise); everything else,
 * non-ASCII included, goes out as UTF-8. NUL has no place in the protocol's JSON
 * (jansson refuses \u0000), so like invalid UTF-8 it becomes U+FFFD. */
#include "json_write.h"

#include "number.h"
#include "utf8.h"

#include <stdio.h>
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

/* The output for the special byte at s[0] (one turn__json_special8 flags) into w,
 * which has room for 6 bytes: an escape, a whole UTF-8 sequence copied, or U+FFFD
 * for NUL and for a byte that starts no valid sequence. Sets *used to the input
 * bytes taken; returns the output bytes made. The writer and the counter below
 * both go through here, so they cannot disagree on a length. */
static inline size_t special_out(const char *s, size_t avail, char w[6], size_t *used) {
  unsigned char c = (unsigned char)s[0];
  *used = 1;
  if (c == 0) {
    memcpy(w, "\xEF\xBF\xBD", 3);
    return 3;
  }
  if (c < 0x20 || c == '"' || c == '\\') return escape_byte(c, w);
  if (c < 0x80) {
    w[0] = (char)c;
    return 1;
  }
  size_t n = turn__utf8_seq_len((const unsigned char *)s, avail);
  if (n == 0) {
    memcpy(w, "\xEF\xBF\xBD", 3);
    return 3;
  }
  memcpy(w, s, n);
  *used = n;
  return n;
}

/* Bytes the escaped text of s[0..len) takes, quotes included. */
static size_t escaped_len(const char *s, size_t len) {
  size_t n = 2;
  char scratch[6];
  for (size_t i = 0; i < len;) {
    size_t used;
    n += special_out(s + i, len - i, scratch, &used);
    i += used;
  }
  return n;
}

int turn__json_write_str(turn_buf *out, const char *s, size_t len) {
  /* Worst case is 6 output bytes per input byte; reserving that up front keeps
   * the common short string to one pass. When the cap cannot hold the worst case,
   * the exact length decides. */
  size_t worst = len > (SIZE_MAX - 2) / 6 ? SIZE_MAX : len * 6 + 2;
  int rv = turn_buf_reserve(out, worst);
  if (rv == TURN_E_TOOBIG) rv = turn_buf_reserve(out, escaped_len(s, len));
  if (rv != TURN_OK) return rv;

  /* Below, w never passes the reservation: every input byte makes at least one
   * output byte, so while 8 input bytes remain, 8 bytes of room remain too. */
  char *w = out->data + out->len;
  *w++ = '"';
  size_t i = 0;
  while (i < len) {
    if (len - i >= 8) {
      uint64_t special = turn__json_special8(turn__load8(s + i));
      size_t plain = special == 0 ? 8 : turn__clean_prefix8(special);
      memcpy(w, s + i, 8);
      w += plain;
      i += plain;
      if (plain == 8) continue;
    }
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') { /* the short tail */
      *w++ = (char)c;
      i++;
      continue;
    }
    size_t used;
    w += special_out(s + i, len - i, w, &used);
    i += used;
  }
  *w++ = '"';
  out->len = (size_t)(w - out->data);
  return TURN_OK;
}

int turn_buf_append_json_string(turn_buf *b, const char *s, size_t len) {
  return turn__json_write_str(b, s, len);
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
