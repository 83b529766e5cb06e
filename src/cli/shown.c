/* See shown.h. The protocol's strings are valid UTF-8 (libturn checks), so a C1
 * control arrives as its two-byte form, 0xC2 0x80..0x9F. */
#include "shown.h"

#include <stdbool.h>

static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */

static bool is_c1(const unsigned char *p, size_t left) {
  return left >= 2 && p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F;
}

void shown_write(FILE *f, turn_str s) {
  if (s.len == 0) return; /* s.p may then be NULL, which fwrite may not take */
  const unsigned char *p = (const unsigned char *)s.p;
  size_t from = 0; /* the start of the run not yet written */
  for (size_t i = 0; i < s.len;) {
    size_t bad = 0; /* bytes of a control character at i */
    if ((p[i] < 0x20 && p[i] != '\n' && p[i] != '\t') || p[i] == 0x7F)
      bad = 1;
    else if (is_c1(p + i, s.len - i))
      bad = 2;
    if (bad == 0) {
      i++;
      continue;
    }
    fwrite(p + from, 1, i - from, f);
    fputs(replacement, f);
    i += bad;
    from = i;
  }
  fwrite(p + from, 1, s.len - from, f);
}
