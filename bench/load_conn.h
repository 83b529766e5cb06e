/* load_conn: the bench programs' HTTP/1.1 client connection on a libevent loop: a
 * non-blocking connect, the request written as the socket takes it, the answer read
 * into a buffer the program's connections share and parsed by load_answer, its body
 * handed on as it arrives. A connection carries one request after another while
 * the server keeps it alive; it never pipelines, so bytes past an answer are an
 * error. */
#ifndef BENCH_LOAD_CONN_H
#define BENCH_LOAD_CONN_H

#include "load_answer.h"

#include <event2/event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

/*   CLOSED -> CONNECTING -> SENDING -> ANSWER -> IDLE -> SENDING -> ... (kept alive)
 *   any -> CLOSED  [load_conn_close: a failure, an answer without keep-alive, the
 *                   owner, or the server closed an idle connection]
 * Guarantees: fd >= 0 and both events exist iff not CLOSED; the read event is
 * added in SENDING, ANSWER and IDLE, so a close by the server is seen even
 * between requests. */
enum load_conn_state {
  LOAD_CONN_CLOSED,
  LOAD_CONN_CONNECTING,
  LOAD_CONN_SENDING,
  LOAD_CONN_ANSWER,
  LOAD_CONN_IDLE
};

/* How one request's exchange ended: the name and its message. STALE: a
 * kept-alive connection was gone before any byte of the answer, so the request
 * raced the server's close and may be sent again on a new connection. */
#define LOAD_CONN_ENDS(X)                                      \
  X(DONE, "the answer ended") /* whatever its status */        \
  X(E_SOCKET, "no socket")                                     \
  X(E_CONNECT, "could not connect") /* or set the socket up */ \
  X(E_SEND, "could not send the request")                      \
  X(E_CLOSED, "connection closed before the answer's end")     \
  X(E_HTTP, "not an HTTP/1.1 answer this client reads")        \
  X(E_STALE, "kept-alive connection closed before the answer") \
  X(E_NOMEM, "out of memory") /* no event for the socket */

enum load_conn_end {
#define LOAD_CONN_ENUM(name, msg) LOAD_CONN_##name,
  LOAD_CONN_ENDS(LOAD_CONN_ENUM)
#undef LOAD_CONN_ENUM
};

/* The owner's callbacks; ctx is the one given to load_conn_init. Only end may
 * close the connection or start its next request. */
struct load_conn_ops {
  /* Optional: a socket was made for a new connection, before its connect. */
  void (*opened)(void *ctx, int fd);
  /* Optional, else recv(): reads from fd into buf[0..cap) as recv() does, so the
   * owner can stamp the read. */
  ssize_t (*read)(void *ctx, int fd, char *buf, size_t cap);
  /* Optional: a read brought bytes of the answer; called before they are parsed. */
  void (*received)(void *ctx);
  /* Each span of the answer's body, in order. */
  load_answer_body_cb body;
  /* Optional: after parsing a read's bytes; st is the answer's state then. */
  void (*fed)(void *ctx, enum load_answer_state st);
  /* The exchange is over. The connection is CLOSED, except after LOAD_CONN_DONE
   * with an answer that keeps it alive: then it is IDLE. Called last: the
   * callee may free, close or reuse the connection. */
  void (*end)(void *ctx, enum load_conn_end e);
};

/* What all of a program's connections share. The caller owns it and keeps it
 * until every connection is closed. */
struct load_client {
  struct event_base *base;
  struct sockaddr_storage addr; /* the server's address */
  socklen_t addr_len;
  const struct load_conn_ops *ops;
  char *buf; /* every read lands here; nothing is kept past the read's callbacks */
  size_t buf_cap;
};

struct load_conn {
  const struct load_client *client; /* borrowed */
  void *ctx;                        /* the callbacks' */
  int fd;                           /* -1 iff CLOSED */
  struct event *rev;                /* persistent read on fd */
  struct event *wev; /* one-shot write: the connect finished, or room to send */
  enum load_conn_state state;
  const char *request; /* borrowed until the exchange ends */
  size_t request_len;
  size_t sent;               /* bytes of the request written */
  bool reused;               /* the request went on a kept-alive connection */
  uint64_t t_send_ns;        /* the request's first write; 0 until then */
  struct load_answer answer; /* the answer being read */
};

/* Resolves host and port (numeric or names) into *addr and *addr_len. Returns
 * false with "PROG: HOST: reason" on stderr (then the outputs are untouched). */
bool load_conn_resolve(const char *prog, const char *host, const char *port,
                       struct sockaddr_storage *addr, socklen_t *addr_len);

/* A CLOSED connection of client (borrowed) whose callbacks get ctx. */
void load_conn_init(struct load_conn *c, const struct load_client *client, void *ctx);
/* Sends request[0..len) (borrowed until the end callback) on the kept-alive
 * connection if it is IDLE, else on a new one, and reads the answer. Every
 * outcome comes through the end callback, which may be called before this
 * returns. */
void load_conn_send(struct load_conn *c, const char *request, size_t len);
/* Closes the connection, if open; no callback follows. */
void load_conn_close(struct load_conn *c);

/* The message of an end. */
const char *load_conn_strend(enum load_conn_end e);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t load_conn_now_ns(void);

#endif
