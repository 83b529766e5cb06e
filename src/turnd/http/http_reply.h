/* Sending a whole JSON answer, and the pieces of a streaming one. */
#ifndef TURND_HTTP_REPLY_H
#define TURND_HTTP_REPLY_H

#include <jansson.h>
#include <stdbool.h>

struct evhttp_request;

/* The reason phrase of an HTTP status turnd sends. */
const char *http_reason(int status);
/* Answers req with status and body as compact JSON (takes body; NULL answers 500). */
void http_reply_json(struct evhttp_request *req, int status, json_t *body);
/* Answers req with status and text[0..len), which is JSON already (borrows). */
void http_reply_json_text(struct evhttp_request *req, int status, const char *text,
                          size_t len);

/* Adds Retry-After: seconds to req's answer (before it is sent). */
void http_reply_retry_after(struct evhttp_request *req, unsigned seconds);

/* Starts a 200 NDJSON stream on req (chunks follow). Small chunks go out at
 * once: Nagle's algorithm would hold each one back until the client's delayed
 * ACK, tens of milliseconds, the end of every turn included. */
void http_stream_start(struct evhttp_request *req);
/* Writes what req's connection holds for its client to the socket now, rather
 * than once the loop next finds it writable: a chunk just handed to evhttp
 * leaves at once, and the connection is not watched for writing in between.
 * Returns true when all of it went: then the callback of the chunk handed last
 * (evhttp_send_reply_chunk_with_cb) will not come, and the caller goes on as if
 * it had. Returns false when the socket took less, or failed: the rest goes, and
 * the callback comes, as ever. */
bool http_stream_write_now(struct evhttp_request *req);
/* Cuts a stream started with http_stream_start off: its connection is closed
 * without the answer's end (a chunked answer's last chunk), so the client sees
 * the answer stop short, as when a connection drops, and can tell it from an
 * answer that ended. req and its connection are freed; the connection's close
 * callback, if one is still set, is called first. Not from inside a callback of
 * req's connection. */
void http_stream_abort(struct evhttp_request *req);

#endif
