/* Each HTTP connection's life, watched from its bufferevent (see conn_watch.h).
 *
 * Who frees what. evhttp owns a connection and its bufferevent, and frees both
 * when the connection ends (evhttp_connection_free), which it decides itself: a
 * close, an error, a timeout, Connection: close. A struct conn is made with the
 * bufferevent (evhttp_set_bevcb) and learns of that end from the connection's
 * close callback, which evhttp_connection_free calls first, before it frees the
 * bufferevent and closes the socket. That callback is conn_watch's own on every
 * connection; a route that wants one sets it through conn_watch_set_closecb and
 * is called from ours. So c->bev is valid from c's making to its close callback,
 * exactly, and c itself is freed by the reaper after it (below).
 *
 * The set-up. libevent 2.1 makes the connection (and gives the bufferevent its
 * socket) only after evhttp_set_bevcb's callback has returned, so a conn is set
 * up one step later, in the same pass of the loop: its timer is made active at
 * once. Until then it holds a reference on the bufferevent: evhttp frees a new
 * connection at once only when out of memory, and the set-up sees that it did by
 * the callbacks bufferevent_free clears. The connection is the callback argument
 * evhttp gives the bufferevent (as everywhere in 2.1's http.c; conn_watch_request
 * checks it), and the close callback is set on it there.
 *
 * No reference is held after the set-up: a reference held while evhttp frees the
 * connection would keep the bufferevent's events registered on a socket evhttp
 * then closes, and a new connection given the same descriptor would never be
 * watched by epoll (libevent counts the stale event as the registration). For
 * the same reason a connection is ended from here synchronously
 * (bufferevent_trigger_event without deferral, as libevent's own timeouts end
 * one): evhttp frees it inside that call, and its close callback runs inside one
 * of c's own callbacks. That callback only marks c gone; the reaper frees it at
 * the end of the pass.
 *
 * Time limits. libevent 2.1 puts none on the connections a server accepts, and
 * its evhttp_set_timeout cannot serve: its read limit stays on while an answer
 * is written (evhttp reads on, to see a close), a turn's stream may have nothing
 * to say for minutes while an approval waits, and its read timeout restarts at
 * every byte, so a request sent a byte at a time never ends. So each connection
 * gets --client-timeout by state: the whole request (line, headers, body) must
 * come within it, from the connection's opening or from its first byte after
 * an answer, and no gap between reads may be longer; a kept-alive connection may
 * wait that long for its next request. An answer's client must take some of the
 * bytes waiting for it within each --reader-timeout (check_progress), a longer
 * limit: Linux acknowledges a slow reader's reads only in steps of up to its
 * receive buffer (one of 1 KiB/s with the default 128 KiB: every 128 s or so),
 * and acknowledged bytes are all turnd can see of them. With nothing to send
 * there is no limit.
 *
 * States, one conn_step() with a table of allowed moves:
 *
 *   NEW --open--> REQUEST --complete--> ANSWER --answered--> IDLE
 *    |               ^                                        |
 *    |               +-----------------bytes------------------+
 *    +--refuse--> REFUSED                     (any) --close--> GONE
 *
 *   NEW -> REQUEST      [set_up: under --max-connections]
 *   NEW -> REFUSED      [set_up: at the cap]
 *   REQUEST -> ANSWER   [conn_watch_request: evhttp has the whole request]
 *   ANSWER -> IDLE      [conn_watch_answered: the answer went out, kept alive]
 *   IDLE -> REQUEST     [on_input: bytes of a next request; conn_watch_answered
 *                        when they came during the answer]
 *   any -> GONE         [on_close; set_up when evhttp freed it first]
 *
 * Guarantees: NEW holds a reference on bev and has no descriptor yet. Every other
 * state but GONE has c indexed by its descriptor and libevent's close callback
 * set. REQUEST has its deadline armed (--client-timeout from the connection's
 * opening, or from the first byte after an answer) and libevent's read timeout
 * (the same) between reads. ANSWER has no libevent timeout and the progress check
 * armed (--reader-timeout). IDLE has libevent's read timeout only. REFUSED has sent its
 * 503, shut its side, holds evhttp's bufferevent callbacks aside (so that no request of
 * it reaches the routes) and has the end of its wait armed. GONE has no bev: only the
 * reaper touches it. */
