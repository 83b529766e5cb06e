/* The compact, canonical form of valid JSON text (json_compact.c), which input
 * fields carry and compare. */
#ifndef TURN_PROTO_JSON_COMPACT_H
#define TURN_PROTO_JSON_COMPACT_H

#include "json_scan.h"

/* The compact form of valid JSON text[0..len) (no whitespace outside strings,
 * strings escaped canonically, numbers as written), in the arena. It is never
 * longer than the text. Returns TURN_OK or TURN_E_NOMEM. */
int turn__json_compact(const char *text, size_t len, turn_arena *arena, turn_str *out);

#endif
