/* See provider_shared.h: handing out a stream's events, which guarantees that
 * STOP or ERROR is the last thing a caller gets, and the schema a model is
 * shown. */
#include "provider_shared.h"

#include <string.h>

void provider_emit(struct provider_stream *s, const struct model_event *ev) {
  if (s->done) return;
  /* Set before the callback, so an event emitted from inside it is dropped too. */
  if (ev->kind == MODEL_EV_STOP || ev->kind == MODEL_EV_ERROR) s->done = true;
  s->cb(s->ctx, ev);
}

void provider_fail(struct provider_stream *s, const char *message) {
  struct model_event ev = {.kind = MODEL_EV_ERROR,
                           .text = message,
                           .len = strlen(message),
                           .throttled = false,
                           .retry_after_s = -1};
  provider_emit(s, &ev);
}

/* The APIs refuse a whole request over a tool schema they do not take at its
 * top level: Anthropic's over anyOf, oneOf or allOf ("does not support oneOf,
 * allOf, or anyOf at the top level"), OpenAI's over those, enum and not, and
 * over an object without properties ("object schema missing properties"). The
 * model is shown the schema without them; turnd still checks every input
 * against the whole schema before the tool runs, and tells the model what
 * failed. */
json_t *provider_schema_shown(const char *input_schema) {
  json_t *schema = input_schema != NULL ? json_loads(input_schema, 0, NULL)
                                        : json_pack("{s:s}", "type", "object");
  if (!json_is_object(schema)) {
    json_decref(schema);
    return NULL;
  }
  static const char *const refused_at_top[] = {"anyOf", "oneOf", "allOf", "enum", "not"};
  for (size_t i = 0; i < sizeof refused_at_top / sizeof refused_at_top[0]; i++)
    json_object_del(schema, refused_at_top[i]);
  if (json_object_get(schema, "properties") == NULL &&
      json_object_set_new(schema, "properties", json_object()) != 0) {
    json_decref(schema);
    return NULL;
  }
  return schema;
}