#include "conn_watch.h"

#include "http_error.h"
#include "http_page.h"
#include "req_lines.h"

#include <assert.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/util.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>

#define RETRY_AFTER_S 1 /* said to a connection past the cap: one closes soon */
/* A refused connection waits this long for its client to read the 503 and close
 * (closing first, with its request unread, would reset the connection, and the
 * reset may overtake the answer); at most LINGERING_MAX wait at once, and the
 * ones past that are closed at once. */
#define LINGER_MS     1000
#define LINGERING_MAX 256

enum conn_state {
  CONN_NONE, /* 0: so a missing table entry means "refused" */
  CONN_NEW,
  CONN_REQUEST,
  CONN_ANSWER,
  CONN_IDLE,
  CONN_REFUSED,
  CONN_GONE,
  CONN_NSTATES
};

enum conn_input {
  CONN_IN_OPEN,     /* set up, under the cap */
  CONN_IN_REFUSE,   /* set up, at the cap */
  CONN_IN_COMPLETE, /* evhttp has the whole request */
  CONN_IN_ANSWERED, /* its answer went out; the connection stays */
  CONN_IN_BYTES,    /* bytes of a next request came */
  CONN_IN_CLOSE,    /* the connection ends */
  CONN_NINPUTS
};

static const unsigned char conn_next[CONN_NSTATES][CONN_NINPUTS] = {
    [CONN_NEW] = {[CONN_IN_OPEN] = CONN_REQUEST,
                  [CONN_IN_REFUSE] = CONN_REFUSED,
                  [CONN_IN_CLOSE] = CONN_GONE},
    [CONN_REQUEST] = {[CONN_IN_COMPLETE] = CONN_ANSWER, [CONN_IN_CLOSE] = CONN_GONE},
    [CONN_ANSWER] = {[CONN_IN_ANSWERED] = CONN_IDLE, [CONN_IN_CLOSE] = CONN_GONE},
    [CONN_IDLE] = {[CONN_IN_BYTES] = CONN_REQUEST, [CONN_IN_CLOSE] = CONN_GONE},
    [CONN_REFUSED] = {[CONN_IN_CLOSE] = CONN_GONE},
};

struct conn_watch {
  struct event_base *base;       /* borrowed: the daemon's loop */
  struct timeval timeout;        /* --client-timeout */
  struct timeval reader_timeout; /* --reader-timeout: an answer's progress check */
  unsigned max_open;             /* --max-connections */
  unsigned n_open;               /* connections served (not refused) and not gone:
                                    <= max_open */
  unsigned n_refused;            /* refused ones not gone yet */
  struct conn **by_fd;           /* by descriptor: the conn of each set-up connection
                                    (for conn_watch_set_closecb), NULL elsewhere */
  size_t by_fd_cap;              /* entries in by_fd */
  struct conn *live;             /* every conn not gone (a list, for conn_watch_free) */
  struct conn *gone;             /* gone, waiting for the reaper (through next) */
  struct event *reaper;          /* owned: frees the gone ones, made active as needed */
};

