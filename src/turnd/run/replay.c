/* Replay from the store (see replay.h). Each slice is read when the one before
 * has left turnd's buffer, so a slow reader holds at most one slice, and the
 * store is never read for more than about REPLAY_SLICE bytes at a time. */
#include "replay.h"

#include "auth/auth.h"
#include "daemon.h"
#include "http/conn_watch.h"
#include "http/http_reply.h"
#include "store/store.h"

#include <event2/buffer.h>
#include <event2/http.h>
#include <stdlib.h>
#include <string.h>

#define REPLAY_SLICE (64u * 1024u)

struct replay {
  struct turnd *d;
  struct evhttp_request *req;     /* the streaming answer */
  struct evhttp_connection *conn; /* req's connection: its close ends us */
  char turn[64];
  uint64_t next_seq; /* first seq not yet sent */
  int64_t device;    /* the paired device reading: unpaired, it gets no more */
};

struct slice {
  struct evbuffer *out;
  uint64_t next_seq; /* advanced past each line taken */
  uint64_t stop_seq; /* lines from this seq on are not taken */
  int failed;
};

/* Takes the lines of a chunk at or after next_seq; stops once the slice is full. */
static int take_chunk(void *ctx, const char *turn, uint64_t first_seq, uint64_t n,
                      uint64_t at_ms, const char *lines, size_t len) {
  (void)turn;
  (void)at_ms;
  struct slice *sl = ctx;
  const char *p = lines, *end = lines + len;
  for (uint64_t seq = first_seq; seq < first_seq + n && p < end; seq++) {
    if (seq >= sl->stop_seq) return 1;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *next = nl != NULL ? nl + 1 : end;
    if (seq == sl->next_seq) {
      if (evbuffer_add(sl->out, p, (size_t)(next - p)) != 0) {
        sl->failed = 1;
        return 1;
      }
      sl->next_seq++;
    }
    p = next;
  }
  return evbuffer_get_length(sl->out) >= REPLAY_SLICE ? 1 : 0;
}

static void replay_free(struct replay *rp) {
  if (rp->conn != NULL) conn_watch_set_closecb(rp->conn, NULL, NULL);
  free(rp);
}

/* The reader went away: ending the answer frees the request (see run.c). */
static void on_close(struct evhttp_connection *conn, void *arg) {
  (void)conn;
  struct replay *rp = arg;
  conn_watch_set_closecb(rp->conn, NULL, NULL);
  rp->conn = NULL;
  evhttp_send_reply_end(rp->req);
  replay_free(rp);
}

static void on_written(struct evhttp_connection *conn, void *arg);

int replay_slice(struct turnd *d, const char *turn, uint64_t *next_seq, uint64_t stop_seq,
                 struct evbuffer *out) {
  struct slice sl = {out, *next_seq, stop_seq, 0};
  if (store_turn_events_each(d->store, turn, *next_seq, take_chunk, &sl) < 0 || sl.failed)
    return -1;
  *next_seq = sl.next_seq;
  return 0;
}

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

int replay_start(struct turnd *d, struct evhttp_request *req, const char *turn,
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
