/* What one model call streams back, whoever the model is: the script model and
 * every provider's stream decoder (provider.h) speak this, and the agent core
 * turns it into protocol events. No I/O. */
#ifndef TURND_AGENT_MODEL_H
#define TURND_AGENT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum model_event_kind {
  MODEL_EV_TEXT,       /* text[0..len): a piece of the reply's text */
  MODEL_EV_REASONING,  /* text[0..len): a piece of its reasoning (thinking) */
  MODEL_EV_SIGNATURE,  /* text[0..len): the reasoning block's signature, which a
                          provider wants back with the block in the next call */
  MODEL_EV_TOOL_START, /* call `index` begins: id (the provider's, "" when it gave
                          none) and name */
  MODEL_EV_TOOL_DELTA, /* text[0..len): a piece of call `index`'s input JSON */
  MODEL_EV_TOOL_END,   /* call `index`'s input is complete: text[0..len) is all
                          of it as received ("" when the model sent none) */
  MODEL_EV_USAGE,      /* input_tokens, output_tokens: this call's totals so far */
  MODEL_EV_STOP,       /* the reply is complete: stop says why. The last event. */
  MODEL_EV_ERROR       /* the call failed: text[0..len) says why, without keys or
                          request bytes. throttled: the provider asks to retry
                          (after retry_after_s when >= 0). The last event. */
};

enum model_stop {
  MODEL_STOP_END_TURN,   /* the model is done */
  MODEL_STOP_TOOL_USE,   /* it waits for its tool calls' results */
  MODEL_STOP_MAX_TOKENS, /* cut at the provider's output limit (or its context's) */
  MODEL_STOP_REFUSED,    /* stopped by the provider's content policy: Anthropic's
                            refusal, OpenAI's content_filter */
  MODEL_STOP_OTHER       /* any other reason (a stop sequence, a pause, ...) */
};

/* Strings are borrowed: valid during the callback that hands the event over. */
struct model_event {
  enum model_event_kind kind;
  size_t index;           /* TOOL_*: the call's position in the reply, from 0 */
  const char *id, *name;  /* TOOL_START (NUL-terminated) */
  const char *text;       /* TEXT, REASONING, SIGNATURE, TOOL_DELTA, TOOL_END, ERROR */
  size_t len;             /* bytes of text */
  uint64_t input_tokens;  /* USAGE */
  uint64_t output_tokens; /* USAGE */
  enum model_stop stop;   /* STOP */
  bool throttled;         /* ERROR */
  double retry_after_s;   /* ERROR with throttled: seconds, or -1 when not said */
};

typedef void model_event_cb(void *ctx, const struct model_event *ev);

#endif
