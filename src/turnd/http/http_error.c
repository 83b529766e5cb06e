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

static const struct {
  enum http_error error;
  const char *message;
} variants[] = {
#define HTTP_ERROR_VARIANT_ROW(name, error, msg) {HTTP_E_##error, msg},
    HTTP_ERROR_VARIANTS(HTTP_ERROR_VARIANT_ROW)
#undef HTTP_ERROR_VARIANT_ROW
};

static json_t *body_with(enum http_error e, const char *message) {
  return json_pack("{s:{s:s,s:s}}", "error", "code", errors[e].code, "message", message);
}

static json_t *body_of(enum http_error e) {
  return body_with(e, errors[e].message);
}

void http_error_send(struct evhttp_request *req, enum http_error e) {
  http_reply_json(req, errors[e].status, body_of(e));
}

void http_error_send_why(struct evhttp_request *req, enum http_error e, const char *why) {
  http_reply_json(req, errors[e].status, body_with(e, why));
}

void http_error_send_variant(struct evhttp_request *req, enum http_error_variant v) {
  http_error_send_why(req, variants[v].error, variants[v].message);
}

void http_error_send_with(struct evhttp_request *req, enum http_error e, const char *key,
                          json_t *value) {
  json_t *body = body_of(e);
  json_t *error = json_object_get(body, "error");
  if (error == NULL) json_decref(value);
  if (error == NULL || json_object_set_new(error, key, value) != 0) { /* takes value */
    json_decref(body);
    body = NULL; /* out of memory: answered 500 */
  }
  http_reply_json(req, errors[e].status, body);
}

int http_error_status(enum http_error e) {
  return errors[e].status;
}

char *http_error_body(enum http_error e) {
  json_t *body = body_of(e);
  char *text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
  json_decref(body);
  return text;
}
