/* Streaming a turn that is no longer in memory (ended long ago, or before a
 * restart) from the store's recorded events, slice by slice as the reader takes
 * them, like a follower of a live run. */
#ifndef TURND_HTTP_REPLAY_H
#define TURND_HTTP_REPLAY_H

#include <stdint.h>

struct turnd;
struct evhttp_request;

/* Streams the recorded events of turn from seq next_seq on, then ends the
 * answer, for the paired device `device`: unpaired, it gets no further slice.
 * Returns 0, or -1 (req not answered yet: the caller sends the error). */
int http_replay_start(struct turnd *d, struct evhttp_request *req, const char *turn,
                      uint64_t next_seq, int64_t device);

#endif
