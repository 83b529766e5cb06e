/* Binding and serving: turnd learns the port it got (for --listen HOST:0) from
 * the bound socket itself, so what it prints is what clients can reach. Every
 * connection is watched (conn_watch.c: time limits, the cap on connections,
 * libevent's own error pages made JSON), so every answer is JSON, also the ones
 * libevent gives by itself before a request reaches the routes. */
#include "server.h"

#include "conn_watch.h"
#include "http_body.h"
#include "http_error.h"

#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <event2/util.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#define HEADERS_MAX (16u * 1024u) /* bytes of a request line and headers */

/* The answer is sent: the connection, if kept alive, awaits the next request. */
static void on_answered(struct evhttp_request *req, void *arg) {
  (void)arg;
  conn_watch_answered(req);
}

/* Whether the request's Content-Length headers frame it one way only: each is
 * digits, and all say the same. libevent 2.1 takes the first of two and reads
 * "+13" as 13; where a proxy in front takes another, the bytes left over would be
 * read as a request of their own (RFC 9112, 6.3). */
static bool framing_ok(struct evhttp_request *req) {
  const char *said = NULL;
  for (struct evkeyval *h = evhttp_request_get_input_headers(req)->tqh_first; h != NULL;
       h = h->next.tqe_next) {
    if (evutil_ascii_strcasecmp(h->key, "Content-Length") != 0) continue;
    if (h->value[0] == '\0' || h->value[strspn(h->value, "0123456789")] != '\0' ||
        (said != NULL && strcmp(said, h->value) != 0))
      return false;
    said = h->value;
  }
  return true;
}

static void on_request(struct evhttp_request *req, void *arg) {
  struct server *s = arg;
  conn_watch_request(req);
  evhttp_request_set_on_complete_cb(req, on_answered, s);
  if (!framing_ok(req)) {
    /* What follows on the connection cannot be told from this request. */
    evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
    http_error_send(req, HTTP_E_BAD_REQUEST);
    return;
  }
  s->dispatch(s, req);
}

/* Out of descriptors (or memory) for a new connection: the listening socket
 * stays readable, and libevent would try again at once, spinning and warning
 * in a loop. Accepting pauses for a moment instead, and stderr hears of it at
 * most once a minute; the connections turnd has go on. */
#define ACCEPT_PAUSE_MS 100

/* The server whose listener fails: libevent hands the error callback the
 * listener's own argument, which is evhttp's. One server per process. */
static struct server *accepting;

static void on_accept_resume(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  struct server *s = arg;
  evconnlistener_enable(evhttp_bound_socket_get_listener(s->bound));
}

static void on_accept_error(struct evconnlistener *lev, void *arg) {
  (void)arg;
  struct server *s = accepting;
  int err = EVUTIL_SOCKET_ERROR();
  bool starved = err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
  if (s == NULL || !starved) return;
  static const struct timeval pause = {0, ACCEPT_PAUSE_MS * 1000};
  if (evtimer_add(s->accept_resume, &pause) != 0) return; /* then try again at once */
  evconnlistener_disable(lev);
  time_t now = time(NULL);
  if (now - s->fds_warned_at >= 60) {
    s->fds_warned_at = now;
    fprintf(stderr, "turnd: cannot take a new connection: %s; new connections wait\n",
            evutil_socket_error_to_string(err));
  }
}

/* ------------------------------------------------------------ the server */

static uint16_t bound_port(struct evhttp_bound_socket *bound) {
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  if (getsockname(evhttp_bound_socket_get_fd(bound), (struct sockaddr *)&ss, &len) != 0)
    return 0;
  if (ss.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&ss)->sin_port);
  if (ss.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
  return 0;
}

/* Descriptors kept for what is not a client's connection: the store's files,
 * the loop's own, a model call's or a tool's. The default cap on connections is
 * half of what is left: each turn a connection starts may hold a model call's
 * connection and a tool's pipes besides. */
#define FDS_KEPT 64u
#define CONNECTIONS_MAX                                     \
  16384 /* the default's ceiling: a few thousand live turns \
           and their requests, with room to spare */

/* Raises the soft limit on descriptors to the hard one, as a server that never
 * uses select() should (the soft limit is often 1024, the hard one far more):
 * each connection takes one. Returns the limit turnd has now. */
