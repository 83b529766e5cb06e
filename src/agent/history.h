/* A session's history blocks, built by the spec's rules from what the store
 * keeps: the messages (the truth: which blocks there are, in which order) and
 * the recorded events (the details of each tool call: tier, status, approval,
 * summary, duration; and the notices, placed by time). No I/O: the shell feeds
 * it rows and takes the JSON.
 *
 * Choices where the spec leaves room: a tool block's duration runs from its input
 * being complete (or its approval being decided, when later) to its result; a
 * block's "at" is its message's time; consecutive text blocks of one message are
 * joined without a separator; a notice goes among the blocks of its own turn,
 * after every block not later than it. */
#ifndef TURND_AGENT_HISTORY_H
#define TURND_AGENT_HISTORY_H

#include "turn/turn.h"

#include <stddef.h>
#include <stdint.h>

struct history;

struct history *history_new(void); /* NULL: out of memory */
void history_free(struct history *h);

/* Feed the recorded events of each turn, chunk by chunk in seq order (borrows;
 * lines that do not parse are skipped), then the messages in order. Each
 * returns 0, or -1 when out of memory. */
int history_add_events(struct history *h, const char *turn, uint64_t at_ms,
                       const char *lines, size_t len);
int history_add_message(struct history *h, const char *turn, uint64_t at_ms,
                        const char *json);

/* Appends the JSON array of blocks to out. Returns 0, or -1 when out of memory. */
int history_blocks(struct history *h, turn_buf *out);

/* Unix milliseconds as ISO 8601 UTC with milliseconds into out[25]. */
void history_iso8601(uint64_t ms, char out[25]);

#endif
