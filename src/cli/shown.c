/* See shown.h. The protocol's strings are valid UTF-8 (libturn checks); the
 * one routine that makes text safe (turn_safe_text) does the replacing, a
 * buffer at a time. */
#include "shown.h"

void shown_write(FILE *f, turn_str s) {
  char buf[4096];
  for (size_t i = 0; i < s.len;) {
    size_t used;
    size_t n = turn_safe_text(buf, sizeof buf, s.p + i, s.len - i,
                              TURN_SAFE_KEEP_LINES | TURN_SAFE_FFFD, &used);
    fwrite(buf, 1, n, f);
    i += used; /* > 0: a buffer of 4 bytes or more takes a character */
  }
}
