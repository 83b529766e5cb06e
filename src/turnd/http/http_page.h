/* libevent's own answers made turnd's: libevent 2.1 refuses some requests with a
 * fixed HTML page before any route sees them; the page is found in the
 * connection's output before it is written and replaced by turnd's JSON error
 * with the same meaning. Works on an evbuffer only: conn_watch.c says when. */
#ifndef TURND_HTTP_PAGE_H
#define TURND_HTTP_PAGE_H

#include "http_error.h"

#include <stdbool.h>

struct evbuffer;
struct evbuffer_cb_info;

/* Whether the bytes just added to a connection's output (info, as an evbuffer
 * callback has it) may start one of libevent's pages: an answer that begins the
 * output, or follows a 100 Continue, with a status that is not 2xx or 3xx. Cheap:
 * a look at the output's first bytes. */
bool http_page_may_start(struct evbuffer *out, const struct evbuffer_cb_info *info);

/* If out holds one of libevent's pages (after a 100 Continue, maybe), replaces it
 * with turnd's answer. bad_chunk says that the request was a chunked body
 * libevent could not read, which it files under 413: then the answer is 400
 * bad_request. A head of turnd's own is left as it is; out of memory, the page
 * goes out as it is. */
void http_page_replace(struct evbuffer *out, bool bad_chunk);

/* Appends a whole answer for e to out, as http_error_send sends it, and
 * Retry-After when retry_after_s > 0. With Connection: close: libevent closes
 * the connection after each page it sends (all but a CONNECT's, which the length
 * still ends), and conn_watch.c after a refusal. Returns 0, or -1 when out of
 * memory. */
int http_page_add_error(struct evbuffer *out, enum http_error e, unsigned retry_after_s);

#endif
