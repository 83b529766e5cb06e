/* UTF-8 as JSON and the protocol need it: strict validation (no overlongs, no
 * surrogates, nothing past U+10FFFF, the same rules jansson applies), code point
 * counting, and a word-at-a-time test for bytes that need a closer look. */
#ifndef TURN_PROTO_UTF8_H
#define TURN_PROTO_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Length (2-4) of the valid multi-byte sequence at p[0..avail), or 0 if it is not
 * one. p[0] must be >= 0x80. */
size_t turn__utf8_seq_len(const unsigned char *p, size_t avail);
/* True when s[0..len) is valid UTF-8. */
bool turn__utf8_valid(const char *s, size_t len);
/* Bytes taken by the first n code points of valid UTF-8 s[0..len). */
size_t turn__utf8_prefix(const char *s, size_t len, size_t n);
/* Code points in valid UTF-8 s[0..len). */
size_t turn__utf8_count(const char *s, size_t len);

#define TURN__ONES  0x0101010101010101ULL
#define TURN__HIGHS 0x8080808080808080ULL

static inline uint64_t turn__load8(const char *p) {
  uint64_t x;
  memcpy(&x, p, sizeof x);
  return x;
}

static inline uint64_t turn__has_zero8(uint64_t x) {
  return (x - TURN__ONES) & ~x & TURN__HIGHS;
}

/* Nonzero when any of the 8 bytes is '"', '\\', a control character (< 0x20) or
 * non-ASCII (>= 0x80): the bytes a JSON string scanner or escaper must stop at.
 * Exact as a yes/no test; the position is found byte by byte afterwards. */
static inline uint64_t turn__json_special8(uint64_t x) {
  uint64_t quote = turn__has_zero8(x ^ (TURN__ONES * '"'));
  uint64_t backslash = turn__has_zero8(x ^ (TURN__ONES * '\\'));
  uint64_t control = (x - TURN__ONES * 0x20) & ~x & TURN__HIGHS;
  return quote | backslash | control | (x & TURN__HIGHS);
}

/* How many bytes at the start of a word are certainly not special, given its
 * nonzero turn__json_special8 mask. The subtractions can only flag false bytes
 * above a truly special one, so on a little-endian machine the lowest flagged byte
 * is exact; elsewhere this says 0 and the caller goes byte by byte. */
static inline size_t turn__clean_prefix8(uint64_t mask) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  return (size_t)__builtin_ctzll(mask) >> 3;
#else
  (void)mask;
  return 0;
#endif
}

#endif