struct conn {
  struct conn_watch *w;            /* the watch; outlives us */
  enum conn_state state;           /* changed only by set_state() */
  struct bufferevent *bev;         /* evhttp's; valid until GONE (a counted ref
                                      in NEW) */
  struct evhttp_connection *evcon; /* known from the set-up */
  evutil_socket_t fd;              /* -1 in NEW; the by_fd index after */
  bool refused;                    /* counted in n_refused, not n_open */
  struct event *timer;             /* owned: the set-up, the request's deadline,
                                      the answer's progress check, the end of a
                                      refusal's wait (by state) */
  struct event *page;              /* owned, made when first needed: an error
                                      answer in the output is looked at */
  bool page_bad_chunk;             /* for it: a 413 is a chunk libevent could not
                                      read (decided when the answer was written) */
  struct evbuffer_cb_entry *in_cb; /* on bev's input: on_input */
  struct req_lines lines;          /* REQUEST: what evhttp took of the request */
  uint64_t mark;                   /* ANSWER: bytes the client's TCP acknowledged
                                      (or, without TCP_INFO, bytes waiting) at the
                                      last check */
  bool was_waiting;                /* ANSWER: bytes waited for the client then */
  void (*closecb)(struct evhttp_connection *, void *); /* a route's, or NULL */
  void *closecb_arg;
  bufferevent_data_cb saved_read;  /* REFUSED: evhttp's callbacks, put back to */
  bufferevent_data_cb saved_write; /* have it end the connection */
  bufferevent_event_cb saved_event;
  void *saved_arg;
  struct conn *prev, *next; /* in w->live; next also in w->gone */
};

/* The one watch (conn_watch_set_closecb is called with a connection only). */
static struct conn_watch *watching;

/* --------------------------------------------------- the state machine */

/* Build with -DCONN_WATCH_TRACE to see every transition on stderr. */
#ifdef CONN_WATCH_TRACE
static const char *const conn_state_name[CONN_NSTATES] = {
    "NONE", "NEW", "REQUEST", "ANSWER", "IDLE", "REFUSED", "GONE"};
#endif

static void set_state(struct conn *c, enum conn_state next) {
#ifdef CONN_WATCH_TRACE
  fprintf(stderr, "conn %p fd %d: %s -> %s\n", (void *)c, (int)c->fd,
          conn_state_name[c->state], conn_state_name[next]);
#endif
  c->state = next;
}

/* The table says whether input is allowed in the current state. Returns 0, or
 * -1 (state unchanged) if not: an order of events libevent should not give is
 * ignored rather than trusted. */
static int conn_step(struct conn *c, enum conn_input in) {
  enum conn_state next = (enum conn_state)conn_next[c->state][in];
  if (next == CONN_NONE) return -1;
  set_state(c, next);
  return 0;
}

static bool indexed(const struct conn *c) {
  return c->fd >= 0 && (size_t)c->fd < c->w->by_fd_cap && c->w->by_fd[c->fd] == c &&
         c->evcon != NULL;
}

/* What each state guarantees (see the top), once its entry is done. */
static bool check_invariants(const struct conn *c) {
  switch (c->state) {
  case CONN_NEW:
    return c->bev != NULL && c->fd == -1;
  case CONN_REQUEST:
  case CONN_ANSWER:
    return indexed(c) && evtimer_pending(c->timer, NULL);
  case CONN_IDLE:
    return indexed(c) && !evtimer_pending(c->timer, NULL);
  case CONN_REFUSED:
    return indexed(c) && c->refused && c->saved_event != NULL;
  case CONN_GONE:
    return c->bev == NULL;
  default:
    return false;
  }
}

/* ------------------------------------------------------------ helpers */

static int by_fd_put(struct conn_watch *w, evutil_socket_t fd, struct conn *c) {
  if ((size_t)fd >= w->by_fd_cap) {
    size_t cap = w->by_fd_cap > 0 ? w->by_fd_cap : 256;
    while (cap <= (size_t)fd)
      cap *= 2;
    struct conn **grown = realloc(w->by_fd, cap * sizeof *grown);
    if (grown == NULL) return -1;
    memset(grown + w->by_fd_cap, 0, (cap - w->by_fd_cap) * sizeof *grown);
    w->by_fd = grown;
    w->by_fd_cap = cap;
  }
  w->by_fd[fd] = c;
  return 0;
}

/* The conn of evcon, or NULL for one that goes unwatched (out of memory). */
static struct conn *conn_of(struct evhttp_connection *evcon) {
  struct conn_watch *w = watching;
  struct bufferevent *bev =
      evcon != NULL ? evhttp_connection_get_bufferevent(evcon) : NULL;
  evutil_socket_t fd = bev != NULL ? bufferevent_getfd(bev) : -1;
  if (w == NULL || fd < 0 || (size_t)fd >= w->by_fd_cap) return NULL;
  struct conn *c = w->by_fd[fd];
  return c != NULL && c->bev == bev ? c : NULL;
}

