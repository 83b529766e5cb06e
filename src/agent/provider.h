/* Model providers without I/O: the request body a call sends, and the decoder of
 * the server-sent-event stream it gets back, for the Anthropic Messages API and
 * for OpenAI-compatible Chat Completions (OpenAI, llama.cpp's server, Ollama,
 * vLLM). The shell (turnd's curl transport) moves the bytes; everything about
 * the formats is here, so it is tested without a network.
 *
 * The conversation handed in is convo.h's: Anthropic-shaped messages, one
 * compact JSON object each, as convo_repair leaves them (roles alternating,
 * every call answered, no block a provider refuses). */
#ifndef TURND_AGENT_PROVIDER_H
#define TURND_AGENT_PROVIDER_H

#include "model.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ SSE */

/* An incremental text/event-stream parser (the WHATWG rules): bytes go in in
 * any slices, each dispatched event comes out whole. Lines end in LF, CRLF or
 * CR; "data:" lines of one event are joined with "\n"; a comment (":...") or an
 * unknown field is ignored; "event:" names the event (empty: "message"); a
 * blank line dispatches an event that has data. A BOM at the very start is
 * skipped. An event larger than max_event_bytes is an error (sticky). */
struct sse;
typedef void sse_event_cb(void *ctx, const char *event, const char *data, size_t len);

/* Returns NULL when out of memory. */
struct sse *sse_new(size_t max_event_bytes, sse_event_cb *cb, void *ctx);
void sse_free(struct sse *p); /* accepts NULL */
/* Feeds bytes; calls cb for each event they complete. Returns 0, or -1 once the
 * stream broke the limit (then nothing more is dispatched). */
int sse_feed(struct sse *p, const char *bytes, size_t len);
/* The stream ended: an event without its blank line is dropped, as the rules
 * say. */
void sse_finish(struct sse *p);

/* ---------------------------------------------------------- the request */

struct provider_tool {
  const char *name, *description;
  const char *input_schema; /* a JSON object as text */
};

struct provider_request {
  const char *model;           /* the provider's model id */
  const char *system;          /* system prompt, or NULL */
  const char *const *messages; /* convo.h messages, oldest first */
  size_t n_messages;
  const struct provider_tool *tools;
  size_t n_tools;
  uint32_t max_tokens; /* output limit per call */
  /* Chat Completions: the limit goes as max_completion_tokens, which OpenAI's
   * own API wants (its reasoning models refuse max_tokens), instead of
   * max_tokens, which the local servers read. */
  bool max_completion_tokens;
};

/* The request body as compact JSON (owned: free()), or NULL when a message is
 * not valid JSON or memory ran out. Both ask for a stream. */
char *provider_anthropic_body(const struct provider_request *req);
/* Chat Completions: messages become its form (assistant tool_calls, "tool"
 * messages for results; reasoning blocks are not sent back); stream_options asks
 * for usage in the last chunk. */
char *provider_openai_body(const struct provider_request *req);
/* Whether a Chat Completions base URL ("https://api.openai.com/v1") is OpenAI's
 * own API, which wants max_completion_tokens: its host is api.openai.com. */
bool provider_openai_is_own_api(const char *base_url);

/* A safe message from an error answer's body (a non-2xx status): the provider's
 * own "message" when the body has one, cut at 300 bytes, else a short text
 * naming the status. Owned: free(); NULL when out of memory. */
char *provider_error_message(long status, const char *body, size_t len);

/* Whether an error answer's body says that no wait will help: OpenAI answers
 * 429 both for a rate limit and for a quota used up ("insufficient_quota" as
 * the error's type or code), which only the owner's billing can change. */
bool provider_error_is_lasting(const char *body, size_t len);

/* ---------------------------------------------------------- the stream */

/* A decoder takes the SSE events of one call's 2xx answer and hands out model
 * events (model.h). It checks what it is sent: a stream that breaks the format
 * (bad JSON, a delta for a block never started, an end without a stop) ends in
 * MODEL_EV_ERROR. After the last event (STOP or ERROR) it hands out nothing. */
struct provider_stream;

enum provider_kind { PROVIDER_ANTHROPIC, PROVIDER_OPENAI };

/* Returns NULL when out of memory. */
struct provider_stream *provider_stream_new(enum provider_kind kind, model_event_cb *cb,
                                            void *ctx);
void provider_stream_free(struct provider_stream *s); /* accepts NULL */
/* One SSE event (sse_event_cb's arguments). */
void provider_stream_event(struct provider_stream *s, const char *event, const char *data,
                           size_t len);
/* The answer ended. Without a STOP or ERROR so far, this is an ERROR ("the
 * stream ended early"). */
void provider_stream_finish(struct provider_stream *s);
/* Whether the last event was handed out. */
bool provider_stream_done(const struct provider_stream *s);

#endif
