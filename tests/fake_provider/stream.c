/* A streamed reply (see stream.h). The trap is libevent's ownership of the
 * request: while our reply is unfinished and the client goes away, evhttp takes
 * the request off its connection (req->evcon = NULL), frees the connection and
 * leaves the request to us; once we end the reply, evhttp frees both by itself.
 *
 * States:
 *
 *   QUEUED --start--> SENDING --last event, END--> DONE
 *                      |  ^ |--last event, STALL--> STALLED --client left--> DONE
 *                      +--+ +--last event, CUT--> CUTTING --flushed--> DONE
 *                    timer                          (or client left) -------^
 *   SENDING --client left--> DONE
 *
 *   QUEUED  -> SENDING [stream_start]
 *   SENDING -> SENDING [on_timer: events left]
 *   SENDING -> DONE    [on_timer: STREAM_END, evhttp_send_reply_end]
 *   SENDING -> STALLED [on_timer: STREAM_STALL]
 *   SENDING -> CUTTING [on_timer: STREAM_CUT, the last event with a flush callback]
 *   CUTTING -> DONE    [on_timer, woken by on_flushed: evhttp_connection_free]
 *   SENDING, STALLED, CUTTING -> DONE [on_close: the client left]
 *
 * In SENDING, STALLED and CUTTING, req is ours and on its connection, and the
 * connection's close callback points at us. In DONE the close callback is
 * cleared or spent, the timer is stopped, and req is either NULL (evhttp frees
 * it) or detached and ours to free; reap() frees the stream. */
#include "stream.h"

#include <assert.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/keyvalq_struct.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NO_STAMP SIZE_MAX /* piece.stamp_at of a piece without STREAM_SEND_NS */

enum stream_state {
  STATE_NONE, /* 0: so a missing table entry means "refused" */
  STATE_QUEUED,
  STATE_SENDING,
  STATE_STALLED,
  STATE_CUTTING,
  STATE_DONE,
  STATE_N
};

/* allowed[from][to] */
static const bool allowed[STATE_N][STATE_N] = {
    [STATE_QUEUED] = {[STATE_SENDING] = true},
    [STATE_SENDING] = {[STATE_SENDING] = true,
                       [STATE_DONE] = true,
                       [STATE_STALLED] = true,
                       [STATE_CUTTING] = true},
    [STATE_STALLED] = {[STATE_DONE] = true},
    [STATE_CUTTING] = {[STATE_DONE] = true},
};

struct piece {
  char *bytes;       /* owned: one whole event, through its blank line */
  size_t len;        /* bytes in it */
  size_t stamp_at;   /* offset of STREAM_SEND_NS in bytes, or NO_STAMP */
  unsigned delay_ms; /* wait after the piece before it */
};

struct stream {
  struct streams *all;            /* the list we are on once started */
  struct stream *prev, *next;     /* in all->head */
  struct evhttp_request *req;     /* see the state comment for who owns it */
  struct evhttp_connection *conn; /* req's, while its close callback is ours */
  struct event *timer;            /* owned: the next piece, or the cut */
  struct piece *pieces;           /* owned; n <= cap */
  size_t n, cap;
  size_t sent;      /* pieces handed to evhttp; <= n */
  bool paced;       /* delays count from the last piece's due time, not its send */
  uint64_t due_ns;  /* paced: when the last piece armed was due (CLOCK_MONOTONIC) */
  uint64_t sent_ns; /* paced: when the last pass that sent pieces ran */
  enum stream_end end;
  enum stream_state state;
};

static void set_state(struct stream *s, enum stream_state to) {
  assert(allowed[s->state][to]);
  s->state = to;
}

static bool check_invariants(const struct stream *s) {
  if (s->sent > s->n || s->n > s->cap) return false;
  bool live =
      s->state == STATE_SENDING || s->state == STATE_STALLED || s->state == STATE_CUTTING;
  /* a live stream's request is on the connection we watch */
  if (live && (s->req == NULL || s->conn == NULL ||
               evhttp_request_get_connection(s->req) != s->conn))
    return false;
  return s->state != STATE_DONE || s->conn == NULL;
}

static void on_timer(evutil_socket_t fd, short what, void *arg);

struct stream *stream_new(struct event_base *base, struct evhttp_request *req) {
  struct stream *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  s->req = req;
  s->state = STATE_QUEUED;
  s->timer = evtimer_new(base, on_timer, s);
  if (s->timer == NULL) {
    free(s);
    return NULL;
  }
  return s;
}

static void stream_free(struct stream *s) {
  for (size_t i = 0; i < s->n; i++)
    free(s->pieces[i].bytes);
  free(s->pieces);
  event_free(s->timer);
  free(s);
}

void stream_keep_pace(struct stream *s) {
  s->paced = true;
}

