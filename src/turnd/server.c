/* Binding and serving: turnd learns the port it got (for --listen HOST:0) from
 * the bound socket itself, so what it prints is what clients can reach. */
#include "server.h"

#include "routes.h"

#include <event2/http.h>
#include <event2/util.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static void on_request(struct evhttp_request *req, void *arg) {
  routes_dispatch(arg, req);
}

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
  s->http = evhttp_new(base);
  if (s->http == NULL) {
    fprintf(stderr, "turnd: cannot create the HTTP server\n");
    return -1;
  }
  /* Every method reaches the route table, so a wrong one gets a JSON 405. */
  evhttp_set_allowed_methods(s->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT |
                                          EVHTTP_REQ_DELETE | EVHTTP_REQ_PATCH |
                                          EVHTTP_REQ_HEAD | EVHTTP_REQ_OPTIONS);
  evhttp_set_gencb(s->http, on_request, s);
  /* Past this, libevent itself refuses the request; below it the routes answer
   * 413 with a JSON body (http_body.c). */
  evhttp_set_max_body_size(s->http, 1 << 20);
  evhttp_set_max_headers_size(s->http,
                              16 * 1024); /* a client cannot grow us by headers */
  s->bound = evhttp_bind_socket_with_handle(s->http, opt->listen_host, opt->listen_port);
  if (s->bound == NULL) {
    fprintf(stderr, "turnd: cannot listen on %s port %u: %s\n", opt->listen_host,
            (unsigned)opt->listen_port,
            evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
    evhttp_free(s->http);
    s->http = NULL;
    return -1;
  }
  s->port = bound_port(s->bound);
  return 0;
}

void server_stop(struct server *s) {
  if (s->http != NULL) evhttp_free(s->http);
  s->http = NULL;
  s->bound = NULL;
}
