/* load_conn: a plain non-blocking socket with one persistent read event and a
 * one-shot write event. Every read goes into the client's one buffer and is parsed
 * at once, so a connection keeps nothing of a body; the end callback is always the
 * last thing a function here does, since it may reuse or close the connection. */
#include "load_conn.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

uint64_t load_conn_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *load_conn_strend(enum load_conn_end e) {
  static const char *const msgs[] = {
#define LOAD_CONN_MSG(name, msg) [LOAD_CONN_##name] = msg,
      LOAD_CONN_ENDS(LOAD_CONN_MSG)
#undef LOAD_CONN_MSG
  };
  return (size_t)e < sizeof msgs / sizeof msgs[0] ? msgs[e] : "unknown end";
}

bool load_conn_resolve(const char *prog, const char *host, const char *port,
                       struct sockaddr_storage *addr, socklen_t *addr_len) {
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
  struct addrinfo *ai;
  int rv = getaddrinfo(host, port, &hints, &ai);
  if (rv != 0) {
    fprintf(stderr, "%s: %s: %s\n", prog, host, gai_strerror(rv));
    return false;
  }
  memcpy(addr, ai->ai_addr, ai->ai_addrlen);
  *addr_len = ai->ai_addrlen;
  freeaddrinfo(ai);
  return true;
}

void load_conn_init(struct load_conn *c, const struct load_client *client, void *ctx) {
  memset(c, 0, sizeof *c);
  c->client = client;
  c->ctx = ctx;
  c->fd = -1;
  c->state = LOAD_CONN_CLOSED;
}

void load_conn_close(struct load_conn *c) {
  if (c->state == LOAD_CONN_CLOSED) return;
  if (c->rev != NULL) event_free(c->rev);
  if (c->wev != NULL) event_free(c->wev);
  c->rev = c->wev = NULL;
  close(c->fd);
  c->fd = -1;
  c->state = LOAD_CONN_CLOSED;
}

static void end(struct load_conn *c, enum load_conn_end e) {
  if (e != LOAD_CONN_DONE || !c->answer.keep_alive)
    load_conn_close(c);
  else
    c->state = LOAD_CONN_IDLE;
  c->client->ops->end(c->ctx, e);
}

/* A kept-alive connection that the server closed before answering is no failure
 * of the request (it raced the close): the owner may send it again. */
static enum load_conn_end gone(const struct load_conn *c, enum load_conn_end e) {
  return c->reused && c->answer.received == 0 ? LOAD_CONN_E_STALE : e;
}

static void on_read(evutil_socket_t fd, short what, void *arg) {
  (void)what;
  struct load_conn *c = arg;
  const struct load_client *client = c->client;
  const struct load_conn_ops *ops = client->ops;
  ssize_t n = ops->read != NULL ? ops->read(c->ctx, fd, client->buf, client->buf_cap)
                                : recv(fd, client->buf, client->buf_cap, 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (c->state == LOAD_CONN_IDLE) { /* the server closed it, or sent what it should not */
    load_conn_close(c);
    return;
  }
  if (n <= 0) {
    enum load_conn_end e = gone(c, LOAD_CONN_E_CLOSED);
    if (e == LOAD_CONN_E_CLOSED && c->state == LOAD_CONN_ANSWER && n == 0 &&
        load_answer_eof(&c->answer) == LOAD_ANSWER_DONE)
      e = LOAD_CONN_DONE; /* a body that runs to the close */
    end(c, e);
    return;
  }
  if (c->state != LOAD_CONN_ANSWER) { /* an answer before the whole request */
    end(c, LOAD_CONN_E_HTTP);
    return;
  }
  if (ops->received != NULL) ops->received(c->ctx);
  size_t used;
  enum load_answer_state st =
      load_answer_feed(&c->answer, client->buf, (size_t)n, &used, ops->body, c->ctx);
  if (ops->fed != NULL) ops->fed(c->ctx, st);
  if (st == LOAD_ANSWER_ERROR || (st == LOAD_ANSWER_DONE && used < (size_t)n))
    end(c, LOAD_CONN_E_HTTP); /* bytes past the answer: we never pipeline */
  else if (st == LOAD_ANSWER_DONE)
    end(c, LOAD_CONN_DONE);
}

/* Writes what is left of the request; waits for room when the socket is full. */
static void send_more(struct load_conn *c) {
  if (c->t_send_ns == 0) c->t_send_ns = load_conn_now_ns();
  while (c->sent < c->request_len) {
    ssize_t n = send(c->fd, c->request + c->sent, c->request_len - c->sent, MSG_NOSIGNAL);
    if (n >= 0) {
      c->sent += (size_t)n;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      event_add(c->wev, NULL);
      return;
    } else if (errno != EINTR) {
      end(c, gone(c, LOAD_CONN_E_SEND));
      return;
    }
  }
  c->state = LOAD_CONN_ANSWER;
}

static void on_write(evutil_socket_t fd, short what, void *arg) {
  (void)what;
  struct load_conn *c = arg;
  if (c->state == LOAD_CONN_CONNECTING) {
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      end(c, LOAD_CONN_E_CONNECT);
      return;
    }
    c->state = LOAD_CONN_SENDING;
    event_add(c->rev, NULL);
  }
  if (c->state == LOAD_CONN_SENDING) send_more(c);
}

static void connect_new(struct load_conn *c) {
  const struct load_client *client = c->client;
  c->fd = socket(client->addr.ss_family, SOCK_STREAM, 0);
  if (c->fd < 0) {
    end(c, LOAD_CONN_E_SOCKET);
    return;
  }
  if (client->ops->opened != NULL) client->ops->opened(c->ctx, c->fd);
  c->state = LOAD_CONN_CONNECTING;
  c->rev = event_new(client->base, c->fd, EV_READ | EV_PERSIST, on_read, c);
  c->wev = event_new(client->base, c->fd, EV_WRITE, on_write, c);
  if (c->rev == NULL || c->wev == NULL) {
    end(c, LOAD_CONN_E_NOMEM);
    return;
  }
  int flags = fcntl(c->fd, F_GETFL);
  if (flags < 0 || fcntl(c->fd, F_SETFL, flags | O_NONBLOCK) != 0 ||
      fcntl(c->fd, F_SETFD, FD_CLOEXEC) != 0) {
    end(c, LOAD_CONN_E_CONNECT);
    return;
  }
  if (connect(c->fd, (const struct sockaddr *)&client->addr, client->addr_len) == 0) {
    c->state = LOAD_CONN_SENDING;
    event_add(c->rev, NULL);
    send_more(c);
  } else if (errno == EINPROGRESS) {
    event_add(c->wev, NULL);
  } else {
    end(c, LOAD_CONN_E_CONNECT);
  }
}

void load_conn_send(struct load_conn *c, const char *request, size_t len) {
  load_answer_init(&c->answer);
  c->request = request;
  c->request_len = len;
  c->sent = 0;
  c->t_send_ns = 0;
  c->reused = c->state == LOAD_CONN_IDLE;
  if (c->reused) {
    c->state = LOAD_CONN_SENDING;
    send_more(c);
  } else {
    connect_new(c);
  }
}
