/* The compact form of JSON text: no whitespace outside strings, strings
 * escaped as the encoder escapes them, numbers as written. It is canonical, so
 * every producer of an input field cuts it at the same place, and never longer
 * than the text, so it fits where the text did. */
#include "json_compact.h"

#include "json_write.h"

static bool is_ws(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int turn__json_compact(const char *text, size_t len, turn_arena *arena, turn_str *out) {
  char *w = turn_arena_alloc(arena, len + 1);
  if (w == NULL) return TURN_E_NOMEM;
  /* cap == alloc: the buffer can never be reallocated, which it must not be,
   * living in the arena; the compact form fits since it is never longer. */
  turn_buf b = {w, 0, len + 1, len + 1, NULL};
  turn__scan s;
  turn__scan_init(&s, text, len, arena);
  size_t i = 0;
  while (i < len) {
    if (is_ws(text[i])) {
      i++;
      continue;
    }
    int rv;
    if (text[i] != '"') {
      size_t run = i;
      while (run < len && text[run] != '"' && !is_ws(text[run]))
        run++;
      rv = turn_buf_append(&b, text + i, run - i);
      i = run;
    } else {
      /* A string: decode it, then write it back in canonical escaping. */
      s.p = text + i;
      turn__jval v;
      rv = turn__scan_value(&s, &v, true);
      if (rv == TURN_OK) rv = turn__json_write_str(&b, v.str.p, v.str.len);
      i = (size_t)(s.p - text);
    }
    if (rv != TURN_OK) return rv;
  }
  w[b.len] = '\0';
  out->p = w;
  out->len = b.len;
  return TURN_OK;
}
