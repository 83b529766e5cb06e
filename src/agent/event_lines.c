/* Walking recorded event lines (see event_lines.h). */
#include "event_lines.h"

#include <string.h>

int event_lines_each(turn_arena *arena, const char *lines, size_t len, event_lines_cb *cb,
                     void *ctx) {
  const char *p = lines, *end = lines + len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
    turn_event ev;
    turn_arena_reset(arena);
    int rc = turn_event_parse(&ev, arena, p, n, NULL);
    if (rc <= TURN_E_NOMEM) return -1;
    if (rc == TURN_OK) {
      int stop = cb(ctx, &ev);
      if (stop != 0) return stop;
    }
    p += n + 1;
  }
  return 0;
}
