/* libevent's own answers, made turnd's JSON (see http_page.h).
 *
 * libevent 2.1 refuses some requests before any callback of ours runs: a body
 * over evhttp_set_max_body_size (413), headers over evhttp_set_max_headers_size,
 * a request line or header it cannot parse, a bad Content-Length (400), an Expect
 * other than 100-continue (417), a method not allowed (501). It answers them
 * with a fixed HTML page (evhttp_send_error): 2.1 has no hook for a server
 * request before it is complete (evhttp_set_newreqcb came in 2.2), and
 * evhttp_request_set_error_cb and _header_cb only reach requests we create.
 *
 * libevent writes its page in one go, inside the callback that refused the
 * request, and the socket is written only when it is next found writable, in a
 * later pass of the loop; conn_watch.c watches each connection's output and has
 * the page replaced before then. A page is recognised by its status and
 * Content-Type: nothing turnd sends is text/html. Nothing of the request is read
 * or kept for this. */
#include "http_page.h"

#include "http_reply.h"

#include <event2/buffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* The error our JSON gives for the status of libevent's page. */
static enum http_error error_of(int status, bool bad_chunk) {
  /* 413: the body is over the limit, or (libevent 2.1 files it there too) a
   * chunk or a trailer of a chunked body could not be read, which conn_watch.c
   * tells apart (bad_chunk). 400: the request line, a header, Content-Length,
   * headers over the limit. 417: an Expect other than 100-continue. 501:
   * CONNECT, the one method not let through to the routes (see server_start).
   * 500: a route's own evhttp_send_error. */
  if (status == 413) return bad_chunk ? HTTP_E_BAD_REQUEST : HTTP_E_TOO_LARGE;
  return status >= 500 && status != 501 ? HTTP_E_INTERNAL : HTTP_E_BAD_REQUEST;
}

int http_page_add_error(struct evbuffer *out, enum http_error e, unsigned retry_after_s) {
  char *text = http_error_body(e);
  if (text == NULL) return -1;
  size_t len = strlen(text);
  int status = http_error_status(e);
  char date[64] = ""; /* as libevent writes it, in the C locale turnd runs in */
  time_t now = time(NULL);
  struct tm tm;
  if (gmtime_r(&now, &tm) != NULL)
    strftime(date, sizeof date, "Date: %a, %d %b %Y %H:%M:%S GMT\r\n", &tm);
  char retry[48] = "";
  if (retry_after_s > 0)
    snprintf(retry, sizeof retry, "Retry-After: %u\r\n", retry_after_s);
  int rv = evbuffer_add_printf(out,
                               "HTTP/1.1 %d %s\r\n"
                               "Content-Type: application/json\r\n"
                               "Cache-Control: no-store\r\n"
                               "%s%s"
                               "Connection: close\r\n"
                               "Content-Length: %zu\r\n\r\n",
                               status, http_reason(status), date, retry, len);
  if (rv > 0) rv = evbuffer_add(out, text, len);
  free(text);
  return rv >= 0 ? 0 : -1;
}

bool http_page_may_start(struct evbuffer *out, const struct evbuffer_cb_info *info) {
  if (info->n_added == 0) return false;
  char start[13];
  size_t n = peek(out, start, sizeof start);
  if (n < 5 || memcmp(start, "HTTP/", 5) != 0) return false;
  int status = status_of(start, n);
  bool after_continue = status == 100;
  if (info->orig_size != 0 && !after_continue) return false;
  return status < 200 || status >= 400;
}

void http_page_replace(struct evbuffer *out, bool bad_chunk) {
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
      http_page_add_error(ours, error_of(status, bad_chunk), 0) != 0) {
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
