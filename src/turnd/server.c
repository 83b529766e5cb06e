/* Binding and serving: turnd learns the port it got (for --listen HOST:0) from
 * the bound socket itself, so what it prints is what clients can reach. Every
 * answer is JSON, also the ones libevent gives by itself before a request reaches
 * the routes (body or headers over the limit, a request it cannot parse). */
#include "server.h"

#include "http_body.h"
#include "http_error.h"
#include "http_reply.h"
#include "routes.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
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
#include <sys/socket.h>
#include <time.h>

#define HEADERS_MAX (16u * 1024u) /* bytes of a request line and headers */

/* ------------------------------------------------ time limits
 *
 * libevent 2.1 puts none on the connections a server accepts: a client that
 * sent half a request, or nothing, kept its connection and a descriptor for
 * ever, and a reader that stopped reading kept its turn's log in memory. Its
 * evhttp_set_timeout cannot serve: its read limit stays on while an answer is
 * written (evhttp reads on, to see a close), and a turn's stream may have
 * nothing to say for minutes while an approval waits. So each connection's
 * bufferevent gets --client-timeout by phase:
 *  - while a request is awaited (a new connection, or a kept-alive one between
 *    requests) and read: the client may send nothing for that long;
 *  - while the answer goes out: no read limit, and the client may take none of
 *    the bytes waiting for it for that long (then it is dropped; a stream's
 *    reader comes back with ?after=). With nothing to send there is no limit. */

static struct bufferevent *bufferevent_of(struct evhttp_request *req) {
  struct evhttp_connection *conn = evhttp_request_get_connection(req);
  return conn != NULL ? evhttp_connection_get_bufferevent(conn) : NULL;
}

