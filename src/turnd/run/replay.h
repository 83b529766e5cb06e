/* Replaying a turn that is no longer in memory (ended long ago, or before a
 * restart) from the store's recorded events, slice by slice as the reader takes
 * them, like a follower of a live run. */
#ifndef TURND_REPLAY_H
#define TURND_REPLAY_H

#include <stdint.h>

struct turnd;
struct evbuffer;
struct evhttp_request;

/* Streams the recorded events of turn from seq next_seq on, then ends the
 * answer, for the paired device `device`: unpaired, it gets no further slice.
 * Returns 0, or -1 (req not answered yet: the caller sends the error). */
int replay_start(struct turnd *d, struct evhttp_request *req, const char *turn,
                 uint64_t next_seq, int64_t device);

/* Appends to out the recorded lines of turn from seq *next_seq on, up to about a
 * slice (64 KiB) and before stop_seq, and advances *next_seq past them. Also
 * what a live turn's reader gets for the lines its turn no longer holds in
 * memory. Returns 0, or -1 when the store cannot be read. */
int replay_slice(struct turnd *d, const char *turn, uint64_t *next_seq, uint64_t stop_seq,
                 struct evbuffer *out);

#endif