void stream_discard(struct stream *s) {
  if (s == NULL) return;
  assert(s->state == STATE_QUEUED);
  stream_free(s);
}

static int add_piece(struct stream *s, unsigned delay_ms, char *bytes, size_t len) {
  if (s->n == s->cap) {
    size_t cap = s->cap > 0 ? s->cap * 2 : 16;
    struct piece *p = realloc(s->pieces, cap * sizeof *p);
    if (p == NULL) {
      free(bytes);
      return -1;
    }
    s->pieces = p;
    s->cap = cap;
  }
  const char *stamp = strstr(bytes, STREAM_SEND_NS);
  s->pieces[s->n++] = (struct piece){
      bytes, len, stamp != NULL ? (size_t)(stamp - bytes) : NO_STAMP, delay_ms};
  return 0;
}

/* Formats one event; "event:" only when name is not NULL. */
static int add_event(struct stream *s, unsigned delay_ms, const char *name,
                     const char *data) {
  size_t cap = strlen(data) + (name != NULL ? strlen(name) : 0) + 32;
  char *bytes = malloc(cap);
  if (bytes == NULL) return -1;
  int len = name != NULL ? snprintf(bytes, cap, "event: %s\ndata: %s\n\n", name, data)
                         : snprintf(bytes, cap, "data: %s\n\n", data);
  assert(len > 0 && (size_t)len < cap);
  return add_piece(s, delay_ms, bytes, (size_t)len);
}

int stream_event(struct stream *s, unsigned delay_ms, const char *name, json_t *data) {
  if (data == NULL) return -1;
  char *text = json_dumps(data, JSON_COMPACT);
  json_decref(data);
  if (text == NULL) return -1;
  int rv = add_event(s, delay_ms, name, text);
  free(text);
  return rv;
}

int stream_data(struct stream *s, unsigned delay_ms, const char *text) {
  return add_event(s, delay_ms, NULL, text);
}

/* ------------------------------------------------------------ the server */

static void reap(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  struct streams *all = arg;
  struct stream *s = all->head;
  while (s != NULL) {
    struct stream *next = s->next;
    if (s->state == STATE_DONE) {
      if (s->prev != NULL)
        s->prev->next = s->next;
      else
        all->head = s->next;
      if (s->next != NULL) s->next->prev = s->prev;
      /* Detached by a client that left mid-reply: evhttp left it to us. */
      if (s->req != NULL) evhttp_request_free(s->req);
      stream_free(s);
    }
    s = next;
  }
}

int streams_init(struct streams *all, struct event_base *base) {
  all->head = NULL;
  all->reap = event_new(base, -1, 0, reap, all);
  return all->reap != NULL ? 0 : -1;
}

void streams_fini(struct streams *all) {
  while (all->head != NULL) {
    struct stream *s = all->head;
    all->head = s->next;
    if (s->state != STATE_DONE) {
      /* Still on its connection: evhttp_free frees the request with it, and
       * must not call us back from there. */
      evhttp_connection_set_closecb(s->conn, NULL, NULL);
      s->req = NULL;
    } else if (s->req != NULL) {
      evhttp_request_free(s->req);
    }
    stream_free(s);
  }
  if (all->reap != NULL) event_free(all->reap);
  all->reap = NULL;
}

/* ------------------------------------------------------------- sending */

static void done(struct stream *s) {
  event_del(s->timer);
  set_state(s, STATE_DONE);
  event_active(s->all->reap, EV_TIMEOUT, 1);
}

/* The client left. evhttp is freeing the connection; if the request is still on
 * it, it goes too, right after we return. */
static void on_close(struct evhttp_connection *conn, void *arg) {
  (void)conn;
  struct stream *s = arg;
  if (evhttp_request_get_connection(s->req) != NULL) s->req = NULL;
  s->conn = NULL;
  done(s);
}

/* The last event of a cut stream left our buffers; the cut itself waits for our
 * own timer, outside evhttp's write callback. */