static rlim_t raise_fd_limit(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 1024;
  rlim_t want = rl.rlim_max;
  if (want == RLIM_INFINITY || want > (rlim_t)1 << 20)
    want = (rlim_t)1 << 20; /* fs.nr_open's default: a limit past it is refused */
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
    struct rlimit raised = {want, rl.rlim_max};
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) rl.rlim_cur = want;
  }
  return rl.rlim_cur == RLIM_INFINITY ? (rlim_t)1 << 20 : rl.rlim_cur;
}

/* --max-connections, or the default that fits the descriptor limit. */
static unsigned max_connections(const struct options *opt) {
  rlim_t fds = raise_fd_limit();
  rlim_t usable = fds > 2 * FDS_KEPT ? fds - FDS_KEPT : FDS_KEPT;
  if (opt->max_connections == 0) {
    rlim_t n = usable / 2;
    return (unsigned)(n < CONNECTIONS_MAX ? n : CONNECTIONS_MAX);
  }
  if (opt->max_connections > usable)
    fprintf(stderr,
            "turnd: --max-connections %u is more than %llu descriptors allow (turnd "
            "keeps %u for itself); once they run out, new connections wait\n",
            opt->max_connections, (unsigned long long)fds, FDS_KEPT);
  return opt->max_connections;
}

int server_start(struct server *s, struct turnd *d, struct event_base *base,
                 const struct options *opt,
                 void (*dispatch)(struct server *s, struct evhttp_request *req)) {
  memset(s, 0, sizeof *s);
  s->d = d;
  s->base = base;
  s->opt = opt;
  s->dispatch = dispatch;
  s->http = evhttp_new(base);
  s->accept_resume = evtimer_new(base, on_accept_resume, s);
  s->watch = conn_watch_new(base, max_connections(opt), opt->client_timeout_s,
                            opt->reader_timeout_s);
  if (s->http == NULL || s->accept_resume == NULL || s->watch == NULL) {
    server_stop(s);
    fprintf(stderr, "turnd: cannot create the HTTP server\n");
    return -1;
  }
  /* Every method reaches the route table, so a wrong one gets a JSON 405 with
   * Allow: all the bits, since libevent files a method it has no name for
   * ("FOO") under a bit of its own, not one of enum evhttp_cmd_type's. All but
   * CONNECT: libevent 2.1 takes its connection for a tunnel and would send our
   * answer without a length on a connection it never closes; it stays
   * libevent's 501, which becomes our 400 above. */
  evhttp_set_allowed_methods(s->http, (ev_uint16_t)(0xffff & ~EVHTTP_REQ_CONNECT));
  evhttp_set_gencb(s->http, on_request, s);
  evhttp_set_bevcb(s->http, conn_watch_accept, s->watch);
  /* libevent enforces both limits while it reads, so no request costs more than
   * this much buffer; its refusals are turned into JSON above. The body limit is
   * the routes' own, which http_body_json checks again. A chunked body libevent
   * cannot read is refused as if over the limit; conn_watch.c tells the two
   * apart. */
  evhttp_set_max_body_size(s->http, HTTP_BODY_MAX);
  evhttp_set_max_headers_size(s->http, HEADERS_MAX);
  /* A body over the limit with a Content-Length is read to its end and dropped
   * (never kept) before the 413 goes out: a client still sending when turnd
   * closed would get a reset instead of the answer (browsers do not wait for 100
   * Continue). A chunked body is refused at the chunk that passes the limit;
   * libevent 2.1 has no lingering for it. */
  evhttp_set_flags(s->http, EVHTTP_SERVER_LINGERING_CLOSE);
  s->bound = evhttp_bind_socket_with_handle(s->http, opt->listen_host, opt->listen_port);
  if (s->bound == NULL) {
    fprintf(stderr, "turnd: cannot listen on %s port %u: %s\n", opt->listen_host,
            (unsigned)opt->listen_port,
            evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
    server_stop(s);
    return -1;
  }
  s->port = bound_port(s->bound);
  accepting = s;
  evconnlistener_set_error_cb(evhttp_bound_socket_get_listener(s->bound),
                              on_accept_error);
  return 0;
}

void server_stop(struct server *s) {
  if (s->http != NULL) evhttp_free(s->http); /* ends every connection */
  s->http = NULL;
  conn_watch_free(s->watch);
  s->watch = NULL;
  if (s->accept_resume != NULL) event_free(s->accept_resume);
  s->accept_resume = NULL;
  if (accepting == s) accepting = NULL;
  s->bound = NULL;
}
