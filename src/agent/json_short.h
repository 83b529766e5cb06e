/* JSON text from jansson values, with every real number in the fewest
 * significant digits that read back as the same value. jansson writes reals
 * with 17 digits unless told fewer, so a tool's 0.1 would reach the tool, the
 * owner's approval and the history as 0.10000000000000001. No I/O. */
#ifndef TURND_AGENT_JSON_SHORT_H
#define TURND_AGENT_JSON_SHORT_H

#include <jansson.h>
#include <stddef.h>

/* json_dumps(v, flags) with the fewest digits, 15 to 17, at which every real
 * in v reads back unchanged: one count for the whole value, so a single real
 * that needs 17 digits gives all of them 17 (15 alone would change some: 0.1 +
 * 0.2 is 0.30000000000000004, not 0.3). A text past 256 KiB keeps 17 digits
 * (exact, only longer), at the cost of one dump. flags must not hold a
 * JSON_REAL_PRECISION. Returns the text to free(), or NULL when out of memory. */
char *json_dumps_shortest(const json_t *v, size_t flags);

#endif
