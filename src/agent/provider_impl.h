/* Inside provider.h's stream decoders: the shared object and the two decoders
 * behind it (provider_common.c dispatches; provider_anthropic.c and
 * provider_openai.c decode). Not for the shell. */
#ifndef TURND_AGENT_PROVIDER_IMPL_H
#define TURND_AGENT_PROVIDER_IMPL_H

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

/* Each decoder: state for one answer (NULL when out of memory), one SSE event,
 * the answer's end, and freeing (accepts NULL). */
void *anthropic_stream_new(void);
void anthropic_stream_event(struct provider_stream *s, const char *event,
                            const char *data, size_t len);
void anthropic_stream_finish(struct provider_stream *s);
void anthropic_stream_free(void *impl);

void *openai_stream_new(void);
void openai_stream_event(struct provider_stream *s, const char *event, const char *data,
                         size_t len);
void openai_stream_finish(struct provider_stream *s);
void openai_stream_free(void *impl);

#endif