static void on_flushed(struct evhttp_connection *conn, void *arg) {
  (void)conn;
  struct stream *s = arg;
  if (s->state == STATE_CUTTING) event_active(s->timer, EV_TIMEOUT, 1);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A paced stream waits until its own schedule says, however late this pass is:
 * timers re-armed from "now" in a pass that fires several streams' timers
 * would leave those streams in step for good, their events in bursts. But a
 * stream that fell behind (this process was busy: a hundred requests at once)
 * does not catch up in a burst either: it skips to the first time on its own
 * schedule that is at least the piece's delay less PACE_SLACK_MS after the
 * last pass that sent, so that pieces meant to be apart stay apart (timed's,
 * past turnd's coalescing window) and streams started apart stay apart. */
#define PACE_SLACK_MS 4
static void arm(struct stream *s, unsigned delay_ms) {
  uint64_t wait_us = (uint64_t)delay_ms * 1000u;
  if (s->paced) {
    uint64_t now = now_ns();
    s->due_ns += (uint64_t)delay_ms * 1000000u;
    if (delay_ms > PACE_SLACK_MS && s->sent_ns > 0) {
      uint64_t earliest = s->sent_ns + (uint64_t)(delay_ms - PACE_SLACK_MS) * 1000000u;
      while (s->due_ns < earliest)
        s->due_ns += (uint64_t)delay_ms * 1000000u;
    }
    wait_us = s->due_ns > now ? (s->due_ns - now) / 1000u : 0;
  }
  struct timeval tv = {.tv_sec = (time_t)(wait_us / 1000000u),
                       .tv_usec = (suseconds_t)(wait_us % 1000000u)};
  evtimer_add(s->timer, &tv);
}

/* Copies p into chunk, its stamp (if any) as the time now: the clock is read
 * after the bytes before the stamp are copied, as close to the write as the
 * copy allows. */
static int fill(struct evbuffer *chunk, const struct piece *p) {
  if (p->stamp_at == NO_STAMP) return evbuffer_add(chunk, p->bytes, p->len);
  size_t skip = p->stamp_at + strlen(STREAM_SEND_NS);
  if (evbuffer_add(chunk, p->bytes, p->stamp_at) != 0) return -1;
  char ns[24];
  int len = snprintf(ns, sizeof ns, "%" PRIu64, now_ns());
  if (evbuffer_add(chunk, ns, (size_t)len) != 0) return -1;
  return evbuffer_add(chunk, p->bytes + skip, p->len - skip);
}

/* Writes what evhttp holds for s's connection to its socket now, not on
 * libevent's next pass: a stamp then tells when its event left, however many
 * streams this pass fires. What the socket does not take stays for evhttp. */
static void write_now(struct stream *s) {
  struct bufferevent *bev = evhttp_connection_get_bufferevent(s->conn);
  (void)evbuffer_write(bufferevent_get_output(bev), bufferevent_getfd(bev));
}

/* Hands the next piece to evhttp, as its own chunk; a stamped one is written at
 * once. */
static void send_piece(struct stream *s) {
  const struct piece *p = &s->pieces[s->sent++];
  struct evbuffer *chunk = evbuffer_new();
  if (chunk == NULL || fill(chunk, p) != 0) {
    if (chunk != NULL) evbuffer_free(chunk);
    return; /* out of memory: the client sees a stream with a hole */
  }
  if (s->sent == s->n && s->end == STREAM_CUT)
    evhttp_send_reply_chunk_with_cb(s->req, chunk, on_flushed, s);
  else
    evhttp_send_reply_chunk(s->req, chunk);
  evbuffer_free(chunk);
  if (p->stamp_at != NO_STAMP) write_now(s);
}

static void finish(struct stream *s) {
  evhttp_connection_set_closecb(s->conn, NULL, NULL);
  s->conn = NULL;
  if (s->state == STATE_CUTTING) {
    /* Frees the request too, with its reply unfinished: no last chunk. */
    evhttp_connection_free(evhttp_request_get_connection(s->req));
  } else {
    evhttp_send_reply_end(s->req); /* evhttp frees req once it is sent */
  }
  s->req = NULL;
  done(s);
}

static void on_timer(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  struct stream *s = arg;
  if (s->state == STATE_CUTTING) {
    finish(s);
    return;
  }
  if (s->state != STATE_SENDING) return;
  /* Events due at once go in this pass: "many" sends all of its in one go. */
  if (s->paced) s->sent_ns = now_ns();
  do
    send_piece(s);
  while (s->sent < s->n && s->pieces[s->sent].delay_ms == 0);
  if (s->sent < s->n) {
    set_state(s, STATE_SENDING);
    arm(s, s->pieces[s->sent].delay_ms);
  } else if (s->end == STREAM_END) {
    finish(s);
  } else {
    set_state(s, s->end == STREAM_STALL ? STATE_STALLED : STATE_CUTTING);
  }
  assert(check_invariants(s));
}

void stream_start(struct stream *s, struct streams *all, enum stream_end end) {
  assert(s->state == STATE_QUEUED && s->n > 0);
  struct evkeyvalq *headers = evhttp_request_get_output_headers(s->req);
  evhttp_add_header(headers, "Content-Type", "text/event-stream; charset=utf-8");
  evhttp_add_header(headers, "Cache-Control", "no-cache");
  evhttp_send_reply_start(s->req, 200, "OK");
  s->all = all;
  s->end = end;
  s->conn = evhttp_request_get_connection(s->req);
  evhttp_connection_set_closecb(s->conn, on_close, s);
  s->next = all->head;
  if (all->head != NULL) all->head->prev = s;
  all->head = s;
  set_state(s, STATE_SENDING);
  s->due_ns = now_ns();
  arm(s, s->pieces[0].delay_ms);
  assert(check_invariants(s));
}
