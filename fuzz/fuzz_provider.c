/* Fuzz target: a provider's stream decoder behind the SSE parser
 * (src/agent/provider_*.c). The stream is decoded once fed whole and once in
 * slices; both must hand out the same model events, and each must keep the
 * promises of model.h and provider.h: nothing after STOP or ERROR, exactly one of
 * them once the stream is finished, tool calls started before their input and
 * not touched after their end. Freeing releases everything (ASan's leak check).
 *
 * Input: byte 0  bit 0: the kind (0 Anthropic, 1 OpenAI-compatible);
 *                bits 1-7: slice size - 1 (1-128) for the sliced run
 *        rest    the answer's bytes, a text/event-stream */
#include "fuzz_support.h"
#include "agent/provider.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Calls whose lifecycle is tracked; a higher index is only checked for order. */
#define TRACKED 256

static void log_u64(struct fuzz_log *l, uint64_t v) {
  fuzz_log_put(l, &v, sizeof v);
}

struct run {
  enum provider_kind kind;
  struct provider_stream *s;
  bool ended;                   /* STOP or ERROR came */
  size_t n_started;             /* TOOL_STARTs */
  size_t next_index;            /* a TOOL_START's index is at least this */
  unsigned char calls[TRACKED]; /* 0 not started, 1 started, 2 ended */
  struct fuzz_log log;
};

static void check_tool(struct run *run, const struct model_event *ev) {
  switch (ev->kind) {
  case MODEL_EV_TOOL_START:
    CHECK(ev->id != NULL && ev->name != NULL);
    CHECK(ev->index >= run->next_index); /* in index order, each once */
    run->next_index = ev->index + 1;
    /* Anthropic numbers calls by their place among the reply's tool_use blocks. */
    if (run->kind == PROVIDER_ANTHROPIC) CHECK(ev->index == run->n_started);
    run->n_started++;
    if (ev->index < TRACKED) run->calls[ev->index] = 1;
    break;
  case MODEL_EV_TOOL_DELTA:
  case MODEL_EV_TOOL_END:
    CHECK(ev->index < run->next_index);
    if (ev->index < TRACKED) {
      CHECK(run->calls[ev->index] == 1); /* started and not yet ended */
      if (ev->kind == MODEL_EV_TOOL_END) run->calls[ev->index] = 2;
    }
    break;
  default:
    break;
  }
}

static void on_model(void *ctx, const struct model_event *ev) {
  struct run *run = ctx;
  CHECK(!run->ended); /* STOP and ERROR are the last event */
  CHECK(!provider_stream_done(run->s) || ev->kind == MODEL_EV_STOP ||
        ev->kind == MODEL_EV_ERROR);
  CHECK(ev->len == 0 || ev->text != NULL);
  check_tool(run, ev);
  if (ev->kind == MODEL_EV_ERROR) CHECK(ev->len > 0); /* it says why */
  if (ev->kind == MODEL_EV_STOP || ev->kind == MODEL_EV_ERROR) run->ended = true;

  log_u64(&run->log, (uint64_t)ev->kind);
  log_u64(&run->log, ev->index);
  log_u64(&run->log, ev->len);
  if (ev->len > 0) fuzz_log_put(&run->log, ev->text, ev->len);
  if (ev->kind == MODEL_EV_TOOL_START) {
    fuzz_log_put(&run->log, ev->id, strlen(ev->id) + 1);
    fuzz_log_put(&run->log, ev->name, strlen(ev->name) + 1);
  }
  log_u64(&run->log, ev->input_tokens);
  log_u64(&run->log, ev->output_tokens);
  log_u64(&run->log, (uint64_t)ev->stop);
  log_u64(&run->log, ev->throttled);
}

static void on_sse(void *ctx, const char *event, const char *data, size_t len) {
  struct run *run = ctx;
  bool was_done = provider_stream_done(run->s);
  provider_stream_event(run->s, event, data, len);
  CHECK(!was_done || provider_stream_done(run->s)); /* done stays done */
}

/* Decodes stream[0..len) fed in slices of `slice` bytes, then ends it. */
static void decode(struct run *run, enum provider_kind kind, const char *stream,
                   size_t len, size_t slice) {
  memset(run, 0, sizeof *run);
  run->kind = kind;
  run->s = provider_stream_new(kind, on_model, run);
  CHECK(run->s != NULL);
  CHECK(!provider_stream_done(run->s));
  struct sse *p = sse_new(1u << 20, on_sse, run);
  CHECK(p != NULL);
  for (size_t off = 0; off < len;) {
    size_t n = slice < len - off ? slice : len - off;
    if (sse_feed(p, stream + off, n) < 0) break;
    off += n;
  }
  sse_finish(p);
  sse_free(p);
  provider_stream_finish(run->s);
  CHECK(provider_stream_done(run->s));
  CHECK(run->ended);              /* finishing always hands out the last event */
  provider_stream_finish(run->s); /* a second end adds nothing */
  provider_stream_free(run->s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  enum provider_kind kind = (data[0] & 1) ? PROVIDER_OPENAI : PROVIDER_ANTHROPIC;
  size_t slice = (size_t)(data[0] >> 1) + 1;
  const char *stream = (const char *)data + 1;
  size_t len = size - 1;

  struct run whole, sliced;
  decode(&whole, kind, stream, len, len > 0 ? len : 1);
  decode(&sliced, kind, stream, len, slice);
  CHECK(whole.log.len == sliced.log.len);
  CHECK(whole.log.len == 0 || memcmp(whole.log.p, sliced.log.p, whole.log.len) == 0);
  free(whole.log.p);
  free(sliced.log.p);
  return 0;
}
