/* Text made safe to show (turn_safe_text in turn.h): the one routine every
 * program uses for text from outside, so a log line, a terminal and a page all
 * get the same guarantee. It decodes with turn_utf8_decode, so what it keeps is
 * valid UTF-8, and it cuts only between characters. */
#include "turn/turn.h"

#include <string.h>

static const char fffd[] = "\xEF\xBF\xBD"; /* U+FFFD */

/* Whether code point cp is one flags say to replace: controls always. */
static bool unsafe(uint32_t cp, unsigned flags) {
  if ((flags & TURN_SAFE_KEEP_LINES) && (cp == '\n' || cp == '\t')) return false;
  if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) return true;
  return (flags & TURN_SAFE_BIDI) &&
         (cp == 0x061C || cp == 0x200E || cp == 0x200F || cp == 0x2028 || cp == 0x2029 ||
          (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069));
}

size_t turn_safe_text(char *out, size_t cap, const char *text, size_t len, unsigned flags,
                      size_t *used) {
  const char *repl = flags & TURN_SAFE_FFFD ? fffd : " ";
  size_t repl_len = strlen(repl);
  size_t w = 0, i = 0;
  while (i < len) {
    uint32_t cp = 0;
    size_t n = turn_utf8_decode(text + i, len - i, &cp);
    if (n == 0 || unsafe(cp, flags)) {
      if (repl_len > cap - w) break;
      memcpy(out + w, repl, repl_len);
      w += repl_len;
      i += n == 0 ? 1 : n; /* a byte that starts nothing goes alone */
      continue;
    }
    if (n > cap - w) break;
    memcpy(out + w, text + i, n);
    w += n;
    i += n;
  }
  if (used != NULL) *used = i;
  if (!(flags & TURN_SAFE_TRIM)) return w;
  /* Trimmed after the cut, so the cut falls where it would untrimmed. */
  while (w > 0 && out[w - 1] == ' ')
    w--;
  size_t start = 0;
  while (start < w && out[start] == ' ')
    start++;
  memmove(out, out + start, w - start);
  return w - start;
}
