/* What the http wing offers: the HTTP side of turnd, one evhttp on the
 * daemon's event loop and its bound socket; every request goes to the
 * dispatcher it is given, the route table (routes_dispatch, below). */
#ifndef TURND_SERVER_H
#define TURND_SERVER_H

#include "options.h"

#include <stdint.h>
#include <time.h>

struct conn_watch;
struct event;
struct event_base;
struct evhttp;
struct evhttp_bound_socket;
struct evhttp_request;

struct turnd;

struct server {
  struct turnd *d;                   /* borrowed: the daemon's state */
  struct event_base *base;           /* borrowed: the daemon's loop */
  struct evhttp *http;               /* owned; freed by server_stop */
  struct evhttp_bound_socket *bound; /* owned by http */
  const struct options *opt;         /* borrowed, outlives the server */
  uint16_t port;                     /* the port bound, also when --listen asked 0 */
  int64_t device; /* the paired device of the request being dispatched (auth.h) */
  struct conn_watch *watch;    /* owned: every connection's limits (conn_watch.h) */
  struct event *accept_resume; /* owned: accepting again after running out of fds */
  time_t fds_warned_at;        /* when that was last said on stderr */
  void (*dispatch)(struct server *s, struct evhttp_request *req); /* routes_dispatch */
};

/* Binds opt's address and starts answering on base. Returns 0, or -1 with a
 * message on stderr and nothing left to free. */
int server_start(struct server *s, struct turnd *d, struct event_base *base,
                 const struct options *opt,
                 void (*dispatch)(struct server *s, struct evhttp_request *req));
void server_stop(struct server *s);

/* The route table (routes.c), the dispatcher main gives server_start: the
 * handler of the route that matches req, else a JSON 404 (no such path) or 405
 * (the path exists, not with this method, with Allow). */
void routes_dispatch(struct server *s, struct evhttp_request *req);

#endif
