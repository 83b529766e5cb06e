/* Strict UTF-8 decoding, validation, counting and cutting; see utf8.h for the
 * rules. The public turn_utf8_decode and turn_utf8_cut are the only UTF-8
 * decoder and cutter the other programs use. */
#include "utf8.h"

#include "turn/turn.h"

size_t turn__utf8_seq_len(const unsigned char *p, size_t avail) {
  unsigned c = p[0];
  size_t n;
  unsigned lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0)
      lo = 0xA0; /* overlong */
    else if (c == 0xED)
      hi = 0x9F; /* surrogates */
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0)
      lo = 0x90; /* overlong */
    else if (c == 0xF4)
      hi = 0x8F; /* past U+10FFFF */
  } else {
    return 0;
  }
  if (avail < n) return 0;
  if (p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < n; i++)
    if ((p[i] & 0xC0) != 0x80) return 0;
  return n;
}

bool turn__utf8_valid(const char *s, size_t len) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < len) {
    if (i + 8 <= len && (turn__load8(s + i) & TURN__HIGHS) == 0) {
      i += 8;
      continue;
    }
    if (p[i] < 0x80) {
      i++;
      continue;
    }
    size_t n = turn__utf8_seq_len(p + i, len - i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

size_t turn__utf8_prefix(const char *s, size_t len, size_t n) {
  size_t i = 0;
  while (i < len && n > 0) {
    i++;
    while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80)
      i++;
    n--;
  }
  return i;
}

size_t turn__utf8_count(const char *s, size_t len) {
  size_t n = 0;
  for (size_t i = 0; i < len; i++)
    n += ((unsigned char)s[i] & 0xC0) != 0x80;
  return n;
}

size_t turn_utf8_decode(const char *s, size_t len, uint32_t *cp) {
  const unsigned char *p = (const unsigned char *)s;
  if (len == 0) return 0;
  size_t n = p[0] < 0x80 ? 1 : turn__utf8_seq_len(p, len);
  if (n == 0) return 0;
  if (cp != NULL) {
    /* The lead byte keeps 7, 5, 4 or 3 bits; each continuation 6. */
    uint32_t c = n == 1 ? p[0] : p[0] & (0x7Fu >> n);
    for (size_t i = 1; i < n; i++)
      c = c << 6 | (p[i] & 0x3Fu);
    *cp = c;
  }
  return n;
}

size_t turn_utf8_cut(const char *s, size_t len, size_t max) {
  if (len <= max) return len;
  size_t n = max;
  /* s[n] exists (n < len): while it continues a character, the cut moves back
   * before that character's start, which is at most three bytes back. */
  for (int back = 0; back < 3 && n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80; back++)
    n--;
  return n;
}
