/* A live turn's reader over HTTP: the streaming answer a run hands its lines to
 * (run.h's reader_out), made of a GET /api/turns/<turn> or a POST /api/turns. */
#ifndef TURND_HTTP_FOLLOW_H
#define TURND_HTTP_FOLLOW_H

#include <stdint.h>

struct run;
struct evhttp_request;

/* Streams r to req from seq next_seq on, to its end, for the paired device
 * `device`. Returns 0, or -1 (req not answered yet: the caller sends the
 * error). */
int http_follow(struct run *r, struct evhttp_request *req, uint64_t next_seq,
                int64_t device);

#endif