static void on_output(struct evbuffer *out, const struct evbuffer_cb_info *info,
                      void *arg);

/* c's connection ended (or never got going): c leaves every list and index and
 * stops every callback of its own, and waits for the reaper. bev is still valid
 * here and not after. */
static void conn_end(struct conn *c) {
  struct conn_watch *w = c->w;
  evbuffer_remove_cb_entry(bufferevent_get_input(c->bev), c->in_cb);
  evbuffer_remove_cb(bufferevent_get_output(c->bev), on_output, c); /* -1 if not on */
  event_del(c->timer);
  if (c->page != NULL) event_del(c->page);
  if (c->fd >= 0 && (size_t)c->fd < w->by_fd_cap && w->by_fd[c->fd] == c)
    w->by_fd[c->fd] = NULL;
  if (c->prev != NULL)
    c->prev->next = c->next;
  else
    w->live = c->next;
  if (c->next != NULL) c->next->prev = c->prev;
  if (c->refused)
    w->n_refused--;
  else
    w->n_open--;
  c->bev = NULL;
  c->evcon = NULL;
  c->prev = NULL;
  c->next = w->gone;
  w->gone = c;
  event_active(w->reaper, EV_TIMEOUT, 1);
}

static void reap(struct conn_watch *w) {
  while (w->gone != NULL) {
    struct conn *c = w->gone;
    w->gone = c->next;
    event_free(c->timer);
    if (c->page != NULL) event_free(c->page);
    free(c);
  }
}

static void on_reap(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  reap(arg);
}

/* libevent's close callback of every set-up connection: the route's first. */
static void on_close(struct evhttp_connection *evcon, void *arg) {
  struct conn *c = arg;
  void (*cb)(struct evhttp_connection *, void *) = c->closecb;
  c->closecb = NULL;
  if (cb != NULL) cb(evcon, c->closecb_arg);
  if (conn_step(c, CONN_IN_CLOSE) == 0) conn_end(c);
  assert(check_invariants(c));
}

/* Ends c's connection now, as libevent ends one whose timeout passed (what:
 * BEV_EVENT_READING or _WRITING): evhttp drops it without an answer. c is gone
 * when this returns. */
static void drop(struct conn *c, short what) {
  bufferevent_trigger_event(c->bev, (short)(what | BEV_EVENT_TIMEOUT), 0);
}

/* The front of the input, for what evhttp takes next (req_lines.h). */
static void look_at_front(struct conn *c) {
  char front[REQ_LINES_FRONT];
  struct evbuffer_iovec v[4];
  int n = evbuffer_peek(bufferevent_get_input(c->bev), REQ_LINES_FRONT, NULL, v, 4);
  size_t len = 0;
  for (int i = 0; i < n && i < 4 && len < sizeof front; i++) {
    size_t k = v[i].iov_len < sizeof front - len ? v[i].iov_len : sizeof front - len;
    memcpy(front + len, v[i].iov_base, k);
    len += k;
  }
  req_lines_front(&c->lines, front, len);
}

/* -------------------------------------------------------- entries */

static void begin_request(struct conn *c) {
  req_lines_reset(&c->lines);
  look_at_front(c);
  evtimer_add(c->timer, &c->w->timeout); /* the deadline */
}

static void begin_answer(struct conn *c) {
  /* No libevent timeout: its write timeout restarts only when the socket has
   * room for a third of its buffer again, which a slow reader of a big stream
   * may not give for minutes, and evhttp reads on during an answer only to see
   * a close. The progress check does the job. */
  bufferevent_set_timeouts(c->bev, NULL, NULL);
  c->was_waiting = false;
  evtimer_add(c->timer, &c->w->reader_timeout);
}

static void begin_idle(struct conn *c) {
  event_del(c->timer);
  bufferevent_set_timeouts(c->bev, &c->w->timeout, NULL);
  if (evbuffer_get_length(bufferevent_get_input(c->bev)) > 0 &&
      conn_step(c, CONN_IN_BYTES) == 0)
    begin_request(c); /* it came during the answer */
}

