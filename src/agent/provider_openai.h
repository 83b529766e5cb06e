/* The Chat Completions API's stream decoder (provider_openai.c), which the
 * dispatcher (provider_stream.c) routes a stream of its kind to. Not for the
 * shell: it uses provider.h's provider_stream_* calls. */
#ifndef TURND_AGENT_PROVIDER_OPENAI_H
#define TURND_AGENT_PROVIDER_OPENAI_H

#include "provider_shared.h"

/* State for one answer (NULL when out of memory), one SSE event, the answer's
 * end, and freeing (accepts NULL). */
void *openai_stream_new(void);
void openai_stream_event(struct provider_stream *s, const char *event, const char *data,
                         size_t len);
void openai_stream_finish(struct provider_stream *s);
void openai_stream_free(void *impl);

#endif
