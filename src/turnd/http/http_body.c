/* JSON request bodies: size first, then jansson. libevent refuses a body over the
 * limit while reading it (server.c); the size check stays so that this function
 * holds on its own. Nothing of a refused body is logged or echoed. */
#include "http_body.h"

#include "http_error.h"

#include <event2/buffer.h>
#include <event2/http.h>

json_t *http_body_json(struct evhttp_request *req) {
  struct evbuffer *in = evhttp_request_get_input_buffer(req);
  size_t len = evbuffer_get_length(in);
  if (len > HTTP_BODY_MAX) {
    http_error_send(req, HTTP_E_TOO_LARGE);
    return NULL;
  }
  const char *data = (const char *)evbuffer_pullup(in, -1);
  json_error_t e;
  json_t *j = data != NULL ? json_loadb(data, len, JSON_REJECT_DUPLICATES, &e) : NULL;
  if (!json_is_object(j)) {
    json_decref(j);
    http_error_send(req, HTTP_E_BAD_JSON);
    return NULL;
  }
  return j;
}