static void on_refused_read(struct bufferevent *bev, void *arg) {
  (void)arg;
  struct evbuffer *in = bufferevent_get_input(bev);
  evbuffer_drain(in, evbuffer_get_length(in));
}

/* The refused connection's wait is over: evhttp gets its callbacks back and
 * ends the connection, as it ends one whose client left. c is gone then. */
static void refusal_end(struct conn *c) {
  bufferevent_setcb(c->bev, c->saved_read, c->saved_write, c->saved_event, c->saved_arg);
  bufferevent_trigger_event(c->bev, BEV_EVENT_READING | BEV_EVENT_EOF, 0);
}

static void on_refused_event(struct bufferevent *bev, short what, void *arg) {
  (void)bev;
  (void)what; /* the client closed, or failed, or libevent's read timeout */
  refusal_end(arg);
}

/* Past --max-connections: 503 with Retry-After at once, before the request is
 * read (a client that sends one slowly would hold the descriptor meanwhile), and
 * the connection closed. Connections already open are not touched. */
static void refuse(struct conn *c) {
  struct evbuffer *b = evbuffer_new();
  if (b != NULL &&
      http_page_add_error(b, HTTP_E_TOO_MANY_CONNECTIONS, RETRY_AFTER_S) == 0)
    evbuffer_write(b, c->fd); /* a new socket's buffer takes these few hundred bytes */
  if (b != NULL) evbuffer_free(b);
  shutdown(c->fd, SHUT_WR);
  bufferevent_getcb(c->bev, &c->saved_read, &c->saved_write, &c->saved_event,
                    &c->saved_arg);
  bufferevent_setcb(c->bev, on_refused_read, NULL, on_refused_event, c);
  struct timeval wait = {0, 0};
  if (c->w->n_refused <= LINGERING_MAX)
    wait = (struct timeval){LINGER_MS / 1000, (LINGER_MS % 1000) * 1000};
  evtimer_add(c->timer, &wait);
}

/* The connection exists now (see the top): c gets its descriptor and libevent's
 * close callback, and its first request's deadline or its refusal. */
static void set_up(struct conn *c) {
  struct bufferevent *bev = c->bev;
  bufferevent_event_cb eventcb = NULL;
  void *evcon = NULL;
  bufferevent_getcb(bev, NULL, NULL, &eventcb, &evcon);
  if (eventcb == NULL || evcon == NULL) { /* evhttp freed it (out of memory) */
    conn_step(c, CONN_IN_CLOSE);
    conn_end(c);
    bufferevent_decref(bev); /* the last reference: bev goes */
    assert(check_invariants(c));
    return;
  }
  c->evcon = evcon;
  evhttp_connection_set_closecb(c->evcon, on_close, c);
  bufferevent_decref(bev); /* evhttp's own keeps it */
  evutil_socket_t fd = bufferevent_getfd(bev);
  if (fd < 0 || by_fd_put(c->w, fd, c) != 0) {
    /* Out of memory: a connection conn_watch_set_closecb could not find would
     * lose a route's close callback, so it goes. */
    bufferevent_trigger_event(bev, BEV_EVENT_READING | BEV_EVENT_ERROR, 0);
    return;
  }
  c->fd = fd;
  if (c->refused) {
    conn_step(c, CONN_IN_REFUSE);
    refuse(c);
  } else {
    conn_step(c, CONN_IN_OPEN);
    begin_request(c);
  }
  assert(check_invariants(c));
}

/* ---------------------------------------------------- the answer's progress */

/* What moves when c's client takes bytes: the bytes its TCP acknowledged, as the
 * kernel counts them (TCP_INFO, Linux 4.1 and later), or else the bytes still
 * waiting for it (they change as it takes them, and as more are added). */
static uint64_t progress_mark(evutil_socket_t fd, size_t waiting) {
  struct tcp_info ti;
  socklen_t len = sizeof ti;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 &&
      len >= offsetof(struct tcp_info, tcpi_bytes_acked) + sizeof ti.tcpi_bytes_acked)
    return ti.tcpi_bytes_acked;
  return waiting;
}

