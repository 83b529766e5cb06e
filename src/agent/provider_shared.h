/* What the two providers' decoders and request bodies share
 * (provider_shared.c): the stream object a decoder hands its events out
 * through, and a tool's schema as a model is shown it. It knows neither
 * provider, so both include it and neither includes the dispatcher
 * (provider_stream.c). Not for the shell. */
#ifndef TURND_AGENT_PROVIDER_SHARED_H
#define TURND_AGENT_PROVIDER_SHARED_H

#include "provider.h"

#include <jansson.h>

struct provider_stream {
  enum provider_kind kind;
  model_event_cb *cb;
  void *ctx;
  bool done;  /* STOP or ERROR was handed out: nothing more is */
  void *impl; /* the decoder's own state */
};

/* Hands ev to the callback unless the stream is done; STOP and ERROR make it
 * done. Decoders hand out every event through here. */
void provider_emit(struct provider_stream *s, const struct model_event *ev);
/* Hands out MODEL_EV_ERROR with message (not throttled). */
void provider_fail(struct provider_stream *s, const char *message);

/* A tool's input_schema as a model is shown it (NULL: one that takes no input),
 * parsed; NULL when it is not a JSON object or memory ran out. */
json_t *provider_schema_shown(const char *input_schema);

#endif
