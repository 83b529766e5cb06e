/* The HTTP error table and its reply; see http_error.h. */
#include "http_error.h"

#include "http_reply.h"

#include <jansson.h>

static const struct {
  int status;
  const char *code;
  const char *message;
} errors[] = {
#define HTTP_ERROR_ROW(name, status, code, msg) {status, code, msg},
    HTTP_ERRORS(HTTP_ERROR_ROW)
#undef HTTP_ERROR_ROW
};

void http_error_send(struct evhttp_request *req, enum http_error e) {
  json_t *body = json_pack("{s:{s:s,s:s}}", "error", "code", errors[e].code, "message",
                           errors[e].message);
  http_reply_json(req, errors[e].status, body);
}
