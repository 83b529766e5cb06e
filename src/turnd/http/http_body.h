/* Reading a JSON request body, with the errors every route gives for it. */
#ifndef TURND_HTTP_BODY_H
#define TURND_HTTP_BODY_H

#include <jansson.h>

struct evhttp_request;

/* Bytes: a user's text, a decision. It is libevent's limit too (server.c), so a
 * longer body is refused while it is read, never buffered whole. */
#define HTTP_BODY_MAX (64u * 1024u)

/* The body as a JSON object (returns owned), or NULL after answering req with
 * 413 (too large), 400 bad_json (not JSON, not an object). */
json_t *http_body_json(struct evhttp_request *req);

#endif