/* Every --reader-timeout while an answer goes out: a client that took nothing
 * since the last check, while bytes waited for it all along (in turnd's buffer,
 * or in the socket's, sent or not, but not acknowledged), is dropped. A reader
 * that keeps taking, however slowly, keeps its stream; an answer with nothing to
 * send (a turn waits for its approval) has no limit. */
static void check_progress(struct conn *c) {
  size_t out = evbuffer_get_length(bufferevent_get_output(c->bev));
  int unacked = 0;
  if (ioctl(c->fd, SIOCOUTQ, &unacked) != 0 || unacked < 0) unacked = 0;
  size_t waiting = out + (size_t)unacked;
  uint64_t mark = progress_mark(c->fd, waiting);
  if (c->was_waiting && mark == c->mark) {
    drop(c, BEV_EVENT_WRITING);
    return;
  }
  c->was_waiting = waiting > 0;
  c->mark = mark;
  evtimer_add(c->timer, &c->w->reader_timeout);
}

static void on_timer(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  struct conn *c = arg;
  switch (c->state) {
  case CONN_NEW:
    set_up(c);
    break;
  case CONN_REQUEST: /* the whole request did not come in time */
    drop(c, BEV_EVENT_READING);
    break;
  case CONN_ANSWER:
    check_progress(c);
    break;
  case CONN_REFUSED:
    refusal_end(c);
    break;
  default:
    break;
  }
}

/* ---------------------------------------------------- the bytes that pass */

/* Bytes were added to or taken from c's input: the first of a next request, or
 * what evhttp took of this one (req_lines.h). Cheap outside a request. */
static void on_input(struct evbuffer *in, const struct evbuffer_cb_info *info,
                     void *arg) {
  (void)in;
  struct conn *c = arg;
  if (c->state == CONN_IDLE && info->n_added > 0) {
    if (conn_step(c, CONN_IN_BYTES) == 0) begin_request(c);
    assert(check_invariants(c));
    return;
  }
  if (c->state != CONN_REQUEST) return;
  if (info->n_deleted > 0) {
    req_lines_took(&c->lines, info->n_deleted);
    look_at_front(c);
  } else if (info->n_added > 0 && req_lines_wants_front(&c->lines)) {
    look_at_front(c);
  }
}

/* The output's error answer was written into it in the pass that made this
 * active, and is not sent before the loop's next pass: if it is libevent's
 * page, it becomes turnd's JSON now. Then the next answer is watched. */
static void on_page(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  struct conn *c = arg;
  struct evbuffer *out = bufferevent_get_output(c->bev);
  http_page_replace(out, c->page_bad_chunk);
  evbuffer_add_cb(out, on_output, c);
}

/* Bytes were added to or taken from c's output. Cheap unless an answer that may
 * be one of libevent's pages starts (http_page_may_start): then it is looked at
 * before the loop's next pass (on_page). Whether a 413 is for a chunk libevent
 * could not read is decided now, while the page is being written, before evhttp
 * does anything else with the connection. */
static void on_output(struct evbuffer *out, const struct evbuffer_cb_info *info,
                      void *arg) {
  struct conn *c = arg;
  if (!http_page_may_start(out, info)) return;
  if (c->page == NULL && (c->page = event_new(c->w->base, -1, 0, on_page, c)) == NULL)
    return; /* out of memory: the page goes out as it is */
  c->page_bad_chunk = c->state == CONN_REQUEST && req_lines_bad_chunk(&c->lines);
  /* One look at a time; on_page watches again. Removing ourselves from inside
   * the callback is allowed. */
  evbuffer_remove_cb(out, on_output, c);
  event_active(c->page, EV_TIMEOUT, 1);
}

/* ------------------------------------------------------------ the watch */

