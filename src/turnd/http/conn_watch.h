/* Each HTTP connection turnd serves, watched from its bufferevent: how many are
 * open (past --max-connections a new one is answered 503 and closed), the
 * deadline of a request (its line, headers and body within --client-timeout),
 * whether a reader still takes its answer (one that takes nothing for
 * --reader-timeout while bytes wait for it is dropped), and libevent's own error
 * pages, made turnd's JSON (http_page.c). Lifetime rules: conn_watch.c. */
#ifndef TURND_CONN_WATCH_H
#define TURND_CONN_WATCH_H

struct bufferevent;
struct event_base;
struct evhttp_connection;
struct evhttp_request;

struct conn_watch;

/* Starts watching the connections of an evhttp on base: at most max_open at
 * once, timeout_s being --client-timeout and reader_timeout_s --reader-timeout.
 * Returns owned (conn_watch_free), or NULL when out of memory. One per process:
 * conn_watch_set_closecb finds it. */
struct conn_watch *conn_watch_new(struct event_base *base, unsigned max_open,
                                  unsigned timeout_s, unsigned reader_timeout_s);
/* Frees w and what is left of its connections: after evhttp_free, which ends
 * every connection (calling their close callbacks). Accepts NULL. */
void conn_watch_free(struct conn_watch *w);

/* For evhttp_set_bevcb (arg is the conn_watch): a new connection's bufferevent,
 * watched from now on, or NULL when out of memory (evhttp then makes one
 * itself, which goes unwatched). */
struct bufferevent *conn_watch_accept(struct event_base *base, void *arg);
/* The request on req's connection is whole and goes to the routes: its answer
 * is watched from now on. Call before the route runs. */
void conn_watch_request(struct evhttp_request *req);
/* req's answer was sent (evhttp_request_set_on_complete_cb): its connection,
 * kept alive, awaits the next request. */
void conn_watch_answered(struct evhttp_request *req);

/* Sets evcon's close callback, which libevent calls when the connection ends,
 * before it frees the connection. conn_watch keeps libevent's one place for
 * itself, to learn of each connection's end, and calls cb there first; so every
 * other part of turnd sets its callback here, never with
 * evhttp_connection_set_closecb (scripts/check-source.sh). One per connection,
 * as libevent's: cb NULL removes it. */
void conn_watch_set_closecb(struct evhttp_connection *evcon,
                            void (*cb)(struct evhttp_connection *, void *), void *arg);
/* For the close callback set above by a streamed answer (http_stream_start):
 * its client went away. Removes that callback, sets *conn (req's connection) to
 * NULL and ends req's answer. libevent leaves a chunked answer's request to its
 * owner (it does not free it when the connection closes), so ending the answer
 * is what frees req; nothing reaches the closed socket. */
void conn_watch_stream_gone(struct evhttp_request *req, struct evhttp_connection **conn);

#endif
