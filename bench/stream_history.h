/* Internal to the stream generator: the history document writer of
 * stream_history.c. Blocks go to the open document in st->history, each recorded
 * in st->blocks; a finished document is recorded in st->docs. */
#ifndef BENCH_STREAM_HISTORY_H
#define BENCH_STREAM_HISTORY_H

#include "stream_content.h"

/* Opens the document of a new session of n_turns turns and makes its id, kept in
 * g->session for the turns' events. Clobbers g->text. */
void stream_history_begin(struct gen *g, uint32_t n_turns);

/* Closes the open document, if any. */
void stream_history_end(struct gen *g);

/* Appends b to the open document, with a made-up "at" (null 1 in 20 times); does
 * nothing when none is open. Borrows b's strings: they are copied into st->history. */
void stream_history_add_block(struct gen *g, turn_block b);

/* Writes the reasoning and reply deltas gathered in g->thought and g->reply since
 * the last flush as one block each (empty ones are skipped), then clears both. */
void stream_history_flush_text(struct gen *g);

#endif
