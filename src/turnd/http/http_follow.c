/* A live turn's reader over HTTP (see http_follow.h). */
#include "http_follow.h"

#include "conn_watch.h"
#include "http_reply.h"
#include "run/run.h"

#include <event2/http.h>
#include <stdlib.h>

struct http_out {
  struct reader_out base;         /* first: the run holds &base */
  struct evhttp_request *req;     /* the streaming answer */
  struct evhttp_connection *conn; /* req's connection: its close ends us */
};

static void out_free(struct http_out *o) {
  if (o->conn != NULL) conn_watch_set_closecb(o->conn, NULL, NULL);
  free(o);
}

/* The client went away: ending the answer frees the request (conn_watch.h). */
static void on_close(struct evhttp_connection *conn, void *arg) {
  (void)conn;
  struct http_out *o = arg;
  conn_watch_stream_gone(o->req, &o->conn);
  run_reader_gone(o->base.reader);
  out_free(o);
}

static void on_written(struct evhttp_connection *conn, void *arg) {
  (void)conn;
  struct http_out *o = arg;
  run_reader_written(o->base.reader);
}

static void out_start(struct reader_out *base) {
  struct http_out *o = (struct http_out *)base;
  conn_watch_set_closecb(o->conn, on_close, o);
  http_stream_start(o->req);
}

static void out_send(struct reader_out *base, struct evbuffer *buf, bool written) {
  struct http_out *o = (struct http_out *)base;
  if (written)
    evhttp_send_reply_chunk_with_cb(o->req, buf, on_written, o);
  else
    evhttp_send_reply_chunk(o->req, buf);
}

static bool out_write_now(struct reader_out *base) {
  return http_stream_write_now(((struct http_out *)base)->req);
}

/* o goes first: ending an HTTP/1.0 answer can free the connection at once,
 * which would call our close callback on a freed request. */
static void out_end(struct reader_out *base) {
  struct http_out *o = (struct http_out *)base;
  struct evhttp_request *req = o->req;
  out_free(o);
  evhttp_send_reply_end(req);
}

static void out_cut(struct reader_out *base) {
  struct http_out *o = (struct http_out *)base;
  struct evhttp_request *req = o->req;
  out_free(o);
  http_stream_abort(req);
}

static const struct reader_out_ops http_out_ops = {out_start, out_send, out_write_now,
                                                   out_end, out_cut};

int http_follow(struct run *r, struct evhttp_request *req, uint64_t next_seq,
                int64_t device) {
  struct http_out *o = calloc(1, sizeof *o);
  if (o == NULL) return -1;
  o->base.ops = &http_out_ops;
  o->req = req;
  o->conn = evhttp_request_get_connection(req);
  if (run_follow(r, &o->base, next_seq, device) != 0) {
    free(o);
    return -1;
  }
  return 0;
}
