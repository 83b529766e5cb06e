/* The Anthropic Messages decoder and request body (src/agent/provider_anthropic.c)
 * and the shared stream object and error messages (provider_stream.c,
 * provider_shared.c, provider_error.c). Streams
 * are written as the API documents them and go through the SSE parser, fed whole,
 * a byte at a time and split at every offset: the model events must be the same
 * each way, exactly as listed, and nothing may follow a STOP or an ERROR. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/provider.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------- recording */

/* What one run handed out, one line per model event. */
struct rec {
  char *p;
  size_t len, cap;
  bool ended;         /* a STOP or ERROR came */
  size_t n_tool_text; /* bytes of TOOL_DELTA text, for the large-input test */
  bool quiet_tools;   /* log TOOL_DELTA as a count only */
};

static void rec_put(struct rec *r, const char *data, size_t len) {
  if (len > r->cap - r->len) {
    size_t cap = r->cap < 256 ? 256 : r->cap;
    while (len > cap - r->len)
      cap *= 2;
    char *p = realloc(r->p, cap);
    assert_non_null(p);
    r->p = p;
    r->cap = cap;
  }
  if (len > 0) memcpy(r->p + r->len, data, len);
  r->len += len;
}

static void rec_printf(struct rec *r, const char *fmt, ...) {
  char line[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  assert_true(n >= 0 && (size_t)n < sizeof line);
  rec_put(r, line, (size_t)n);
}

static void rec_text(struct rec *r, const char *what, const struct model_event *ev) {
  assert_true(ev->len == 0 || ev->text != NULL);
  rec_printf(r, "%s:", what);
  rec_put(r, ev->text, ev->len);
  rec_put(r, "\n", 1);
}

static const char *stop_name(enum model_stop stop) {
  switch (stop) {
  case MODEL_STOP_END_TURN:
    return "end_turn";
  case MODEL_STOP_TOOL_USE:
    return "tool_use";
  case MODEL_STOP_MAX_TOKENS:
    return "max_tokens";
  case MODEL_STOP_REFUSED:
    return "refused";
  case MODEL_STOP_OTHER:
    return "other";
  }
  return "?";
}

static void on_model(void *ctx, const struct model_event *ev) {
  struct rec *r = ctx;
  assert_false(r->ended); /* STOP and ERROR are the last event */
  switch (ev->kind) {
  case MODEL_EV_TEXT:
    rec_text(r, "text", ev);
    break;
  case MODEL_EV_REASONING:
    rec_text(r, "reasoning", ev);
    break;
  case MODEL_EV_SIGNATURE:
    rec_text(r, "signature", ev);
    break;
  case MODEL_EV_TOOL_START:
    assert_non_null(ev->id);
    assert_non_null(ev->name);
    rec_printf(r, "tool_start %zu %s %s\n", ev->index, ev->id, ev->name);
    break;
  case MODEL_EV_TOOL_DELTA:
    r->n_tool_text += ev->len;
    if (r->quiet_tools) break;
    rec_printf(r, "tool_delta %zu", ev->index);
    rec_text(r, "", ev);
    break;
  case MODEL_EV_TOOL_END:
    rec_printf(r, "tool_end %zu", ev->index);
    if (r->quiet_tools)
      rec_printf(r, ":%zu bytes\n", ev->len);
    else
      rec_text(r, "", ev);
    break;
  case MODEL_EV_USAGE:
    rec_printf(r, "usage %llu %llu\n", (unsigned long long)ev->input_tokens,
               (unsigned long long)ev->output_tokens);
    break;
  case MODEL_EV_STOP:
    rec_printf(r, "stop %s\n", stop_name(ev->stop));
    r->ended = true;
    break;
  case MODEL_EV_ERROR:
    rec_printf(r, "error%s retry=%g", ev->throttled ? " throttled" : "",
               ev->retry_after_s);
    rec_text(r, "", ev);
    r->ended = true;
    break;
  }
}

static void on_sse(void *ctx, const char *event, const char *data, size_t len) {
  provider_stream_event(ctx, event, data, len);
}

/* A stream written as its SSE events, NULL-terminated. */
#define STREAM(...) ((const char *const[]){__VA_ARGS__, NULL})

/* The events joined into one buffer (owned: free()), as the wire has them. */
static char *join(const char *const *events, size_t *len) {
  size_t n = 0;
  for (size_t i = 0; events[i] != NULL; i++)
    n += strlen(events[i]);
  char *stream = malloc(n + 1);
  assert_non_null(stream);
  n = 0;
  for (size_t i = 0; events[i] != NULL; i++) {
    size_t k = strlen(events[i]);
    memcpy(stream + n, events[i], k);
    n += k;
  }
  stream[n] = '\0';
  *len = n;
  return stream;
}

/* Decodes stream cut at cuts[0..n_cuts), then ends it. */
static void decode(const char *stream, size_t len, const size_t *cuts, size_t n_cuts,
                   struct rec *r) {
  memset(r, 0, sizeof *r);
  struct provider_stream *s = provider_stream_new(PROVIDER_ANTHROPIC, on_model, r);
  assert_non_null(s);
  struct sse *p = sse_new(1u << 20, on_sse, s);
  assert_non_null(p);
  size_t off = 0;
  for (size_t k = 0; k <= n_cuts; k++) {
    size_t end = k < n_cuts ? cuts[k] : len;
    assert_int_equal(sse_feed(p, stream + off, end - off), 0);
    off = end;
  }
  sse_finish(p);
  provider_stream_finish(s);
  assert_true(provider_stream_done(s)); /* finish always ends it */
  assert_true(r->ended);
  sse_free(p);
  provider_stream_free(s);
}

static void expect_rec(const struct rec *r, const char *want, const char *how,
                       size_t at) {
  if (r->len != strlen(want) || (r->len > 0 && memcmp(r->p, want, r->len) != 0)) {
    print_error("%s (at %zu) gave:\n%.*s\nwant:\n%s\n", how, at, (int)r->len, r->p, want);
    fail();
  }
}

/* Checks that the stream decodes to want (the recorded lines) however it is fed:
 * whole, a byte at a time, and split in two at every offset. */
static void expect_decoded(const char *const *events, const char *want) {
  size_t len;
  char *stream = join(events, &len);
  struct rec r;
  decode(stream, len, NULL, 0, &r);
  expect_rec(&r, want, "whole", 0);
  free(r.p);

  size_t *cuts = malloc(len * sizeof *cuts + 1);
  assert_non_null(cuts);
  for (size_t i = 0; i < len; i++)
    cuts[i] = i + 1;
  decode(stream, len, cuts, len, &r);
  expect_rec(&r, want, "one byte at a time", 0);
  free(r.p);
  free(cuts);

  for (size_t at = 0; at <= len; at++) {
    decode(stream, len, &at, 1, &r);
    expect_rec(&r, want, "split", at);
    free(r.p);
  }
  free(stream);
}

/* The same fed whole only, for the tests about one way a stream ends. */
static void expect_decoded_whole(const char *const *events, const char *want) {
  size_t len;
  char *stream = join(events, &len);
  struct rec r;
  decode(stream, len, NULL, 0, &r);
  expect_rec(&r, want, "whole", 0);
  free(r.p);
  free(stream);
}

/* ------------------------------------------------------------- streams */

#define EV(name, data) "event: " name "\ndata: " data "\n\n"

#define MESSAGE_START                                                                    \
  EV("message_start",                                                                    \
     "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_01XFDUDYJgAACzvnptvVoYEL\"," \
     "\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":"             \
     "\"claude-sonnet-4-5\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":"      \
     "{\"input_tokens\":472,\"cache_creation_input_tokens\":0,"                          \
     "\"cache_read_input_tokens\":0,\"output_tokens\":2}}}")
#define PING EV("ping", "{\"type\": \"ping\"}")
#define BLOCK_START(i, block) \
  EV("content_block_start",   \
     "{\"type\":\"content_block_start\",\"index\":" #i ",\"content_block\":" block "}")
#define DELTA(i, delta)     \
  EV("content_block_delta", \
     "{\"type\":\"content_block_delta\",\"index\":" #i ",\"delta\":" delta "}")
#define BLOCK_STOP(i) \
  EV("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":" #i "}")
#define MESSAGE_DELTA(reason, out)                                      \
  EV("message_delta",                                                   \
     "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"" reason \
     "\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":" #out "}}")
#define MESSAGE_STOP EV("message_stop", "{\"type\":\"message_stop\"}")

#define TEXT_START(i)    BLOCK_START(i, "{\"type\":\"text\",\"text\":\"\"}")
#define TEXT_DELTA(i, t) DELTA(i, "{\"type\":\"text_delta\",\"text\":\"" t "\"}")
#define TOOL_START(i, id, name)                                              \
  BLOCK_START(i, "{\"type\":\"tool_use\",\"id\":\"" id "\",\"name\":\"" name \
                 "\",\"input\":{}}")
#define TOOL_DELTA(i, json) \
  DELTA(i, "{\"type\":\"input_json_delta\",\"partial_json\":\"" json "\"}")

/* A reply with extended thinking that calls a tool, as the streaming docs show it:
 * a thinking block (thinking, then its signature), a text block, a tool_use block
 * whose input comes in pieces (the first one empty), then the stop. */
static const char *const full_stream[] = {
    MESSAGE_START,
    PING,
    BLOCK_START(0, "{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}"),
    DELTA(0, "{\"type\":\"thinking_delta\",\"thinking\":\"The user wants the weather\"}"),
    DELTA(0, "{\"type\":\"thinking_delta\",\"thinking\":\" in Paris, so I call the "
             "tool.\"}"),
    DELTA(0, "{\"type\":\"signature_delta\",\"signature\":"
             "\"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds\"}"),
    BLOCK_STOP(0),
    TEXT_START(1),
    TEXT_DELTA(1, "Let me check "),
    TEXT_DELTA(1, "the weather in Paris. \\u00e9\\n"),
    BLOCK_STOP(1),
    TOOL_START(2, "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather"),
    TOOL_DELTA(2, ""),
    TOOL_DELTA(2, "{\\\"location\\\": \\\"Par"),
    TOOL_DELTA(2, "is, France\\\", \\\"unit\\\": \\\"cel"),
    TOOL_DELTA(2, "sius\\\"}"),
    BLOCK_STOP(2),
    MESSAGE_DELTA("tool_use", 89),
    MESSAGE_STOP,
    NULL};

static const char full_events[] =
    "reasoning:The user wants the weather\n"
    "reasoning: in Paris, so I call the tool.\n"
    "signature:EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds\n"
    "text:Let me check \n"
    "text:the weather in Paris. \xc3\xa9\n\n"
    "tool_start 0 toolu_01T1x1fJ34qAmk2tNTrN7Up6 get_weather\n"
    "tool_delta 0:{\"location\": \"Par\n"
    "tool_delta 0:is, France\", \"unit\": \"cel\n"
    "tool_delta 0:sius\"}\n"
    "tool_end 0:{\"location\": \"Paris, France\", \"unit\": \"celsius\"}\n"
    "usage 472 89\n"
    "stop tool_use\n";

static void test_provider_anthropic_full_stream_every_split(void **state) {
  (void)state;
  expect_decoded(full_stream, full_events);
}

/* The same stream in CRLF line ends, as some proxies send it. */
static void test_provider_anthropic_full_stream_with_crlf(void **state) {
  (void)state;
  size_t len;
  char *lf = join(full_stream, &len);
  char *crlf = malloc(2 * len + 1);
  assert_non_null(crlf);
  size_t n = 0;
  for (size_t i = 0; i < len; i++) {
    if (lf[i] == '\n') crlf[n++] = '\r';
    crlf[n++] = lf[i];
  }
  crlf[n] = '\0';
  expect_decoded(STREAM(crlf), full_events);
  free(crlf);
  free(lf);
}

/* Calls are numbered among the reply's tool_use blocks, not by block index; a call
 * whose input never came ends with "". */
static void test_provider_anthropic_tool_index_counts_tool_blocks_only(void **state) {
  (void)state;
  expect_decoded(STREAM(MESSAGE_START, TEXT_START(0), TEXT_DELTA(0, "Two calls."),
                        BLOCK_STOP(0), TOOL_START(1, "toolu_a", "clock"), BLOCK_STOP(1),
                        TOOL_START(2, "toolu_b", "lamp_set"),
                        TOOL_DELTA(2, "{\\\"on\\\": true}"), BLOCK_STOP(2),
                        MESSAGE_DELTA("tool_use", 40), MESSAGE_STOP),
                 "text:Two calls.\n"
                 "tool_start 0 toolu_a clock\n"
                 "tool_end 0:\n"
                 "tool_start 1 toolu_b lamp_set\n"
                 "tool_delta 1:{\"on\": true}\n"
                 "tool_end 1:{\"on\": true}\n"
                 "usage 472 40\n"
                 "stop tool_use\n");
}

/* Blocks we cannot hand on are skipped with their deltas, and do not count as
 * calls; ping and event types we do not know are ignored, with JSON data or not
 * (a proxy's keep-alive is an unnamed event). */
static void test_provider_anthropic_other_blocks_and_events_are_skipped(void **state) {
  (void)state;
  expect_decoded_whole(
      STREAM(
          MESSAGE_START, PING,
          BLOCK_START(0, "{\"type\":\"redacted_thinking\",\"data\":\"EmwKAhgBEgy3va\"}"),
          BLOCK_STOP(0),
          BLOCK_START(1, "{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\","
                         "\"name\":\"web_search\",\"input\":{}}"),
          TOOL_DELTA(1, "{\\\"query\\\": 1}"), BLOCK_STOP(1),
          EV("some_future_event", "{\"type\":\"some_future_event\",\"x\":1}"),
          TEXT_START(2),
          DELTA(2, "{\"type\":\"citations_delta\",\"citation\":{\"type\":\"x\"}}"),
          TEXT_DELTA(2, "ok"), BLOCK_STOP(2), TOOL_START(3, "toolu_c", "clock"),
          BLOCK_STOP(3), PING, "data: keep-alive\n\n", EV("some_other_event", "[1"),
          MESSAGE_DELTA("tool_use", 12), PING, MESSAGE_STOP),
      "text:ok\n"
      "tool_start 0 toolu_c clock\n"
      "tool_end 0:\n"
      "usage 472 12\n"
      "stop tool_use\n");
}

static void expect_stop(const char *reason, const char *want_stop) {
  char delta[256], want[256];
  int n = snprintf(delta, sizeof delta,
                   "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":"
                   "{\"stop_reason\":\"%s\"},\"usage\":{\"output_tokens\":7}}\n\n",
                   reason);
  assert_true(n > 0 && (size_t)n < sizeof delta);
  n = snprintf(want, sizeof want, "text:Hi\nusage 472 7\nstop %s\n", want_stop);
  assert_true(n > 0 && (size_t)n < sizeof want);
  expect_decoded_whole(STREAM(MESSAGE_START, TEXT_START(0), TEXT_DELTA(0, "Hi"),
                              BLOCK_STOP(0), delta, MESSAGE_STOP),
                       want);
}

static void test_provider_anthropic_each_stop_reason(void **state) {
  (void)state;
  expect_stop("end_turn", "end_turn");
  expect_stop("tool_use", "tool_use");
  expect_stop("max_tokens", "max_tokens");
  expect_stop("stop_sequence", "other");
  expect_stop("refusal", "refused");
  expect_stop("pause_turn", "other");
  expect_stop("model_context_window_exceeded", "max_tokens");
}

/* input_tokens in message_delta's usage (newer API versions send it) is the
 * cumulative count and replaces message_start's. */
static void test_provider_anthropic_usage_from_message_delta(void **state) {
  (void)state;
  expect_decoded_whole(
      STREAM(MESSAGE_START,
             EV("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
                                 "\"end_turn\"},\"usage\":{\"input_tokens\":500,"
                                 "\"output_tokens\":3}}"),
             MESSAGE_STOP),
      "usage 500 3\nstop end_turn\n");
}

#define ERROR_EV(type, message)                                 \
  EV("error", "{\"type\":\"error\",\"error\":{\"type\":\"" type \
              "\",\"message\":\"" message "\"}}")

/* An error event mid-stream ends it: overloaded and rate limits are throttled
 * (the caller may retry), others are not, and nothing follows. */
static void test_provider_anthropic_error_event(void **state) {
  (void)state;
  expect_decoded(STREAM(MESSAGE_START, TEXT_START(0), TEXT_DELTA(0, "Hel"),
                        ERROR_EV("overloaded_error", "Overloaded"), TEXT_DELTA(0, "lo"),
                        BLOCK_STOP(0), MESSAGE_DELTA("end_turn", 3), MESSAGE_STOP),
                 "text:Hel\n"
                 "error throttled retry=-1:Overloaded\n");
  expect_decoded_whole(STREAM(MESSAGE_START, ERROR_EV("rate_limit_error", "Slow down")),
                       "error throttled retry=-1:Slow down\n");
  expect_decoded_whole(STREAM(ERROR_EV("api_error", "Internal server error")),
                       "error retry=-1:Internal server error\n");
  /* Without a message it still says something, and only what we wrote. */
  expect_decoded_whole(
      STREAM(
          EV("error", "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}")),
      "error throttled retry=-1:the provider reported an error\n");
  expect_decoded_whole(STREAM(ERROR_EV("api_error", " \\n\\u0085\\u0000")),
                       "error retry=-1:the provider reported an error\n");
  /* The provider's message is made safe like any error body's. */
  expect_decoded_whole(STREAM(ERROR_EV("api_error", "bad\\nline\\u001b[0m")),
                       "error retry=-1:bad line [0m\n");
}

/* ------------------------------------------------------ broken streams */

static void test_provider_anthropic_bad_json_fails(void **state) {
  (void)state;
  expect_decoded_whole(
      STREAM(MESSAGE_START, EV("content_block_start", "{\"type\":\"content_")),
      "error retry=-1:an event's data is not a JSON object\n");
  expect_decoded_whole(STREAM(MESSAGE_START, EV("ping", "[1,2]")),
                       "error retry=-1:an event's data is not a JSON object\n");
}

static void test_provider_anthropic_delta_before_its_block_fails(void **state) {
  (void)state;
  expect_decoded_whole(STREAM(MESSAGE_START, TEXT_DELTA(0, "x")),
                       "error retry=-1:a content block delta came outside its block\n");
  /* After its block stopped, too. */
  expect_decoded_whole(
      STREAM(MESSAGE_START, TEXT_START(0), BLOCK_STOP(0), TEXT_DELTA(0, "x")),
      "error retry=-1:a content block delta came outside its block\n");
  /* A delta naming another block than the open one. */
  expect_decoded_whole(
      STREAM(MESSAGE_START, TEXT_START(0), TEXT_DELTA(1, "x")),
      "error retry=-1:a content block event for a block that is not open\n");
  /* A delta of the wrong kind for its block. */
  expect_decoded_whole(STREAM(MESSAGE_START, TOOL_START(0, "t", "n"), TEXT_DELTA(0, "x")),
                       "tool_start 0 t n\n"
                       "error retry=-1:a content block got a delta of another kind\n");
  /* A delta without its text. */
  expect_decoded_whole(
      STREAM(MESSAGE_START, TEXT_START(0), DELTA(0, "{\"type\":\"text_delta\"}")),
      "error retry=-1:a content block delta without its text\n");
}

static void test_provider_anthropic_blocks_out_of_order_fail(void **state) {
  (void)state;
  expect_decoded_whole(STREAM(MESSAGE_START, TEXT_START(1)),
                       "error retry=-1:a content block started out of order\n");
  /* A block starting while another is open. */
  expect_decoded_whole(STREAM(MESSAGE_START, TEXT_START(0), TEXT_START(1)),
                       "error retry=-1:a content block started out of order\n");
  /* The same index twice. */
  expect_decoded_whole(STREAM(MESSAGE_START, TEXT_START(0), BLOCK_STOP(0), TEXT_START(0)),
                       "error retry=-1:a content block started out of order\n");
  /* Before message_start. */
  expect_decoded_whole(STREAM(TEXT_START(0)),
                       "error retry=-1:a content block started out of order\n");
  /* A tool_use block without its id. */
  expect_decoded_whole(
      STREAM(MESSAGE_START,
             BLOCK_START(0, "{\"type\":\"tool_use\",\"name\":\"n\",\"input\":{}}")),
      "error retry=-1:a tool_use block without a usable id and name\n");
}

static void test_provider_anthropic_stop_without_message_delta_fails(void **state) {
  (void)state;
  expect_decoded_whole(
      STREAM(MESSAGE_START, TEXT_START(0), TEXT_DELTA(0, "Hi"), BLOCK_STOP(0),
             MESSAGE_STOP),
      "text:Hi\nerror retry=-1:message_stop came before message_delta\n");
  /* A message_delta that never gave a stop reason. */
  expect_decoded_whole(
      STREAM(
          MESSAGE_START,
          EV("message_delta",
             "{\"type\":\"message_delta\",\"delta\":{},\"usage\":{\"output_tokens\":1}}"),
          MESSAGE_STOP),
      "usage 472 1\nerror retry=-1:message_stop came without a stop reason\n");
}

static void test_provider_anthropic_stream_ending_early_fails(void **state) {
  (void)state;
  expect_decoded_whole(STREAM(""), "error retry=-1:the stream ended early\n");
  expect_decoded_whole(STREAM(MESSAGE_START, TEXT_START(0), TEXT_DELTA(0, "Hi")),
                       "text:Hi\nerror retry=-1:the stream ended early\n");
  expect_decoded_whole(STREAM(MESSAGE_START, MESSAGE_DELTA("end_turn", 1)),
                       "usage 472 1\nerror retry=-1:the stream ended early\n");
  /* message_stop without its blank line is never dispatched. */
  expect_decoded_whole(STREAM(MESSAGE_START, MESSAGE_DELTA("end_turn", 1),
                              "event: message_stop\ndata: {\"type\":\"message_stop\"}\n"),
                       "usage 472 1\nerror retry=-1:the stream ended early\n");
}

/* Nothing is handed out after STOP, and finishing a finished stream adds nothing. */
static void test_provider_anthropic_nothing_after_stop(void **state) {
  (void)state;
  expect_decoded_whole(STREAM(MESSAGE_START, MESSAGE_DELTA("end_turn", 1), MESSAGE_STOP,
                              MESSAGE_START, TEXT_START(0), TEXT_DELTA(0, "more"),
                              ERROR_EV("api_error", "late"), "data: garbage\n\n"),
                       "usage 472 1\nstop end_turn\n");
}

/* The data's type decides; a stream whose SSE lines carry no event name (some
 * proxies drop them) decodes the same. */
static void test_provider_anthropic_type_from_data_without_event_names(void **state) {
  (void)state;
  expect_decoded_whole(STREAM("data: {\"type\":\"message_start\",\"message\":{\"usage\":{"
                              "\"input_tokens\":3,\"output_tokens\":1}}}\n\n",
                              "data: {\"type\":\"message_delta\",\"delta\":{"
                              "\"stop_reason\":\"end_turn\"},\"usage\":{"
                              "\"output_tokens\":2}}\n\n",
                              "data: {\"type\":\"message_stop\"}\n\n"),
                       "usage 3 2\nstop end_turn\n");
}

/* A tool input past 1 MiB ends the stream instead of growing without bound. */
static void test_provider_anthropic_tool_input_limit(void **state) {
  (void)state;
  struct rec r;
  memset(&r, 0, sizeof r);
  r.quiet_tools = true;
  struct provider_stream *s = provider_stream_new(PROVIDER_ANTHROPIC, on_model, &r);
  assert_non_null(s);
  const char *start = "{\"type\":\"message_start\",\"message\":{}}";
  provider_stream_event(s, "message_start", start, strlen(start));
  const char *block = "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
                      "{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\",\"input\":{}}}";
  provider_stream_event(s, "content_block_start", block, strlen(block));

  /* 16 pieces of 64 KiB fill the limit exactly; one byte more passes it. */
  const char *head = "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
                     "{\"type\":\"input_json_delta\",\"partial_json\":\"";
  size_t piece = 64u << 10, head_len = strlen(head);
  char *data = malloc(head_len + piece + 4);
  assert_non_null(data);
  memcpy(data, head, head_len);
  memset(data + head_len, 'a', piece);
  memcpy(data + head_len + piece, "\"}}", 4);
  for (int i = 0; i < 16; i++)
    provider_stream_event(s, "content_block_delta", data, strlen(data));
  assert_false(provider_stream_done(s));
  assert_int_equal(r.n_tool_text, 16 * piece);
  const char *one = "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
                    "{\"type\":\"input_json_delta\",\"partial_json\":\"a\"}}";
  provider_stream_event(s, "content_block_delta", one, strlen(one));
  assert_true(provider_stream_done(s));
  assert_int_equal(r.n_tool_text, 16 * piece);
  expect_rec(&r,
             "tool_start 0 t n\n"
             "error retry=-1:a tool call's input is larger than 1 MiB\n",
             "limit", 0);
  provider_stream_free(s);
  free(data);
  free(r.p);
}

/* Freed mid-call, with a tool input held: ASan checks nothing leaks. */
static void test_provider_anthropic_free_mid_stream(void **state) {
  (void)state;
  struct rec r;
  memset(&r, 0, sizeof r);
  struct provider_stream *s = provider_stream_new(PROVIDER_ANTHROPIC, on_model, &r);
  assert_non_null(s);
  struct sse *p = sse_new(1u << 20, on_sse, s);
  assert_non_null(p);
  size_t len;
  char *stream = join(
      STREAM(MESSAGE_START, TOOL_START(0, "t", "n"), TOOL_DELTA(0, "{\\\"a\\\"")), &len);
  assert_int_equal(sse_feed(p, stream, len), 0);
  assert_false(provider_stream_done(s));
  sse_free(p);
  provider_stream_free(s);
  provider_stream_free(NULL);
  expect_rec(&r, "tool_start 0 t n\ntool_delta 0:{\"a\"\n", "free", 0);
  free(r.p);
  free(stream);
}

/* ------------------------------------------------------------ the body */

static void expect_json(const char *got, const char *want) {
  assert_non_null(got);
  json_error_t jerr;
  json_t *g = json_loads(got, 0, &jerr);
  json_t *w = json_loads(want, 0, &jerr);
  assert_non_null(w);
  if (g == NULL || !json_equal(g, w)) {
    print_error("got:  %s\nwant: %s\n", got, want);
    json_decref(g);
    json_decref(w);
    fail();
  }
  json_decref(g);
  json_decref(w);
  /* Compact: no whitespace between tokens (none of these strings holds any). */
  assert_null(strchr(got, '\n'));
  assert_null(strstr(got, "\": "));
  assert_null(strstr(got, ", "));
}

static void test_provider_anthropic_body_full_request(void **state) {
  (void)state;
  const char *messages[] = {
      "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"What time is "
      "it?\"}]}",
      "{\"role\":\"assistant\",\"content\":["
      "{\"type\":\"thinking\",\"thinking\":\"Use the clock.\",\"signature\":\"EqQB\"},"
      "{\"type\":\"text\",\"text\":\"Checking.\"},"
      "{\"type\":\"tool_use\",\"id\":\"toolu_a\",\"name\":\"clock\",\"input\":{}}]}",
      "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":"
      "\"toolu_a\",\"content\":\"08:00\",\"is_error\":false}]}",
  };
  const struct provider_tool tools[] = {
      {"clock", "Tells the time.", "{\"type\":\"object\",\"properties\":{}}"},
      {"lamp_set", NULL,
       "{\"type\":\"object\",\"properties\":{\"on\":{\"type\":\"boolean\"}},"
       "\"required\":[\"on\"]}"},
  };
  struct provider_request req = {
      "claude-sonnet-4-5", "You are terse.", messages, 3, tools, 2, 1024, false};
  char *body = provider_anthropic_body(&req);
  expect_json(
      body,
      "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":1024,\"stream\":true,"
      "\"system\":\"You are terse.\",\"messages\":["
      "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":"
      "\"What time is it?\"}]},"
      "{\"role\":\"assistant\",\"content\":["
      "{\"type\":\"thinking\",\"thinking\":\"Use the clock.\",\"signature\":"
      "\"EqQB\"},"
      "{\"type\":\"text\",\"text\":\"Checking.\"},"
      "{\"type\":\"tool_use\",\"id\":\"toolu_a\",\"name\":\"clock\",\"input\":{}}]},"
      "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":"
      "\"toolu_a\",\"content\":\"08:00\",\"is_error\":false}]}],"
      "\"tools\":[{\"name\":\"clock\",\"description\":\"Tells the time.\","
      "\"input_schema\":{\"type\":\"object\",\"properties\":{}}},"
      "{\"name\":\"lamp_set\",\"input_schema\":{\"type\":\"object\","
      "\"properties\":{\"on\":{\"type\":\"boolean\"}},\"required\":[\"on\"]}}]}");
  free(body);
}

/* The API refuses a tool whose input_schema has anyOf, oneOf or allOf at its
 * top level, and with it the whole request: the tool is offered without them
 * (turnd checks inputs against the whole schema). Deeper down they stay. */
static void test_provider_anthropic_body_drops_top_level_combinators(void **state) {
  (void)state;
  const char *messages[] = {
      "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}"};
  const struct provider_tool tools[] = {
      {"move", NULL,
       "{\"type\":\"object\",\"properties\":{\"to\":{\"anyOf\":[{\"type\":\"string\"},"
       "{\"type\":\"integer\"}]}},\"anyOf\":[{\"required\":[\"to\"]}],"
       "\"oneOf\":[{\"required\":[\"to\"]}],\"allOf\":[{\"required\":[\"to\"]}]}"},
  };
  struct provider_request req = {"m", NULL, messages, 1, tools, 1, 64, false};
  char *body = provider_anthropic_body(&req);
  expect_json(body,
              "{\"model\":\"m\",\"max_tokens\":64,\"stream\":true,\"messages\":["
              "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}],"
              "\"tools\":[{\"name\":\"move\",\"input_schema\":{\"type\":\"object\","
              "\"properties\":{\"to\":{\"anyOf\":[{\"type\":\"string\"},"
              "{\"type\":\"integer\"}]}}}}]}");
  free(body);
}

/* The body's numbers are as the model wrote them: 21.1, not the 17 digits of
 * its nearest double (compared as text: parsed, both are the same value). */
static void test_provider_anthropic_body_numbers_are_shortest(void **state) {
  (void)state;
  const char *messages[] = {
      "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}",
      "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"u1\","
      "\"name\":\"thermostat\",\"input\":{\"t\":21.1}}]}",
      "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":"
      "\"u1\",\"content\":\"set\",\"is_error\":false}]}"};
  struct provider_request req = {"m", NULL, messages, 3, NULL, 0, 64, false};
  char *body = provider_anthropic_body(&req);
  assert_non_null(body);
  bool shortest = strstr(body, "\"input\":{\"t\":21.1}") != NULL;
  if (!shortest) print_error("body: %s\n", body);
  free(body);
  assert_true(shortest);
}

static void test_provider_anthropic_body_without_system_or_tools(void **state) {
  (void)state;
  const char *messages[] = {
      "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}"};
  struct provider_request req = {"m", NULL, messages, 1, NULL, 0, 64, false};
  char *body = provider_anthropic_body(&req);
  const char *want =
      "{\"model\":\"m\",\"max_tokens\":64,\"stream\":true,\"messages\":["
      "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}]}";
  expect_json(body, want);
  free(body);
  /* An empty system prompt is no prompt: the API would refuse it. */
  req.system = "";
  body = provider_anthropic_body(&req);
  expect_json(body, want);
  free(body);
}

/* Call ids the API refuses (another provider's, with '.' and ':') or that
 * repeat (numbered per reply, as Kimi's are) are sent as made-up ones, each
 * result with its call's; ids the API takes, seen once, stay as they are. A
 * result for no call goes, and a call left without one (two calls of one id
 * given one result) gets one. */
static void test_provider_anthropic_body_mends_call_ids(void **state) {
  (void)state;
  const char *messages[] = {
      "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"time?\"}]}",
      "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"functions."
      "clock:0\",\"name\":\"clock\",\"input\":{}},{\"type\":\"tool_use\",\"id\":\"toolu_"
      "turnd_1\",\"name\":\"clock\",\"input\":{}}]}",
      "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_"
      "turnd_1\",\"content\":\"08:00\",\"is_error\":false},{\"type\":\"tool_result\","
      "\"tool_use_id\":\"functions.clock:0\",\"content\":\"08:00\",\"is_error\":false}]}",
      "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"functions."
      "clock:0\",\"name\":\"clock\",\"input\":{}},{\"type\":\"tool_use\",\"id\":\"toolu_"
      "b\",\"name\":\"clock\",\"input\":{}}]}",
      "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":"
      "\"functions.clock:0\",\"content\":\"08:00\",\"is_error\":false},{\"type\":\"tool_"
      "result\",\"tool_use_id\":\"toolu_b\",\"content\":\"08:00\",\"is_error\":false}]}",
      "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_b\","
      "\"name\":\"clock\",\"input\":{}}]}",
      "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_"
      "b\",\"content\":\"08:00\",\"is_error\":false}]}",
      "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"dup\","
      "\"name\":\"clock\",\"input\":{}},{\"type\":\"tool_use\",\"id\":\"dup\",\"name\":"
      "\"clock\",\"input\":{}}]}",
      "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"dup\","
      "\"content\":\"08:00\",\"is_error\":false},{\"type\":\"tool_result\",\"tool_use_"
      "id\":\"ghost\",\"content\":\"08:00\",\"is_error\":false}]}",
  };
  struct provider_request req = {"m", NULL, messages, 9, NULL, 0, 64, false};
  char *body = provider_anthropic_body(&req);
  expect_json(
      body,
      "{\"model\":\"m\",\"max_tokens\":64,\"stream\":true,\"messages\":["
      "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"time?\"}]},"
      "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_turnd_"
      "2\",\"name\":\"clock\",\"input\":{}},{\"type\":\"tool_use\",\"id\":\"toolu_turnd_"
      "1\",\"name\":\"clock\",\"input\":{}}]},"
      "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_"
      "turnd_1\",\"content\":\"08:00\",\"is_error\":false},{\"type\":\"tool_result\","
      "\"tool_use_id\":\"toolu_turnd_2\",\"content\":\"08:00\",\"is_error\":false}]},"
      "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_turnd_"
      "3\",\"name\":\"clock\",\"input\":{}},{\"type\":\"tool_use\",\"id\":\"toolu_b\","
      "\"name\":\"clock\",\"input\":{}}]},"
      "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_"
      "turnd_3\",\"content\":\"08:00\",\"is_error\":false},{\"type\":\"tool_result\","
      "\"tool_use_id\":\"toolu_b\",\"content\":\"08:00\",\"is_error\":false}]},"
      "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_turnd_"
      "4\",\"name\":\"clock\",\"input\":{}}]},"
      "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_"
      "turnd_4\",\"content\":\"08:00\",\"is_error\":false}]},"
      "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"dup\","
      "\"name\":\"clock\",\"input\":{}},{\"type\":\"tool_use\",\"id\":\"toolu_turnd_5\","
      "\"name\":\"clock\",\"input\":{}}]},"
      "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"dup\","
      "\"content\":\"08:00\",\"is_error\":false},{\"type\":\"tool_result\",\"tool_use_"
      "id\":\"toolu_turnd_5\",\"content\":\"no result was kept for this "
      "call\",\"is_error\":true}]}"
      "]}");
  free(body);
}

static void test_provider_anthropic_body_refuses_bad_json(void **state) {
  (void)state;
  const char *bad[] = {"{\"role\":\"user\",", "[]", "\"text\"", ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const char *messages[] = {
        "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}", bad[i]};
    struct provider_request req = {"m", NULL, messages, 2, NULL, 0, 64, false};
    assert_null(provider_anthropic_body(&req));
  }
  const char *messages[] = {
      "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}"};
  const char *schemas[] = {"{\"type\":", "[]", "null"};
  for (size_t i = 0; i < sizeof schemas / sizeof schemas[0]; i++) {
    const struct provider_tool tools[] = {{"ok", "fine", "{}"}, {"t", "d", schemas[i]}};
    struct provider_request req = {"m", NULL, messages, 1, tools, 2, 64, false};
    assert_null(provider_anthropic_body(&req));
  }
}

/* ------------------------------------------------------ error messages */

static void expect_message(long status, const char *body, size_t len, const char *want) {
  char *got = provider_error_message(status, body, len);
  assert_non_null(got);
  if (strcmp(got, want) != 0) {
    print_error("got:  %s\nwant: %s\n", got, want);
    free(got);
    fail();
  }
  free(got);
}

static void expect_message_s(long status, const char *body, const char *want) {
  expect_message(status, body, strlen(body), want);
}

static void test_provider_error_message_shapes(void **state) {
  (void)state;
  expect_message_s(529,
                   "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
                   "\"message\":\"Overloaded\"}}",
                   "Overloaded");
  expect_message_s(429,
                   "{\"error\":{\"message\":\"Rate limit reached for gpt-4o.\",\"type\":"
                   "\"requests\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}",
                   "Rate limit reached for gpt-4o.");
  expect_message_s(404, "{\"error\":\"model 'llama3' not found\"}",
                   "model 'llama3' not found");
  expect_message_s(400, "{\"message\":\"bad request\",\"secret\":\"sk-123\"}",
                   "bad request");
}

static void test_provider_error_message_without_one_names_the_status(void **state) {
  (void)state;
  expect_message_s(502, "<html><body>Bad Gateway</body></html>",
                   "the provider answered with status 502");
  expect_message_s(503, "", "the provider answered with status 503");
  expect_message(503, NULL, 0, "the provider answered with status 503");
  expect_message_s(500, "{\"error\":{\"type\":\"api_error\",\"code\":500}}",
                   "the provider answered with status 500");
  expect_message_s(500, "{\"error\":{\"message\":42}}",
                   "the provider answered with status 500");
  expect_message_s(500, "{\"error\":{\"message\":\" \\n\\t \"}}",
                   "the provider answered with status 500");
  expect_message_s(500, "[{\"error\":\"x\"}]", "the provider answered with status 500");
  /* Only the body's first len bytes count. */
  expect_message(400, "{\"error\":\"cut\"}trailing", 15, "cut");
  expect_message(400, "{\"error\":\"cut\"}", 10, "the provider answered with status 400");
}

static void test_provider_error_message_is_cut_on_a_character(void **state) {
  (void)state;
  /* "a" and 200 two-byte characters: 300 bytes end inside the 150th, so it goes. */
  char body[1024], want[512];
  size_t n = 0, w = 0;
  n += (size_t)snprintf(body, sizeof body, "{\"error\":{\"message\":\"a");
  want[w++] = 'a';
  for (int i = 0; i < 200; i++) {
    memcpy(body + n, "\xc3\xa9", 2);
    n += 2;
    if (w + 2 <= 300) {
      memcpy(want + w, "\xc3\xa9", 2);
      w += 2;
    }
  }
  memcpy(body + n, "\"}}", 4);
  want[w] = '\0';
  assert_int_equal(w, 299);
  expect_message(400, body, strlen(body), want);

  /* ASCII is cut at exactly 300. */
  n = (size_t)snprintf(body, sizeof body, "{\"error\":\"");
  memset(body + n, 'x', 400);
  memcpy(body + n + 400, "\"}", 3);
  memset(want, 'x', 300);
  want[300] = '\0';
  expect_message(400, body, strlen(body), want);
}

static void test_provider_error_message_replaces_control_characters(void **state) {
  (void)state;
  /* A newline could forge a log line and an escape drive a terminal; NUL, DEL and
   * C1 controls (U+0085) go too. Ends are trimmed. */
  expect_message_s(400,
                   "{\"error\":{\"message\":\"\\nline 1\\r\\nline 2\\u001b[31m\\u0000x"
                   "\\u007fy\\u0085z caf\\u00e9\\t\"}}",
                   "line 1  line 2 [31m x y z caf\xc3\xa9");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_provider_anthropic_full_stream_every_split),
      cmocka_unit_test(test_provider_anthropic_full_stream_with_crlf),
      cmocka_unit_test(test_provider_anthropic_tool_index_counts_tool_blocks_only),
      cmocka_unit_test(test_provider_anthropic_other_blocks_and_events_are_skipped),
      cmocka_unit_test(test_provider_anthropic_each_stop_reason),
      cmocka_unit_test(test_provider_anthropic_usage_from_message_delta),
      cmocka_unit_test(test_provider_anthropic_error_event),
      cmocka_unit_test(test_provider_anthropic_bad_json_fails),
      cmocka_unit_test(test_provider_anthropic_delta_before_its_block_fails),
      cmocka_unit_test(test_provider_anthropic_blocks_out_of_order_fail),
      cmocka_unit_test(test_provider_anthropic_stop_without_message_delta_fails),
      cmocka_unit_test(test_provider_anthropic_stream_ending_early_fails),
      cmocka_unit_test(test_provider_anthropic_nothing_after_stop),
      cmocka_unit_test(test_provider_anthropic_type_from_data_without_event_names),
      cmocka_unit_test(test_provider_anthropic_tool_input_limit),
      cmocka_unit_test(test_provider_anthropic_free_mid_stream),
      cmocka_unit_test(test_provider_anthropic_body_full_request),
      cmocka_unit_test(test_provider_anthropic_body_numbers_are_shortest),
      cmocka_unit_test(test_provider_anthropic_body_drops_top_level_combinators),
      cmocka_unit_test(test_provider_anthropic_body_without_system_or_tools),
      cmocka_unit_test(test_provider_anthropic_body_mends_call_ids),
      cmocka_unit_test(test_provider_anthropic_body_refuses_bad_json),
      cmocka_unit_test(test_provider_error_message_shapes),
      cmocka_unit_test(test_provider_error_message_without_one_names_the_status),
      cmocka_unit_test(test_provider_error_message_is_cut_on_a_character),
      cmocka_unit_test(test_provider_error_message_replaces_control_characters),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