/* The answer is sent: the connection, if kept alive, awaits the next request. */
static void on_answered(struct evhttp_request *req, void *arg) {
  struct server *s = arg;
  struct bufferevent *bev = bufferevent_of(req);
  if (bev != NULL) bufferevent_set_timeouts(bev, &s->client_timeout, NULL);
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
  struct bufferevent *bev = bufferevent_of(req);
  if (bev != NULL) bufferevent_set_timeouts(bev, NULL, &s->client_timeout);
  evhttp_request_set_on_complete_cb(req, on_answered, s);
  if (!framing_ok(req)) {
    /* What follows on the connection cannot be told from this request. */
    evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
    http_error_send(req, HTTP_E_BAD_REQUEST);
    return;
  }
  routes_dispatch(s, req);
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

/* ------------------------------------------------ libevent's own answers
 *
 * libevent 2.1 refuses some requests before any callback of ours runs: a body
 * over evhttp_set_max_body_size (413), headers over evhttp_set_max_headers_size,
 * a request line or header it cannot parse, a bad Content-Length (400), an Expect
 * other than 100-continue (417), a method not allowed (501). It answers them
 * with a fixed HTML page (evhttp_send_error): 2.1 has no hook for a server
 * request before it is complete (evhttp_set_newreqcb came in 2.2), and
 * evhttp_request_set_error_cb and _header_cb only reach requests we create.
 *
 * What 2.1 does let us choose is each connection's bufferevent (evhttp_set_bevcb),
 * so we watch its output. libevent writes its page in one go, inside the callback
 * that refused the request, then closes the connection once the page is sent;
 * the socket is written only when it is next found writable, which is in a later
 * pass of the loop. An event activated from that callback runs in the current
 * pass, before the write, and swaps the page for our JSON error with the same
 * meaning. A page is recognised by its status and Content-Type: nothing turnd
 * sends is text/html. Nothing of the request is read or kept for this. */

/* One page to look at: holds a reference on the connection's bufferevent so that
 * it outlives the connection if evhttp frees it first. */
struct page_check {
  struct bufferevent *bev; /* counted ref, dropped in check_free */
  struct event *ev;        /* owned; activated once, never added */
};

static void on_output(struct evbuffer *out, const struct evbuffer_cb_info *info,
                      void *arg);

static void check_free(struct page_check *c) {
  bufferevent_decref(c->bev);
  event_free(c->ev);
  free(c);
}

/* The error our JSON gives for the status of libevent's page. */
static enum http_error error_of(int status) {
  /* 413: the body is over the limit, or (libevent files it there too) a chunk
   * is malformed. 400: the request line, a header, Content-Length, headers over
   * the limit. 417: an Expect other than 100-continue. 501: CONNECT, the one
   * method not let through to the routes (see server_start). 500: a route's own
   * evhttp_send_error. */
  if (status == 413) return HTTP_E_TOO_LARGE;
  return status >= 500 && status != 501 ? HTTP_E_INTERNAL : HTTP_E_BAD_REQUEST;
}

/* Appends a whole answer for e to out: the table's status, code and message,
 * sent as http_error_send sends them, and Connection: close, since libevent
 * closes the connection after the page it meant to send (all but a CONNECT's,
 * which our length still ends). Returns 0 or -1 (out of memory). */
static int add_error(struct evbuffer *out, enum http_error e) {
  char *text = http_error_body(e);
  if (text == NULL) return -1;
  size_t len = strlen(text);
  int status = http_error_status(e);
  char date[64] = ""; /* as libevent writes it, in the C locale turnd runs in */
  time_t now = time(NULL);
  struct tm tm;
  if (gmtime_r(&now, &tm) != NULL)
    strftime(date, sizeof date, "Date: %a, %d %b %Y %H:%M:%S GMT\r\n", &tm);
  int rv = evbuffer_add_printf(out,
                               "HTTP/1.1 %d %s\r\n"
                               "Content-Type: application/json\r\n"
                               "Cache-Control: no-store\r\n"
                               "%s"
                               "Connection: close\r\n"
                               "Content-Length: %zu\r\n\r\n",
                               status, http_reason(status), date, len);
  if (rv > 0) rv = evbuffer_add(out, text, len);
  free(text);
  return rv >= 0 ? 0 : -1;
}

/* Copies up to cap bytes from the front of out. Not evbuffer_copyout: a socket
 * bufferevent keeps its output frozen at the front between writes, and copyout
 * refuses a frozen buffer; evbuffer_peek only looks. */
static size_t peek(struct evbuffer *out, char *to, size_t cap) {
  struct evbuffer_iovec v[8];
  int n = evbuffer_peek(out, (ev_ssize_t)cap, NULL, v, 8);
  size_t got = 0;
  for (int i = 0; i < n && i < 8 && got < cap; i++) {
    size_t k = v[i].iov_len < cap - got ? v[i].iov_len : cap - got;
    memcpy(to + got, v[i].iov_base, k);
    got += k;
  }
  return got;
}

/* The length of the response head that starts at p (through its blank line), or
 * 0 when there is no whole head in p[0..n). */
static size_t head_len(const char *p, size_t n) {
  for (size_t i = 0; i + 4 <= n; i++)
    if (memcmp(p + i, "\r\n\r\n", 4) == 0) return i + 4;
  return 0;
}

/* A status line's code, "HTTP/1.1 413 ...", or 0. */
static int status_of(const char *p, size_t n) {
  if (n < 13 || memcmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ' || p[12] != ' ') return 0;
  int code = 0;
  for (size_t i = 9; i < 12; i++) {
    if (p[i] < '0' || p[i] > '9') return 0;
    code = code * 10 + (p[i] - '0');
  }
  return code;
}

/* If out holds one of libevent's pages (after a 100 Continue, maybe), replaces it
 * with our answer. A head of ours is left as it is. */
static void replace_page(struct evbuffer *out) {
  char head[1024]; /* libevent's head is about 150 bytes, a 100 Continue 25 */
  size_t n = peek(out, head, sizeof head);
  size_t at = 0; /* where the page starts: after a 100 Continue still unsent */
  if (status_of(head, n) == 100) {
    at = head_len(head, n);
    if (at == 0) return;
  }
  int status = status_of(head + at, n - at);
  size_t len = head_len(head + at, n - at);
  if (status < 400 || len == 0) return;
  /* exactly evhttp_send_error's: not the default type libevent gives a body
   * without one, which has a charset */
  static const char html[] = "\r\nContent-Type: text/html\r\n";
  bool from_libevent = false;
  for (size_t i = at; i + sizeof html - 1 <= at + len && !from_libevent; i++)
    from_libevent = memcmp(head + i, html, sizeof html - 1) == 0;
  if (!from_libevent) return;
  struct evbuffer *ours = evbuffer_new();
  if (ours == NULL || evbuffer_add(ours, head, at) != 0 ||
      add_error(ours, error_of(status)) != 0) {
    if (ours != NULL) evbuffer_free(ours);
    return; /* out of memory: libevent's page goes out as it is */
  }
  /* Frozen (see peek), out refuses to drain; it is thawed for this only, as
   * evhttp itself does when it drops an unsent request. */
  if (evbuffer_drain(out, evbuffer_get_length(out)) != 0) {
    evbuffer_unfreeze(out, 1);
    evbuffer_drain(out, evbuffer_get_length(out));
    evbuffer_freeze(out, 1);
  }
  evbuffer_add_buffer(out, ours);
  evbuffer_free(ours);
}

static void run_check(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  struct page_check *c = arg;
  struct evbuffer *out = bufferevent_get_output(c->bev);
  replace_page(out);
  evbuffer_add_cb(out, on_output, c->bev); /* watch the next answer */
  check_free(c);
}

/* Bytes were added to or taken from a connection's output. Cheap unless an
 * answer that may be libevent's page starts: one that begins an empty output (or
 * follows a 100 Continue) with a status that is not 2xx or 3xx. */
static void on_output(struct evbuffer *out, const struct evbuffer_cb_info *info,
                      void *arg) {
  if (info->n_added == 0) return;
  char start[13];
  size_t n = peek(out, start, sizeof start);
  if (n < 5 || memcmp(start, "HTTP/", 5) != 0) return;
  int status = status_of(start, n);
  bool after_continue = status == 100;
  if (info->orig_size != 0 && !after_continue) return;
  if (status >= 200 && status < 400) return;
  struct bufferevent *bev = arg;
  struct page_check *c = malloc(sizeof *c);
  if (c == NULL) return;
  c->bev = bev;
  c->ev = event_new(bufferevent_get_base(bev), -1, 0, run_check, c);
  if (c->ev == NULL) {
    free(c);
    return;
  }
  bufferevent_incref(bev);
  /* One check at a time per connection; run_check watches again. Removing
   * ourselves from inside the callback is allowed. */
  evbuffer_remove_cb(out, on_output, bev);
  event_active(c->ev, EV_TIMEOUT, 1);
}

/* evhttp_set_bevcb: the bufferevent of a new connection, made as evhttp makes its
 * own (no options: evhttp closes the socket itself), with its output watched. */
static struct bufferevent *on_connection(struct event_base *base, void *arg) {
  struct server *s = arg;
  struct bufferevent *bev = bufferevent_socket_new(base, -1, 0);
  if (bev == NULL) return NULL; /* evhttp makes one itself, unwatched */
  evbuffer_add_cb(bufferevent_get_output(bev), on_output, bev);
  bufferevent_set_timeouts(bev, &s->client_timeout, NULL); /* awaiting a request */
  return bev;
}

/* event_base_foreach_event: a page check still waiting, to free it. */
static int find_check(const struct event_base *base, const struct event *ev, void *arg) {
  (void)base;
  if (event_get_callback(ev) != run_check) return 0;
  *(struct page_check **)arg = event_get_callback_arg(ev);
  return 1; /* stop: it is freed outside the walk */
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

int server_start(struct server *s, struct turnd *d, struct event_base *base,
                 const struct options *opt) {
  memset(s, 0, sizeof *s);
  s->d = d;
  s->base = base;
  s->opt = opt;
  s->client_timeout = (struct timeval){(time_t)opt->client_timeout_s, 0};
  s->http = evhttp_new(base);
  s->accept_resume = evtimer_new(base, on_accept_resume, s);
  if (s->http == NULL || s->accept_resume == NULL) {
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
  evhttp_set_bevcb(s->http, on_connection, s);
  /* libevent enforces both limits while it reads, so no request costs more than
   * this much buffer; its refusals are turned into JSON above. The body limit is
   * the routes' own, which http_body_json checks again. */
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
  if (s->http != NULL) evhttp_free(s->http);
  s->http = NULL;
  if (s->accept_resume != NULL) event_free(s->accept_resume);
  s->accept_resume = NULL;
  if (accepting == s) accepting = NULL;
  s->bound = NULL;
  /* A check runs in the loop pass that made it, so none is left once the loop
   * has returned; should one be, it is freed here with its reference. */
  struct page_check *c = NULL;
  while (s->base != NULL && event_base_foreach_event(s->base, find_check, &c) != 0 &&
         c != NULL) {
    check_free(c);
    c = NULL;
  }
}
