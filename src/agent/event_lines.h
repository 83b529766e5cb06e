/* A chunk of a turn's recorded events, as the store keeps them (NDJSON lines
 * in seq order), read event by event: what the rebuilds at start-up walk (the
 * conversation's messages, the calls left open). No I/O. */
#ifndef TURND_AGENT_EVENT_LINES_H
#define TURND_AGENT_EVENT_LINES_H

#include "turn/turn.h"

#include <stddef.h>

/* Gets each event in order; ev's strings live in the walk's arena until the
 * next line. A nonzero return stops the walk, which returns it. */
typedef int event_lines_cb(void *ctx, const turn_event *ev);

/* Parses each line of lines[0..len) ("\n" between lines; the last one may lack
 * it) into arena, reset before each, and hands cb every event; a line that
 * does not parse is skipped. Returns 0, cb's nonzero return, or -1 when out of
 * memory. */
int event_lines_each(turn_arena *arena, const char *lines, size_t len, event_lines_cb *cb,
                     void *ctx);

#endif
