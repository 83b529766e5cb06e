/* bench-relay: the least a process between a provider and a client can do. It
 * accepts connections and copies every byte, both ways, to and from a new
 * connection to --to, on one libevent loop with bufferevents, TCP_NODELAY on
 * both sides (as turnd's client side and libcurl have). It parses nothing and
 * stores nothing. bench/provider_latency.sh reads the fake provider's streams
 * through it: what it adds is what one hop through any event loop costs on
 * this machine under the same load, the floor beside turnd's figure. */
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static const char usage[] = "usage: bench-relay --listen HOST:PORT --to HOST:PORT\n"
                            "Prints \"listening on http://HOST:PORT\" once it listens.\n";

/* The two ends of one relayed connection: each end's input goes to the
 * other's output. Freed once either end closes and the other has written
 * what it held. */
struct pair {
  struct bufferevent *end[2]; /* 0: the client's, 1: the target's */
  bool closing;
};

static struct sockaddr_storage target;
static socklen_t target_len;

static void pair_free(struct pair *p) {
  for (int i = 0; i < 2; i++)
    if (p->end[i] != NULL) bufferevent_free(p->end[i]);
  free(p);
}

static int side_of(const struct pair *p, const struct bufferevent *bev) {
  return p->end[0] == bev ? 0 : 1;
}

static void on_read(struct bufferevent *bev, void *arg) {
  struct pair *p = arg;
  struct bufferevent *other = p->end[1 - side_of(p, bev)];
  evbuffer_add_buffer(bufferevent_get_output(other), bufferevent_get_input(bev));
}

/* Once closing, the remaining end is freed when its output has gone out. */
static void on_drained(struct bufferevent *bev, void *arg) {
  struct pair *p = arg;
  if (p->closing && evbuffer_get_length(bufferevent_get_output(bev)) == 0) pair_free(p);
}

static void nodelay(struct bufferevent *bev) {
  int one = 1;
  evutil_socket_t fd = bufferevent_getfd(bev);
  if (fd >= 0) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void on_event(struct bufferevent *bev, short what, void *arg) {
  struct pair *p = arg;
  if (what & BEV_EVENT_CONNECTED) {
    nodelay(bev);
    return;
  }
  if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))) return;
  if (p->closing) { /* the end still draining went too: nothing left to copy */
    pair_free(p);
    return;
  }
  int side = side_of(p, bev);
  struct bufferevent *other = p->end[1 - side];
  on_read(bev, p); /* what came with the end */
  bufferevent_free(bev);
  p->end[side] = NULL;
  if (evbuffer_get_length(bufferevent_get_output(other)) == 0) {
    pair_free(p);
    return;
  }
  p->closing = true;
  bufferevent_disable(other, EV_READ);
  bufferevent_setcb(other, NULL, on_drained, on_event, p);
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *addr,
                      int len, void *arg) {
  (void)addr;
  (void)len;
  (void)arg;
  struct event_base *base = evconnlistener_get_base(l);
  struct pair *p = calloc(1, sizeof *p);
  if (p == NULL) {
    evutil_closesocket(fd);
    return;
  }
  p->end[0] = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
  p->end[1] = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
  if (p->end[0] == NULL || p->end[1] == NULL ||
      bufferevent_socket_connect(p->end[1], (struct sockaddr *)&target,
                                 (int)target_len) != 0) {
    if (p->end[0] == NULL) evutil_closesocket(fd);
    pair_free(p);
    return;
  }
  nodelay(p->end[0]);
  for (int i = 0; i < 2; i++) {
    bufferevent_setcb(p->end[i], on_read, NULL, on_event, p);
    bufferevent_enable(p->end[i], EV_READ | EV_WRITE);
  }
}

/* HOST:PORT into addr. Returns 0, or -1 when it does not resolve. */
static int resolve(const char *hostport, struct sockaddr_storage *addr, socklen_t *len) {
  char host[256];
  const char *colon = strrchr(hostport, ':');
  if (colon == NULL || (size_t)(colon - hostport) >= sizeof host) return -1;
  memcpy(host, hostport, (size_t)(colon - hostport));
  host[colon - hostport] = '\0';
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
  struct addrinfo *res = NULL;
  if (getaddrinfo(host, colon + 1, &hints, &res) != 0 || res == NULL) return -1;
  memcpy(addr, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  freeaddrinfo(res);
  return 0;
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN); /* a reader gone mid-write is an error, not our end */
  const char *listen_at = NULL, *to = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--listen") == 0)
      listen_at = argv[i + 1];
    else if (strcmp(argv[i], "--to") == 0)
      to = argv[i + 1];
  }
  struct sockaddr_storage at;
  socklen_t at_len;
  if (listen_at == NULL || to == NULL || argc != 5 ||
      resolve(listen_at, &at, &at_len) != 0 || resolve(to, &target, &target_len) != 0) {
    fputs(usage, stderr);
    return 2;
  }
  struct event_base *base = event_base_new();
  struct evconnlistener *l =
      base == NULL ? NULL
                   : evconnlistener_new_bind(base, on_accept, NULL,
                                             LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE,
                                             512, (struct sockaddr *)&at, (int)at_len);
  if (l == NULL) {
    fprintf(stderr, "bench-relay: cannot listen on %s: %s\n", listen_at, strerror(errno));
    return 1;
  }
  struct sockaddr_in bound;
  socklen_t bound_len = sizeof bound;
  if (getsockname(evconnlistener_get_fd(l), (struct sockaddr *)&bound, &bound_len) != 0 ||
      bound.sin_family != AF_INET) {
    fprintf(stderr, "bench-relay: only an IPv4 address is offered\n");
    return 1;
  }
  printf("listening on http://%.*s:%u\n", (int)(strrchr(listen_at, ':') - listen_at),
         listen_at, (unsigned)ntohs(bound.sin_port));
  fflush(stdout);
  event_base_dispatch(base);
  evconnlistener_free(l);
  event_base_free(base);
  return 0;
}
