/* Whole JSON answers: compact, UTF-8, with the content type set. */
#include "http_reply.h"

#include "loop_prio.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *http_reason(int status) {
  switch (status) {
  case 200:
    return "OK";
  case 204:
    return "No Content";
  case 400:
    return "Bad Request";
  case 401:
    return "Unauthorized";
  case 404:
    return "Not Found";
  case 405:
    return "Method Not Allowed";
  case 403:
    return "Forbidden";
  case 409:
    return "Conflict";
  case 413:
    return "Payload Too Large";
  case 423:
    return "Locked";
  case 429:
    return "Too Many Requests";
  case 503:
    return "Service Unavailable";
  default:
    return status >= 500 ? "Internal Server Error" : "Error";
  }
}

void http_reply_json(struct evhttp_request *req, int status, json_t *body) {
  char *text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
  json_decref(body);
  if (text == NULL) {
    evhttp_send_error(req, 500, NULL);
    return;
  }
  http_reply_json_text(req, status, text, strlen(text));
  free(text);
}

void http_reply_json_text(struct evhttp_request *req, int status, const char *text,
                          size_t len) {
  struct evbuffer *out = evbuffer_new();
  if (out == NULL || evbuffer_add(out, text, len) != 0) {
    if (out != NULL) evbuffer_free(out);
    evhttp_send_error(req, 500, NULL);
    return;
  }
  struct evkeyvalq *headers = evhttp_request_get_output_headers(req);
  evhttp_add_header(headers, "Content-Type", "application/json");
  evhttp_add_header(headers, "Cache-Control", "no-store");
  evhttp_send_reply(req, status, http_reason(status), out);
  evbuffer_free(out);
}

void http_stream_start(struct evhttp_request *req) {
  struct evhttp_connection *conn = evhttp_request_get_connection(req);
  struct bufferevent *bev = conn != NULL ? evhttp_connection_get_bufferevent(conn) : NULL;
  evutil_socket_t fd = bev != NULL ? bufferevent_getfd(bev) : -1;
  int one = 1;
  if (fd >= 0) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  /* A stream's writes go before new requests (loop_prio.h). */
  if (bev != NULL) bufferevent_priority_set(bev, LOOP_PRIO_STREAM);
  struct evkeyvalq *headers = evhttp_request_get_output_headers(req);
  evhttp_add_header(headers, "Content-Type", "application/x-ndjson");
  evhttp_add_header(headers, "Cache-Control", "no-store");
  evhttp_send_reply_start(req, 200, "OK");
}

bool http_stream_write_now(struct evhttp_request *req) {
  struct evhttp_connection *conn = evhttp_request_get_connection(req);
  struct bufferevent *bev = conn != NULL ? evhttp_connection_get_bufferevent(conn) : NULL;
  if (bev == NULL) return false;
  struct evbuffer *out = bufferevent_get_output(bev);
  evutil_socket_t fd = bufferevent_getfd(bev);
  while (evbuffer_get_length(out) > 0)
    if (evbuffer_write(out, fd) <= 0) return false; /* full, or failed: evhttp sees */
  /* evhttp asked to be told once the socket took the chunk; it has. Without
   * this the loop would wake for a writable socket with nothing to write, and
   * (the loop keeps a change list) the two changes of its watch cancel out. */
  bufferevent_disable(bev, EV_WRITE);
  return true;
}

void http_stream_abort(struct evhttp_request *req) {
  struct evhttp_connection *conn = evhttp_request_get_connection(req);
  if (conn == NULL) { /* the client left already: ending it only frees it */
    evhttp_send_reply_end(req);
    return;
  }
  /* libevent 2.1 has no call to abort an answer; freeing the connection frees
   * the requests it holds, ours included, and closes the socket. */
  evhttp_connection_free(conn);
}

void http_reply_retry_after(struct evhttp_request *req, unsigned seconds) {
  char value[16];
  snprintf(value, sizeof value, "%u", seconds);
  evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", value);
}
