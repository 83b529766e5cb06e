/* A turn's recorded lines read back from the store, a slice at a time: for a
 * turn that is no longer in memory (ended long ago, or before a restart;
 * http_replay.h streams those), and for a live turn's reader that fell behind
 * what the turn still holds. */
#ifndef TURND_REPLAY_H
#define TURND_REPLAY_H

#include <stdint.h>

struct turnd;
struct evbuffer;

/* Appends to out the recorded lines of turn from seq *next_seq on, up to about a
 * slice (64 KiB) and before stop_seq, and advances *next_seq past them. Also
 * what a live turn's reader gets for the lines its turn no longer holds in
 * memory. Returns 0, or -1 when the store cannot be read. */
int replay_slice(struct turnd *d, const char *turn, uint64_t *next_seq, uint64_t stop_seq,
                 struct evbuffer *out);

#endif
