/* The dispatcher: the stream object of provider.h routes SSE events to its
 * kind's decoder (provider_anthropic.c, provider_openai.c), and promises a last
 * event (STOP or ERROR) whatever the decoder made of the answer. Only this file
 * knows both decoders; they know only provider_shared.h, so the dependency
 * points one way. */
#include "provider_anthropic.h"
#include "provider_openai.h"
#include "provider_shared.h"

#include <stdlib.h>

struct provider_stream *provider_stream_new(enum provider_kind kind, model_event_cb *cb,
                                            void *ctx) {
  void *impl;
  switch (kind) {
  case PROVIDER_ANTHROPIC:
    impl = anthropic_stream_new();
    break;
  case PROVIDER_OPENAI:
    impl = openai_stream_new();
    break;
  default:
    return NULL;
  }
  if (impl == NULL) return NULL;
  struct provider_stream *s = malloc(sizeof *s);
  if (s == NULL) {
    if (kind == PROVIDER_ANTHROPIC)
      anthropic_stream_free(impl);
    else
      openai_stream_free(impl);
    return NULL;
  }
  *s = (struct provider_stream){kind, cb, ctx, false, impl};
  return s;
}

void provider_stream_free(struct provider_stream *s) {
  if (s == NULL) return;
  if (s->kind == PROVIDER_ANTHROPIC)
    anthropic_stream_free(s->impl);
  else
    openai_stream_free(s->impl);
  free(s);
}

void provider_stream_event(struct provider_stream *s, const char *event, const char *data,
                           size_t len) {
  if (s->done) return; /* the decoders need not check what comes after the end */
  if (s->kind == PROVIDER_ANTHROPIC)
    anthropic_stream_event(s, event, data, len);
  else
    openai_stream_event(s, event, data, len);
}

void provider_stream_finish(struct provider_stream *s) {
  if (s->done) return;
  if (s->kind == PROVIDER_ANTHROPIC)
    anthropic_stream_finish(s);
  else
    openai_stream_finish(s);
  /* Whatever the decoder made of the end, the caller is promised a last event. */
  if (!s->done) provider_fail(s, "the stream ended early");
}

bool provider_stream_done(const struct provider_stream *s) {
  return s->done;
}
