/* Sending a whole JSON answer. */
#ifndef TURND_HTTP_REPLY_H
#define TURND_HTTP_REPLY_H

#include <jansson.h>

struct evhttp_request;

/* Answers req with status and body as compact JSON (takes body; NULL answers 500). */
void http_reply_json(struct evhttp_request *req, int status, json_t *body);

#endif
