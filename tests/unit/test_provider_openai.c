/* The OpenAI-compatible provider (src/agent/provider_openai.c): recorded-shape
 * streams from OpenAI, llama.cpp's server, Ollama and vLLM go through the SSE
 * parser into the decoder, fed whole, one byte at a time and split at every
 * offset, and must give exactly the model events written down here; the request
 * body is compared as parsed JSON (json_equal), never as bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/provider.h"
#include "turn/turn.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the harness */

/* Each event becomes one line of text, so a whole stream's events compare as
 * one string and a mismatch prints both in full. */
struct events {
  turn_buf log;
  bool after_last; /* something came after STOP or ERROR */
  bool ended;
};

static void log_text(struct events *e, const char *text, size_t len) {
  for (size_t i = 0; i < len; i++) {
    if (text[i] == '\n')
      turn_buf_append(&e->log, "\\n", 2);
    else
      turn_buf_append(&e->log, &text[i], 1);
  }
}

static void log_line(struct events *e, const char *head, const char *text, size_t len) {
  turn_buf_append(&e->log, head, strlen(head));
  log_text(e, text, len);
  turn_buf_append(&e->log, "\n", 1);
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

static void on_model_event(void *ctx, const struct model_event *ev) {
  struct events *e = ctx;
  char head[512];
  if (e->ended) e->after_last = true;
  switch (ev->kind) {
  case MODEL_EV_TEXT:
    log_line(e, "text ", ev->text, ev->len);
    break;
  case MODEL_EV_REASONING:
    log_line(e, "reasoning ", ev->text, ev->len);
    break;
  case MODEL_EV_SIGNATURE:
    log_line(e, "signature ", ev->text, ev->len);
    break;
  case MODEL_EV_TOOL_START:
    snprintf(head, sizeof head, "start %zu %s %s", ev->index, ev->id, ev->name);
    log_line(e, head, "", 0);
    break;
  case MODEL_EV_TOOL_DELTA:
    snprintf(head, sizeof head, "delta %zu ", ev->index);
    log_line(e, head, ev->text, ev->len);
    break;
  case MODEL_EV_TOOL_END:
    snprintf(head, sizeof head, "end %zu ", ev->index);
    log_line(e, head, ev->text, ev->len);
    break;
  case MODEL_EV_USAGE:
    snprintf(head, sizeof head, "usage %llu %llu", (unsigned long long)ev->input_tokens,
             (unsigned long long)ev->output_tokens);
    log_line(e, head, "", 0);
    break;
  case MODEL_EV_STOP:
    snprintf(head, sizeof head, "stop %s", stop_name(ev->stop));
    log_line(e, head, "", 0);
    e->ended = true;
    break;
  case MODEL_EV_ERROR:
    /* retry_after_s is never said inside a stream. */
    assert_true(ev->retry_after_s == -1);
    log_line(e, ev->throttled ? "error throttled " : "error ", ev->text, ev->len);
    e->ended = true;
    break;
  }
}

static void on_sse_event(void *ctx, const char *event, const char *data, size_t len) {
  provider_stream_event(ctx, event, data, len);
}

/* Decodes bytes fed as [0, cut) and [cut, len), or one byte at a time when
 * bytewise, then ends the answer. Returns the events' log (owned). */
static char *decode(const char *bytes, size_t len, size_t cut, bool bytewise) {
  struct events e = {.after_last = false, .ended = false};
  turn_buf_init(&e.log, 1u << 20, NULL);
  struct provider_stream *s = provider_stream_new(PROVIDER_OPENAI, on_model_event, &e);
  assert_non_null(s);
  struct sse *p = sse_new(1u << 20, on_sse_event, s);
  assert_non_null(p);
  if (bytewise) {
    for (size_t i = 0; i < len; i++)
      assert_int_equal(sse_feed(p, bytes + i, 1), 0);
  } else {
    assert_int_equal(sse_feed(p, bytes, cut), 0);
    assert_int_equal(sse_feed(p, bytes + cut, len - cut), 0);
  }
  sse_finish(p);
  provider_stream_finish(s);
  assert_true(provider_stream_done(s));
  assert_false(e.after_last);
  sse_free(p);
  provider_stream_free(s);
  turn_buf_append(&e.log, "", 1);
  return e.log.data;
}

/* Takes got, and frees it before failing, so a mismatch is reported as itself
 * and not as a leak. */
static void expect_log(char *got, const char *want, const char *how) {
  bool same = strcmp(got, want) == 0;
  if (!same) print_error("fed %s\ngot:\n%swant:\n%s", how, got, want);
  free(got);
  if (!same) fail();
}

/* The stream must give want however its bytes are sliced. */
static void expect_events(const char *stream, const char *want) {
  size_t len = strlen(stream);
  char *got = decode(stream, len, len, false);
  expect_log(got, want, "whole");
  expect_log(decode(stream, len, 0, true), want, "one byte at a time");
  for (size_t cut = 1; cut < len; cut++) {
    char how[64];
    snprintf(how, sizeof how, "split at %zu", cut);
    expect_log(decode(stream, len, cut, false), want, how);
  }
}

/* Without the SSE parser: each data is one unnamed event, then the end. */
static void expect_direct(const char *const *datas, size_t n, const char *want) {
  struct events e = {.after_last = false, .ended = false};
  turn_buf_init(&e.log, 1u << 20, NULL);
  struct provider_stream *s = provider_stream_new(PROVIDER_OPENAI, on_model_event, &e);
  assert_non_null(s);
  for (size_t i = 0; i < n; i++)
    provider_stream_event(s, "message", datas[i], strlen(datas[i]));
  provider_stream_finish(s);
  assert_true(provider_stream_done(s));
  assert_false(e.after_last);
  provider_stream_free(s);
  turn_buf_append(&e.log, "", 1);
  expect_log(e.log.data, want, "directly"); /* takes the log's memory */
}

/* OpenAI's chunk envelope around a choice 0 with the given delta and finish. */
#define CHUNK(delta, finish)                                                          \
  "data: {\"id\":\"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT\",\"object\":"              \
  "\"chat.completion.chunk\",\"created\":1790841600,\"model\":\"gpt-4o-mini-2024-07-" \
  "18\",\"system_fingerprint\":\"fp_44709d6fcb\",\"choices\":[{\"index\":0,"          \
  "\"delta\":" delta ",\"logprobs\":null,\"finish_reason\":" finish                   \
  "}],\"usage\":null}\n\n"
#define TOOL(i, fn) "{\"tool_calls\":[{\"index\":" #i ",\"function\":" fn "}]}"

/* ----------------------------------------------------------------- streams */

/* Ollama's shape: no usage unless asked, CRLF line ends from some proxies. */
static void test_provider_openai_plain_text(void **state) {
  (void)state;
  expect_events(
      "data: {\"id\":\"chatcmpl-581\",\"object\":\"chat.completion.chunk\",\"created\":"
      "1790841600,\"model\":\"llama3.2\",\"system_fingerprint\":\"fp_ollama\","
      "\"choices\":"
      "[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hello\"},"
      "\"finish_reason\":null}]}\r\n\r\n"
      "data: {\"id\":\"chatcmpl-581\",\"object\":\"chat.completion.chunk\",\"created\":"
      "1790841600,\"model\":\"llama3.2\",\"system_fingerprint\":\"fp_ollama\","
      "\"choices\":"
      "[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\", caf\\u00e9!\"},"
      "\"finish_reason\":null}]}\r\n\r\n"
      "data: {\"id\":\"chatcmpl-581\",\"object\":\"chat.completion.chunk\",\"created\":"
      "1790841600,\"model\":\"llama3.2\",\"system_fingerprint\":\"fp_ollama\","
      "\"choices\":"
      "[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
      "\"finish_reason\":\"stop\"}]}\r\n\r\n"
      "data: [DONE]\r\n\r\n",
      "text Hello\n"
      "text , caf\xc3\xa9!\n"
      "stop end_turn\n");
}

/* llama.cpp's server: reasoning_content deltas, then content; usage and timings
 * ride on the finishing chunk. */
static void test_provider_openai_reasoning_content(void **state) {
  (void)state;
  expect_events(
      "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"role\":"
      "\"assistant\",\"content\":null}}],\"created\":1790841600,\"id\":\"chatcmpl-Xq\","
      "\"model\":\"qwen3-8b\",\"system_fingerprint\":\"b6100-a1b2c3\",\"object\":"
      "\"chat.completion.chunk\"}\n\n"
      "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":"
      "{\"reasoning_content\":\"The user \"}}],\"created\":1790841600,\"id\":"
      "\"chatcmpl-Xq\",\"model\":\"qwen3-8b\",\"object\":\"chat.completion.chunk\"}\n\n"
      "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":"
      "{\"reasoning_content\":\"greets me.\\n\"}}],\"created\":1790841600,\"id\":"
      "\"chatcmpl-Xq\",\"model\":\"qwen3-8b\",\"object\":\"chat.completion.chunk\"}\n\n"
      "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":"
      "{\"content\":\"Hi!\"}}],\"created\":1790841600,\"id\":\"chatcmpl-Xq\",\"model\":"
      "\"qwen3-8b\",\"object\":\"chat.completion.chunk\"}\n\n"
      "data: {\"choices\":[{\"finish_reason\":\"stop\",\"index\":0,\"delta\":{}}],"
      "\"created\":1790841600,\"id\":\"chatcmpl-Xq\",\"model\":\"qwen3-8b\",\"object\":"
      "\"chat.completion.chunk\",\"usage\":{\"completion_tokens\":9,\"prompt_tokens\":21,"
      "\"total_tokens\":30},\"timings\":{\"prompt_n\":21,\"predicted_n\":9}}\n\n"
      "data: [DONE]\n\n",
      "reasoning The user \n"
      "reasoning greets me.\\n\n"
      "text Hi!\n"
      "usage 21 9\n"
      "stop end_turn\n");
}

/* vLLM's newer "reasoning" key; a server sending both keys with the same text
 * must not double it. */
static void test_provider_openai_reasoning_key(void **state) {
  (void)state;
  expect_events(CHUNK("{\"role\":\"assistant\",\"content\":null,\"reasoning\":\"Hmm.\"}",
                      "null") //
                CHUNK("{\"reasoning_content\":\" Ok.\",\"reasoning\":\" Ok.\"}", "null")
                    CHUNK("{\"content\":\"Yes.\"}", "\"stop\"") "data: [DONE]\n\n",
                "reasoning Hmm.\n"
                "reasoning  Ok.\n"
                "text Yes.\n"
                "stop end_turn\n");
}

/* Two calls whose arguments arrive in many pieces, interleaved. Each START comes
 * before its first piece and in index order; the ENDs come at the finish with
 * the whole arguments; usage comes in the last chunk, with no choices. */
static void test_provider_openai_two_tool_calls_interleaved(void **state) {
  (void)state;
  expect_events(
      CHUNK("{\"role\":\"assistant\",\"content\":\"Checking.\",\"refusal\":null}",
            "null") //
      CHUNK("{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\","
            "\"function\":{\"name\":\"clock\",\"arguments\":\"\"}}]}",
            "null") //
      CHUNK("{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\",\"type\":\"function\","
            "\"function\":{\"name\":\"lamp_set\",\"arguments\":\"\"}}]}",
            "null")                                                         //
      CHUNK(TOOL(0, "{\"arguments\":\"{\\\"tz\\\"\"}"), "null")             //
      CHUNK(TOOL(1, "{\"arguments\":\"{\\\"name\\\":\"}"), "null")          //
      CHUNK(TOOL(0, "{\"arguments\":\":\\\"UTC\\\"}\"}"), "null")           //
      CHUNK("{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":"    //
            "\"\\\"desk\\\",\"}},{\"index\":1,\"function\":{\"arguments\":" //
            "\"\\\"on\\\":true}\"}}]}",
            "null")                 //
      CHUNK("{}", "\"tool_calls\"") //
      "data: {\"id\":\"chatcmpl-B9\",\"object\":\"chat.completion.chunk\",\"created\":"
      "1790841600,\"model\":\"gpt-4o-mini\",\"choices\":[],\"usage\":{\"prompt_tokens\":"
      "80,\"completion_tokens\":30,\"total_tokens\":110}}\n\n"
      "data: [DONE]\n\n",
      "text Checking.\n"
      "start 0 call_a clock\n"
      "delta 0 {\"tz\"\n"
      "start 1 call_b lamp_set\n"
      "delta 1 {\"name\":\n"
      "delta 0 :\"UTC\"}\n"
      "delta 1 \"desk\",\n"
      "delta 1 \"on\":true}\n"
      "end 0 {\"tz\":\"UTC\"}\n"
      "end 1 {\"name\":\"desk\",\"on\":true}\n"
      "usage 80 30\n"
      "stop tool_use\n");
}

/* What some servers do instead: no id (one is made from the index), a name in
 * pieces (Gemini's compatibility layer), the whole name repeated in every delta
 * (MiniMax on NIM), a call without arguments, and "stop" after tool calls
 * (gpt-4o under tool_choice "required"), which still means the calls wait. */
static void test_provider_openai_tool_call_variants(void **state) {
  (void)state;
  expect_events(CHUNK(TOOL(0, "{\"name\":\"lamp_\"}"), "null")             //
                CHUNK(TOOL(0, "{\"name\":\"set\"}"), "null")               //
                CHUNK(TOOL(0, "{\"arguments\":\"{\\\"on\\\":\"}"), "null") //
                CHUNK(TOOL(0, "{\"arguments\":\"true}\"}"), "null")        //
                CHUNK("{\"tool_calls\":[{\"index\":1,\"id\":\"c1\",\"function\":"
                      "{\"name\":\"clock\",\"arguments\":\"\"}}]}",
                      "null") //
                CHUNK("{\"tool_calls\":[{\"index\":1,\"id\":\"c1\",\"function\":"
                      "{\"name\":\"clock\",\"arguments\":\"{}\"}}]}",
                      "null")                                  //
                CHUNK(TOOL(1, "{\"name\":\"clock\"}"), "null") //
                CHUNK(TOOL(2, "{\"name\":\"ping\"}"), "null")  //
                CHUNK("{}", "\"stop\"") "data: [DONE]\n\n",
                "start 0  lamp_set\n"
                "delta 0 {\"on\":\n"
                "delta 0 true}\n"
                "start 1 c1 clock\n"
                "delta 1 {}\n"
                "start 2  ping\n"
                "end 0 {\"on\":true}\n"
                "end 1 {}\n"
                "end 2 \n"
                "stop tool_use\n");
}

/* Servers whose tool call indexes start at 1 or skip some (an AWS Bedrock
 * gateway, sglang): the calls' events are numbered 0, 1... as they start, which
 * is how the agent counts them, and an id made up follows that number. */
static void test_provider_openai_tool_call_index_gaps(void **state) {
  (void)state;
  expect_events(CHUNK(TOOL(1, "{\"name\":\"lamp\",\"arguments\":\"{}\"}"), "null") //
                CHUNK("{\"tool_calls\":[{\"index\":3,\"id\":\"c3\",\"function\":"
                      "{\"name\":\"clock\",\"arguments\":\"{\\\"tz\\\":\"}}]}",
                      "null")                                              //
                CHUNK(TOOL(3, "{\"arguments\":\"\\\"UTC\\\"}\"}"), "null") //
                CHUNK("{}", "\"tool_calls\"") "data: [DONE]\n\n",
                "start 0  lamp\n"
                "delta 0 {}\n"
                "start 1 c3 clock\n"
                "delta 1 {\"tz\":\n"
                "delta 1 \"UTC\"}\n"
                "end 0 {}\n"
                "end 1 {\"tz\":\"UTC\"}\n"
                "stop tool_use\n");
}

/* Ollama numbers every call of a reply 0 and sends each whole in one chunk:
 * a new id at an index taken by another id is a new call. Pieces without an id
 * go to the latest call of their index. */
static void test_provider_openai_tool_calls_sharing_index_0(void **state) {
  (void)state;
  expect_events(CHUNK("{\"tool_calls\":[{\"id\":\"call_a\",\"index\":0,\"type\":"
                      "\"function\",\"function\":{\"name\":\"lamp_set\",\"arguments\":"
                      "\"{\\\"on\\\":true}\"}}]}",
                      "null") //
                CHUNK("{\"tool_calls\":[{\"id\":\"call_b\",\"index\":0,\"type\":"
                      "\"function\",\"function\":{\"name\":\"clock\",\"arguments\":"
                      "\"{\\\"tz\\\":\"}}]}",
                      "null")                                              //
                CHUNK(TOOL(0, "{\"arguments\":\"\\\"UTC\\\"}\"}"), "null") //
                CHUNK("{}", "\"tool_calls\"") "data: [DONE]\n\n",
                "start 0 call_a lamp_set\n"
                "delta 0 {\"on\":true}\n"
                "start 1 call_b clock\n"
                "delta 1 {\"tz\":\n"
                "delta 1 \"UTC\"}\n"
                "end 0 {\"on\":true}\n"
                "end 1 {\"tz\":\"UTC\"}\n"
                "stop tool_use\n");
  /* Some servers change the id between one call's pieces: without a name, a
   * piece is more of the latest call of its index. */
  expect_events(
      CHUNK("{\"tool_calls\":[{\"index\":0,\"id\":\"call_A\",\"type\":"
            "\"function\",\"function\":{\"name\":\"clock\",\"arguments\":\"\"}}]}",
            "null") //
      CHUNK("{\"tool_calls\":[{\"index\":0,\"id\":\"call_B\",\"function\":"
            "{\"arguments\":\"{\\\"tz\\\":\"}}]}",
            "null") //
      CHUNK("{\"tool_calls\":[{\"index\":0,\"id\":\"call_B\",\"function\":"
            "{\"arguments\":\"\\\"UTC\\\"}\"}}]}",
            "null") //
      CHUNK("{}", "\"tool_calls\"") "data: [DONE]\n\n",
      "start 0 call_A clock\n"
      "delta 0 {\"tz\":\n"
      "delta 0 \"UTC\"}\n"
      "end 0 {\"tz\":\"UTC\"}\n"
      "stop tool_use\n");
}

/* A name that comes after the first arguments holds the call back, and every
 * call after it, until the name is there: STARTs stay in index order and each
 * comes before its arguments, which are handed out at once when it starts.
 * Servers that leave out "index" are read by id, and a piece without an id
 * belongs to the last call. */
static void test_provider_openai_tool_call_late_name_and_no_index(void **state) {
  (void)state;
  expect_events(CHUNK("{\"tool_calls\":[{\"index\":0,\"id\":\"c0\",\"function\":"
                      "{\"arguments\":\"{\\\"a\\\":\"}}]}",
                      "null") //
                CHUNK("{\"tool_calls\":[{\"index\":1,\"id\":\"c1\",\"function\":"
                      "{\"name\":\"ping\",\"arguments\":\"{}\"}}]}",
                      "null")                                    //
                CHUNK(TOOL(0, "{\"name\":\"clock\"}"), "null")   //
                CHUNK(TOOL(0, "{\"arguments\":\"1}\"}"), "null") //
                CHUNK("{}", "\"tool_calls\"") "data: [DONE]\n\n",
                "start 0 c0 clock\n"
                "delta 0 {\"a\":1}\n"
                "start 1 c1 ping\n"
                "delta 1 {}\n"
                "end 0 {\"a\":1}\n"
                "end 1 {}\n"
                "stop tool_use\n");
  expect_events(
      CHUNK("{\"tool_calls\":[{\"id\":\"g1\",\"function\":{\"name\":\"clock\","
            "\"arguments\":\"{}\"}}]}",
            "null") //
      CHUNK("{\"tool_calls\":[{\"id\":\"g2\",\"function\":{\"name\":\"ping\","
            "\"arguments\":\"{\\\"n\\\":\"}}]}",
            "null")                                                             //
      CHUNK("{\"tool_calls\":[{\"function\":{\"arguments\":\"1}\"}}]}", "null") //
      CHUNK("{}", "\"tool_calls\"") "data: [DONE]\n\n",
      "start 0 g1 clock\n"
      "delta 0 {}\n"
      "start 1 g2 ping\n"
      "delta 1 {\"n\":\n"
      "delta 1 1}\n"
      "end 0 {}\n"
      "end 1 {\"n\":1}\n"
      "stop tool_use\n");
}

/* A server that puts the last text and the finish_reason in one chunk (vLLM). */
static void test_provider_openai_finish_reason_length(void **state) {
  (void)state;
  expect_events(CHUNK("{\"role\":\"assistant\",\"content\":\"The list: one, \"}", "null")
                    CHUNK("{\"content\":\"two, thr\"}", "\"length\"") "data: [DONE]\n\n",
                "text The list: one, \n"
                "text two, thr\n"
                "stop max_tokens\n");
  expect_events(
      CHUNK("{\"content\":\"[filtered]\"}", "\"content_filter\"") "data: [DONE]\n\n",
      "text [filtered]\n"
      "stop refused\n");
}

/* stream_options.include_usage: OpenAI sends the totals in one more chunk after
 * the finish_reason, with empty choices, just before [DONE]. */
static void test_provider_openai_usage_in_final_chunk(void **state) {
  (void)state;
  expect_events(
      CHUNK("{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null}", "null")
          CHUNK("{\"content\":\"Eight.\"}", "null") CHUNK("{}", "\"stop\"") //
      "data: {\"id\":\"chatcmpl-B9\",\"object\":\"chat.completion.chunk\","
      "\"created\":1790841600,\"model\":\"gpt-4o-mini\",\"system_fingerprint\":"
      "\"fp_44709d6fcb\",\"choices\":[],\"usage\":{\"prompt_tokens\":1200,"
      "\"completion_tokens\":2,\"total_tokens\":1202,\"prompt_tokens_details\":"
      "{\"cached_tokens\":1024}}}\n\n"
      "data: [DONE]\n\n",
      "text Eight.\n"
      "usage 1200 2\n"
      "stop end_turn\n");
}

/* Some servers end the bytes after the finish_reason without [DONE]: that is a
 * whole reply, not a cut one. */
static void test_provider_openai_no_done_marker(void **state) {
  (void)state;
  expect_events(CHUNK("{\"role\":\"assistant\",\"content\":\"Done\"}", "null")
                    CHUNK("{}", "\"stop\""),
                "text Done\n"
                "stop end_turn\n");
}

/* Bytes that end before any finish_reason are a cut answer, even with its last
 * event complete, and so is [DONE] without a finish_reason. */
static void test_provider_openai_cut_before_finish(void **state) {
  (void)state;
  expect_events(CHUNK("{\"role\":\"assistant\",\"content\":\"Hel\"}", "null")
                    CHUNK(TOOL(0, "{\"name\":\"clock\",\"arguments\":\"{\"}"), "null"),
                "text Hel\n"
                "start 0  clock\n"
                "delta 0 {\n"
                "error the stream ended before a finish_reason\n");
  expect_events(CHUNK("{\"content\":\"Hel\"}", "null") "data: [DONE]\n\n",
                "text Hel\n"
                "error the stream sent [DONE] without a finish_reason\n");
}

/* An error inside a 200 stream: throttled only when it says rate limit. Nothing
 * comes after it, [DONE] included. */
static void test_provider_openai_error_chunk(void **state) {
  (void)state;
  expect_events(CHUNK("{\"content\":\"Hi\"}", "null") //
                "data: {\"error\":{\"message\":\"Rate limit reached for gpt-4o-mini on "
                "tokens per min (TPM).\",\"type\":\"tokens\",\"param\":null,\"code\":"
                "\"rate_limit_exceeded\"}}\n\n"
                "data: [DONE]\n\n",
                "text Hi\n"
                "error throttled Rate limit reached for gpt-4o-mini on tokens per min "
                "(TPM).\n");
  expect_events(
      "data: {\"error\":{\"message\":\"The server had an error\\nwhile "
      "processing\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n",
      "error The server had an error while processing\n");
  expect_events("event: error\ndata: {\"code\":429,\"message\":\"busy\",\"type\":"
                "\"unavailable_error\"}\n\n",
                "error throttled busy\n");
  expect_events("data: {\"error\":{\"code\":500}}\n\n",
                "error the provider sent an error\n");
  /* llama.cpp's server: an "error" line, then [DONE]. */
  expect_events(
      CHUNK("{\"content\":\"Hi\"}", "null") //
      "error: {\"code\":400,\"message\":\"the request exceeds the available "
      "context size, try increasing it\",\"type\":\"exceed_context_size_error\"}"
      "\n\ndata: [DONE]\n\n",
      "text Hi\n"
      "error the request exceeds the available context size, try increasing "
      "it\n");
}

/* Some servers say "" where they mean a null finish_reason. */
static void test_provider_openai_empty_finish_reason_is_none(void **state) {
  (void)state;
  expect_events(CHUNK("{\"content\":\"Hel\"}", "\"\"")
                    CHUNK("{\"content\":\"lo\"}", "\"\"")
                        CHUNK("{}", "\"stop\"") "data: [DONE]\n\n",
                "text Hel\n"
                "text lo\n"
                "stop end_turn\n");
}

static void test_provider_openai_bad_json(void **state) {
  (void)state;
  expect_events(CHUNK("{\"content\":\"Hi\"}", "null")                                   //
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"more\"}\n\n" //
                CHUNK("{\"content\":\"never seen\"}", "\"stop\"") "data: [DONE]\n\n",
                "text Hi\n"
                "error the stream sent a chunk that is not a JSON object\n");
  expect_events("data: [1,2]\n\n",
                "error the stream sent a chunk that is not a JSON object\n");
  expect_events(CHUNK("{\"content\":7}", "null"),
                "error the stream sent a malformed chunk\n");
}

/* Only choice 0 is read; comments, other event names and empty data are not
 * chunks; content after the finish_reason breaks the format. */
static void test_provider_openai_other_choices_and_noise(void **state) {
  (void)state;
  expect_events(": keep-alive\n\n"
                "event: ping\ndata: {}\n\n"
                "data:\n\n"
                "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"B\"},"
                "\"finish_reason\":\"stop\"},{\"index\":0,\"delta\":{\"content\":\"A\"},"
                "\"finish_reason\":null}]}\n\n" //
                CHUNK("{}", "\"stop\"") CHUNK("{}", "\"stop\"")
                    CHUNK("{\"content\":\"\"}", "null")
                        CHUNK("{\"content\":\"late\"}", "null") "data: [DONE]\n\n",
                "text A\n"
                "error the stream sent a delta after its finish_reason\n");
}

/* ------------------------------------------------------------------ limits */

static void test_provider_openai_limits(void **state) {
  (void)state;
  /* 64 calls (OPENAI_MAX_CALLS) fit in a reply; the one after them does not. */
  enum { MAX_CALLS = 64, CALLS = MAX_CALLS + 1 };
  char *too_many[CALLS];
  for (size_t i = 0; i < CALLS; i++) {
    too_many[i] = malloc(200);
    assert_non_null(too_many[i]);
    snprintf(
        too_many[i], 200,
        "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":%zu,"
        "\"id\":\"c%zu\",\"function\":{\"name\":\"clock\",\"arguments\":\"{}\"}}]}}]}",
        i, i);
  }
  turn_buf want_many;
  turn_buf_init(&want_many, SIZE_MAX, NULL);
  for (size_t i = 0; i < MAX_CALLS; i++) {
    char line[64];
    int n = snprintf(line, sizeof line, "start %zu c%zu clock\ndelta %zu {}\n", i, i, i);
    assert_int_equal(turn_buf_append(&want_many, line, (size_t)n), TURN_OK);
  }
  const char error_line[] = "error the stream sent too many tool calls\n";
  assert_int_equal(turn_buf_append(&want_many, error_line, sizeof error_line), TURN_OK);
  expect_direct((const char *const *)too_many, CALLS, want_many.data);
  turn_buf_fini(&want_many);
  for (size_t i = 0; i < CALLS; i++)
    free(too_many[i]);
  /* An index is a name, not a count: a huge one is one call. */
  const char *huge[] = {
      "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":"
      "9223372036854775807,\"function\":{\"name\":\"clock\"}}]}}]}",
      "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}"};
  expect_direct(huge, 2, "start 0  clock\nend 0 \nstop tool_use\n");

  const char *nameless[] = {
      "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\","
      "\"function\":{\"arguments\":\"{}\"}}]}}]}",
      "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}"};
  expect_direct(nameless, 2, "error the stream sent a tool call without a name\n");

  /* 1 MiB of arguments is the most one call may send: 16 pieces of 64 KiB fit,
   * the 17th does not, and the whole is handed out before the error. */
  size_t piece = 64u << 10;
  const char *head = "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
                     "\"function\":{\"name\":\"clock\",\"arguments\":\"";
  const char *tail = "\"}}]}}]}";
  size_t len = strlen(head) + piece + strlen(tail);
  char *chunk = malloc(len + 1);
  assert_non_null(chunk);
  memcpy(chunk, head, strlen(head));
  memset(chunk + strlen(head), 'a', piece);
  memcpy(chunk + strlen(head) + piece, tail, strlen(tail) + 1);
  struct events e = {.after_last = false, .ended = false};
  turn_buf_init(&e.log, 4u << 20, NULL);
  struct provider_stream *s = provider_stream_new(PROVIDER_OPENAI, on_model_event, &e);
  assert_non_null(s);
  for (int i = 0; i < 17; i++)
    provider_stream_event(s, "message", chunk, len);
  assert_true(provider_stream_done(s));
  free(chunk);
  provider_stream_free(s);
  const char *want = "error the stream sent tool call arguments over 1 MiB\n";
  const char *begin = "start 0  clock\ndelta 0 aaaa";
  size_t n = e.log.len;
  bool ok = n > strlen(want) + strlen(begin) &&
            memcmp(e.log.data + n - strlen(want), want, strlen(want)) == 0 &&
            memcmp(e.log.data, begin, strlen(begin)) == 0;
  turn_buf_fini(&e.log);
  assert_true(ok);
}

/* -------------------------------------------------------------------- body */

static void expect_body(const struct provider_request *req, const char *expected) {
  char *body = provider_openai_body(req);
  assert_non_null(body);
  assert_null(strchr(body, '\n')); /* compact */
  json_error_t jerr;
  json_t *got = json_loads(body, 0, &jerr);
  json_t *want = json_loads(expected, 0, &jerr);
  assert_non_null(want);
  if (got == NULL || !json_equal(got, want)) {
    print_error("got:  %s\nwant: %s\n", body, expected);
    json_decref(got);
    json_decref(want);
    free(body);
    fail();
  }
  json_decref(got);
  json_decref(want);
  free(body);
}

static const struct provider_tool clock_tool = {
    "clock", "The time now in a zone.",
    "{\"type\":\"object\",\"properties\":{\"tz\":{\"type\":\"string\"}}}"};

/* One turn of convo.h's messages: a question, a reply with thinking, text and a
 * tool call, and the call's result. Thinking is not sent back; the input object
 * becomes the arguments string, its numbers as the model wrote them (0.1, not
 * the 17 digits of its nearest double). */
static void test_provider_openai_body_tool_turn(void **state) {
  (void)state;
  const char *messages[] = {
      "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"What time is "
      "it?\"}]}",
      "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"the "
      "user wants the time\"},{\"type\":\"text\",\"text\":\"Let me look.\"},{\"type\":"
      "\"tool_use\",\"id\":\"u1\",\"name\":\"clock\",\"input\":{\"tz\":\"UTC\","
      "\"lat\":0.1}}]}",
      "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"u1\","
      "\"content\":\"08:00 UTC\",\"is_error\":false}]}"};
  struct provider_request req = {.model = "gpt-4o-mini",
                                 .system = "You are terse.",
                                 .messages = messages,
                                 .n_messages = 3,
                                 .tools = &clock_tool,
                                 .n_tools = 1,
                                 .max_tokens = 1024};
  expect_body(
      &req,
      "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"stream_options\":{\"include_usage\":"
      "true},\"max_tokens\":1024,\"messages\":["
      "{\"role\":\"system\",\"content\":\"You are terse.\"},"
      "{\"role\":\"user\",\"content\":\"What time is it?\"},"
      "{\"role\":\"assistant\",\"content\":\"Let me look.\",\"tool_calls\":[{\"id\":"
      "\"u1\",\"type\":\"function\",\"function\":{\"name\":\"clock\",\"arguments\":"
      "\"{\\\"tz\\\":\\\"UTC\\\",\\\"lat\\\":0.1}\"}}]},"
      "{\"role\":\"tool\",\"tool_call_id\":\"u1\",\"content\":\"08:00 UTC\"}],"
      "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"clock\","
      "\"description\":\"The time now in a zone.\",\"parameters\":{\"type\":\"object\","
      "\"properties\":{\"tz\":{\"type\":\"string\"}}}}}]}");
}

/* The other shapes: text blocks joined by a blank line, a reply of tool calls
 * only (content null), a reply of thinking only (nothing to send), several
 * results, one given as blocks; no system and no tools leave their keys out. */
static void test_provider_openai_body_shapes(void **state) {
  (void)state;
  const char *messages[] = {
      "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"one\"},{\"type\":"
      "\"text\",\"text\":\"two\"}]}",
      "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"hm\"}]"
      "}",
      "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"u1\","
      "\"name\":"
      "\"clock\",\"input\":{}},{\"type\":\"tool_use\",\"id\":\"u2\",\"name\":\"ping\","
      "\"input\":{\"n\":[1,2.5]}}]}",
      "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"u1\","
      "\"content\":\"ok\",\"is_error\":false},{\"type\":\"tool_result\",\"tool_use_id\":"
      "\"u2\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\","
      "\"text\":\"b\"}],\"is_error\":true}]}",
      "{\"role\":\"assistant\",\"content\":\"plain\"}"};
  struct provider_request req = {
      .model = "qwen3", .messages = messages, .n_messages = 5, .max_tokens = 64};
  expect_body(
      &req, "{\"model\":\"qwen3\",\"stream\":true,\"stream_options\":{\"include_usage\":"
            "true},\"max_tokens\":64,\"messages\":["
            "{\"role\":\"user\",\"content\":\"one\\n\\ntwo\"},"
            "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
            "{\"id\":\"u1\",\"type\":\"function\",\"function\":{\"name\":\"clock\","
            "\"arguments\":\"{}\"}},"
            "{\"id\":\"u2\",\"type\":\"function\",\"function\":{\"name\":\"ping\","
            "\"arguments\":\"{\\\"n\\\":[1,2.5]}\"}}]},"
            "{\"role\":\"tool\",\"tool_call_id\":\"u1\",\"content\":\"ok\"},"
            "{\"role\":\"tool\",\"tool_call_id\":\"u2\",\"content\":\"a\\n\\nb\"},"
            "{\"role\":\"assistant\",\"content\":\"plain\"}]}");
}

/* The API refuses a request over a tool whose parameters have anyOf, oneOf,
 * allOf, enum or not at the top, or no properties: the model is shown the
 * schema without the first, and with empty properties (turnd checks inputs
 * against the whole schema). Deeper down they stay. */
static void test_provider_openai_body_adapts_tool_schemas(void **state) {
  (void)state;
  const char *messages[] = {
      "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}"};
  const struct provider_tool tools[] = {
      {"find", NULL,
       "{\"type\":\"object\",\"properties\":{\"id\":{\"anyOf\":[{\"type\":"
       "\"string\"},{\"type\":\"integer\"}]},\"name\":{\"enum\":[\"a\"]}},"
       "\"anyOf\":[{\"required\":[\"id\"]},{\"required\":[\"name\"]}],"
       "\"oneOf\":[{}],\"allOf\":[{}],\"enum\":[{}],\"not\":{\"required\":[\"x\"]}}"},
      {"ping", NULL, "{\"type\":\"object\"}"},
      {"noargs", NULL, NULL},
  };
  struct provider_request req = {.model = "m",
                                 .messages = messages,
                                 .n_messages = 1,
                                 .tools = tools,
                                 .n_tools = 3,
                                 .max_tokens = 64};
  expect_body(
      &req,
      "{\"model\":\"m\",\"stream\":true,\"stream_options\":{\"include_usage\":true},"
      "\"max_tokens\":64,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
      "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"find\","
      "\"parameters\":{\"type\":\"object\",\"properties\":{\"id\":{\"anyOf\":[{"
      "\"type\":\"string\"},{\"type\":\"integer\"}]},\"name\":{\"enum\":[\"a\"]}}}}},"
      "{\"type\":\"function\",\"function\":{\"name\":\"ping\",\"parameters\":{"
      "\"type\":\"object\",\"properties\":{}}}},"
      "{\"type\":\"function\",\"function\":{\"name\":\"noargs\",\"parameters\":{"
      "\"type\":\"object\",\"properties\":{}}}}]}");
}

/* OpenAI's own API gets the limit as max_completion_tokens (its reasoning
 * models refuse max_tokens); any other server, as max_tokens. Which one a base
 * URL is goes by its host alone. */
static void test_provider_openai_limit_field(void **state) {
  (void)state;
  const char *messages[] = {
      "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}"};
  struct provider_request req = {.model = "o4-mini",
                                 .messages = messages,
                                 .n_messages = 1,
                                 .max_tokens = 256,
                                 .max_completion_tokens = true};
  expect_body(&req, "{\"model\":\"o4-mini\",\"stream\":true,\"stream_options\":{"
                    "\"include_usage\":true},\"max_completion_tokens\":256,"
                    "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
  static const char *const own[] = {"https://api.openai.com/v1", "https://API.OpenAI.com",
                                    "https://api.openai.com:443/v1/",
                                    "api.openai.com/v1"};
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
    if (!provider_openai_is_own_api(own[i])) fail_msg("%s is OpenAI's", own[i]);
  static const char *const others[] = {
      "http://127.0.0.1:8081/v1", "http://localhost:11434/v1",
      "https://api.openai.com.example.net/v1", "https://proxy.example/api.openai.com/v1",
      "https://xapi.openai.com/v1"};
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
    if (provider_openai_is_own_api(others[i])) fail_msg("%s is not OpenAI's", others[i]);
}

/* A NUL the model wrote (stored by convo.c as \\u0000) goes back as it came,
 * rather than making every later request of the session unbuildable. */
static void test_provider_openai_body_keeps_nul(void **state) {
  (void)state;
  const char *messages[] = {
      "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}",
      "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":"
      "\"a\\u0000b\"}]}"};
  struct provider_request req = {
      .model = "m", .messages = messages, .n_messages = 2, .max_tokens = 16};
  char *body = provider_openai_body(&req);
  assert_non_null(body);
  assert_non_null(strstr(body, "\"content\":\"a\\u0000b\""));
  free(body);
}

static void test_provider_openai_body_rejects_bad_json(void **state) {
  (void)state;
  const char *good[] = {"{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":"
                        "\"hi\"}]}"};
  const char *bad[] = {good[0], "{\"role\":\"assistant\",\"content\":[{\"type\":"};
  struct provider_request req = {
      .model = "m", .messages = bad, .n_messages = 2, .max_tokens = 16};
  assert_null(provider_openai_body(&req));

  const struct provider_tool broken = {"clock", NULL, "{\"type\":\"object\""};
  req.messages = good;
  req.n_messages = 1;
  req.tools = &broken;
  req.n_tools = 1;
  assert_null(provider_openai_body(&req));

  const char *no_role[] = {"{\"content\":\"hi\"}"};
  req.messages = no_role;
  req.tools = NULL;
  req.n_tools = 0;
  assert_null(provider_openai_body(&req));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_provider_openai_plain_text),
      cmocka_unit_test(test_provider_openai_reasoning_content),
      cmocka_unit_test(test_provider_openai_reasoning_key),
      cmocka_unit_test(test_provider_openai_two_tool_calls_interleaved),
      cmocka_unit_test(test_provider_openai_tool_call_variants),
      cmocka_unit_test(test_provider_openai_tool_call_index_gaps),
      cmocka_unit_test(test_provider_openai_tool_calls_sharing_index_0),
      cmocka_unit_test(test_provider_openai_tool_call_late_name_and_no_index),
      cmocka_unit_test(test_provider_openai_finish_reason_length),
      cmocka_unit_test(test_provider_openai_usage_in_final_chunk),
      cmocka_unit_test(test_provider_openai_no_done_marker),
      cmocka_unit_test(test_provider_openai_cut_before_finish),
      cmocka_unit_test(test_provider_openai_error_chunk),
      cmocka_unit_test(test_provider_openai_empty_finish_reason_is_none),
      cmocka_unit_test(test_provider_openai_bad_json),
      cmocka_unit_test(test_provider_openai_other_choices_and_noise),
      cmocka_unit_test(test_provider_openai_limits),
      cmocka_unit_test(test_provider_openai_body_tool_turn),
      cmocka_unit_test(test_provider_openai_body_shapes),
      cmocka_unit_test(test_provider_openai_body_adapts_tool_schemas),
      cmocka_unit_test(test_provider_openai_limit_field),
      cmocka_unit_test(test_provider_openai_body_keeps_nul),
      cmocka_unit_test(test_provider_openai_body_rejects_bad_json),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