struct conn_watch *conn_watch_new(struct event_base *base, unsigned max_open,
                                  unsigned timeout_s, unsigned reader_timeout_s) {
  struct conn_watch *w = calloc(1, sizeof *w);
  if (w == NULL) return NULL;
  w->base = base;
  w->max_open = max_open;
  w->timeout = (struct timeval){(time_t)timeout_s, 0};
  w->reader_timeout = (struct timeval){(time_t)reader_timeout_s, 0};
  if ((w->reaper = event_new(base, -1, 0, on_reap, w)) == NULL) {
    free(w);
    return NULL;
  }
  watching = w;
  return w;
}

void conn_watch_free(struct conn_watch *w) {
  if (w == NULL) return;
  /* evhttp_free ended every set-up connection (their close callbacks made them
   * gone); only set-ups the loop did not reach are left, each with its
   * reference on a bufferevent evhttp has freed. */
  while (w->live != NULL) {
    struct conn *c = w->live;
    struct bufferevent *bev = c->bev;
    if (c->state != CONN_NEW) { /* cannot be; its bev is gone: only c goes */
      w->live = c->next;
      event_free(c->timer);
      if (c->page != NULL) event_free(c->page);
      free(c);
      continue;
    }
    conn_step(c, CONN_IN_CLOSE);
    conn_end(c);
    bufferevent_decref(bev);
  }
  reap(w);
  event_free(w->reaper);
  free(w->by_fd);
  if (watching == w) watching = NULL;
  free(w);
}

struct bufferevent *conn_watch_accept(struct event_base *base, void *arg) {
  struct conn_watch *w = arg;
  struct conn *c = calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  c->w = w;
  c->fd = -1;
  /* As evhttp makes its own: no options, evhttp closes the socket itself. */
  c->bev = bufferevent_socket_new(base, -1, 0);
  c->timer = evtimer_new(base, on_timer, c);
  if (c->bev == NULL || c->timer == NULL ||
      (c->in_cb = evbuffer_add_cb(bufferevent_get_input(c->bev), on_input, c)) == NULL ||
      evbuffer_add_cb(bufferevent_get_output(c->bev), on_output, c) == NULL) {
    if (c->bev != NULL) bufferevent_free(c->bev);
    if (c->timer != NULL) event_free(c->timer);
    free(c);
    return NULL;
  }
  set_state(c, CONN_NEW);
  c->refused = w->n_open >= w->max_open;
  if (c->refused)
    w->n_refused++;
  else
    w->n_open++;
  c->next = w->live;
  if (w->live != NULL) w->live->prev = c;
  w->live = c;
  bufferevent_incref(c->bev); /* until the set-up (see the top) */
  bufferevent_set_timeouts(c->bev, &w->timeout, NULL); /* awaiting a request */
  event_active(c->timer, EV_TIMEOUT, 1);
  assert(check_invariants(c));
  return c->bev;
}

void conn_watch_request(struct evhttp_request *req) {
  struct evhttp_connection *evcon = evhttp_request_get_connection(req);
  struct conn *c = conn_of(evcon);
  if (c == NULL) return;
  assert(c->evcon == evcon); /* the set-up found the connection where it should */
  if (conn_step(c, CONN_IN_COMPLETE) == 0) begin_answer(c);
  assert(check_invariants(c));
}

void conn_watch_answered(struct evhttp_request *req) {
  struct conn *c = conn_of(evhttp_request_get_connection(req));
  if (c == NULL) return;
  if (conn_step(c, CONN_IN_ANSWERED) == 0) begin_idle(c);
  assert(check_invariants(c));
}

void conn_watch_set_closecb(struct evhttp_connection *evcon,
                            void (*cb)(struct evhttp_connection *, void *), void *arg) {
  struct conn *c = conn_of(evcon);
  if (c == NULL) { /* unwatched: libevent's place is free */
    evhttp_connection_set_closecb(evcon, cb, arg);
    return;
  }
  c->closecb = cb;
  c->closecb_arg = arg;
}

void conn_watch_stream_gone(struct evhttp_request *req, struct evhttp_connection **conn) {
  conn_watch_set_closecb(*conn, NULL, NULL);
  *conn = NULL;
  evhttp_send_reply_end(req);
}
