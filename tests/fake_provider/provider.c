/* Helpers both fake endpoints use: ids shaped like the providers', JSON answers
 * and small JSON lookups. */
#include "provider.h"

#include <event2/buffer.h>
#include <event2/keyvalq_struct.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *provider_key(void) {
  const char *key = getenv("FAKE_PROVIDER_KEY");
  return key != NULL && key[0] != '\0' ? key : FAKE_API_KEY;
}

char *provider_key_echo(const char *key, bool wrapped) {
  if (key == NULL) key = "(none)";
  size_t len = strlen(key);
  int at = wrapped && len > KEY_WRAP_AT ? KEY_WRAP_AT : (int)len;
  const char *cut = at < (int)len ? "\r\n" : "";
  static const char fmt[] =
      "Incorrect API key provided: %.*s%s%s. The key %.*s%s%s is not valid.";
  size_t cap = sizeof fmt + 2 * (len + 2);
  char *text = malloc(cap);
  if (text != NULL)
    snprintf(text, cap, fmt, at, key, cut, key + at, at, key, cut, key + at);
  return text;
}

int verdict_set(struct verdict *v, enum refusal r, const char *fmt, ...) {
  v->refusal = r;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v->why, sizeof v->why, fmt, ap);
  va_end(ap);
  return -1;
}

/* splitmix64: a counter in, well-mixed bits out. */
static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15u;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

void provider_id(char *out, size_t cap, const char *prefix, size_t n, uint64_t *ids) {
  static const char alphabet[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  size_t len = strlen(prefix);
  if (cap == 0) return;
  if (len + n + 1 > cap) n = len + 1 < cap ? cap - len - 1 : 0;
  if (len >= cap) len = cap - 1;
  memcpy(out, prefix, len);
  /* The pid keeps two runs' ids apart; the counter, one run's. */
  uint64_t x = mix(++*ids ^ ((uint64_t)getpid() << 40));
  for (size_t i = 0; i < n; i++) {
    if (i % 10 == 9) x = mix(x); /* 10 letters of 62 per 64 bits */
    out[len + i] = alphabet[x % 62];
    x /= 62;
  }
  out[len + n] = '\0';
}

static const char *reason(int status) {
  switch (status) {
  case 400:
    return "Bad Request";
  case 401:
    return "Unauthorized";
  case 404:
    return "Not Found";
  case 405:
    return "Method Not Allowed";
  case 429:
    return "Too Many Requests";
  case 500:
    return "Internal Server Error";
  case 503:
    return "Service Unavailable";
  case 529:
    return "Overloaded";
  default:
    return "Error";
  }
}

int provider_send_json(struct evhttp_request *req, int status, json_t *body) {
  char *text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
  json_decref(body);
  struct evbuffer *buf = evbuffer_new();
  if (text == NULL || buf == NULL || evbuffer_add(buf, text, strlen(text)) != 0) {
    free(text);
    if (buf != NULL) evbuffer_free(buf);
    evhttp_send_error(req, 500, NULL);
    return 500;
  }
  free(text);
  evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                    "application/json");
  evhttp_send_reply(req, status, reason(status), buf);
  evbuffer_free(buf);
  return status;
}

const char *provider_string(const json_t *obj, const char *key) {
  return json_string_value(json_object_get(obj, key));
}

bool provider_is_type(const json_t *obj, const char *type) {
  const char *t = provider_string(obj, "type");
  return t != NULL && strcmp(t, type) == 0;
}
