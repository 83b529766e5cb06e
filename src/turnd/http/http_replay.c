/* A stored turn streamed to a reader (see http_replay.h). Each slice is read
 * when the one before has left turnd's buffer, so a slow reader holds at most
 * one slice. */
#include "http_replay.h"

#include "auth/auth.h"
#include "conn_watch.h"
#include "daemon.h"
#include "http_reply.h"
#include "run/run.h"

#include <event2/buffer.h>
#include <event2/http.h>
#include <stdlib.h>
#include <string.h>

struct replay {
  struct turnd *d;
  struct evhttp_request *req;     /* the streaming answer */
  struct evhttp_connection *conn; /* req's connection: its close ends us */
  char turn[64];
  uint64_t next_seq; /* first seq not yet sent */
  int64_t device;    /* the paired device reading: unpaired, it gets no more */
};

static void replay_free(struct replay *rp) {
  if (rp->conn != NULL) conn_watch_set_closecb(rp->conn, NULL, NULL);
  free(rp);
}

/* The reader went away: ending the answer frees the request (conn_watch.h). */
static void on_close(struct evhttp_connection *conn, void *arg) {
  (void)conn;
  struct replay *rp = arg;
  conn_watch_stream_gone(rp->req, &rp->conn);
  replay_free(rp);
}

static void on_written(struct evhttp_connection *conn, void *arg);

/* Sends the next slice, or ends the answer when there is none. */
static void replay_next(struct replay *rp) {
  struct evbuffer *out = evbuffer_new();
  if (out == NULL || !auth_device_paired(rp->d, rp->device) ||
      replay_slice(rp->d, rp->turn, &rp->next_seq, UINT64_MAX, out) != 0 ||
      evbuffer_get_length(out) == 0) {
    /* The end, a store that cannot be read, or a device unpaired meanwhile:
     * the reader sees the stream stop short of its end event and may come
     * back (and then gets 401). */
    if (out != NULL) evbuffer_free(out);
    struct evhttp_request *req = rp->req;
    replay_free(rp); /* first: ending an HTTP/1.0 answer may close at once */
    evhttp_send_reply_end(req);
    return;
  }
  evhttp_send_reply_chunk_with_cb(rp->req, out, on_written, rp);
  evbuffer_free(out);
}

static void on_written(struct evhttp_connection *conn, void *arg) {
  (void)conn;
  replay_next(arg);
}

int http_replay_start(struct turnd *d, struct evhttp_request *req, const char *turn,
                      uint64_t next_seq, int64_t device) {
  struct replay *rp = calloc(1, sizeof *rp);
  if (rp == NULL || strlen(turn) >= sizeof rp->turn) {
    free(rp);
    return -1;
  }
  rp->d = d;
  rp->req = req;
  rp->conn = evhttp_request_get_connection(req);
  memcpy(rp->turn, turn, strlen(turn) + 1);
  rp->next_seq = next_seq;
  rp->device = device;
  conn_watch_set_closecb(rp->conn, on_close, rp);
  http_stream_start(req);
  replay_next(rp);
  return 0;
}
