/* The fake OpenAI-compatible Chat Completions endpoint, POST /v1/chat/completions:
 * the checks the real API makes on what a client can get wrong (the key when one
 * is sent, each "tool" message answering a call of the assistant message just
 * before, every call answered), and the stream in the documented order: a first
 * chunk with the role, content or tool_calls deltas, the finish_reason chunk, the
 * usage chunk (empty choices) when stream_options.include_usage asks, then
 * "data: [DONE]". */
#include "provider.h"

#include <event2/keyvalq_struct.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- checks */

static bool has_call(const json_t *calls, const char *id) {
  for (size_t i = 0; i < json_array_size(calls); i++) {
    const char *call = provider_string(json_array_get(calls, i), "id");
    if (call != NULL && strcmp(call, id) == 0) return true;
  }
  return false;
}

/* Every call of `calls` is answered by a "tool" message in messages[from, to). */
static int check_answered(const json_t *calls, const json_t *messages, size_t from,
                          size_t to, struct verdict *v) {
  for (size_t c = 0; c < json_array_size(calls); c++) {
    const char *id = provider_string(json_array_get(calls, c), "id");
    bool answered = false;
    for (size_t i = from; i < to && !answered; i++) {
      const char *said = provider_string(json_array_get(messages, i), "tool_call_id");
      answered = said != NULL && strcmp(said, id) == 0;
    }
    if (!answered)
      return verdict_set(v, REFUSE_INVALID,
                         "An assistant message with 'tool_calls' must be followed by "
                         "tool messages responding to each 'tool_call_id'. The following "
                         "tool_call_ids did not have response messages: %.80s",
                         id);
  }
  return 0;
}

static int check_calls(const json_t *calls, size_t i, struct verdict *v) {
  for (size_t c = 0; c < json_array_size(calls); c++) {
    const json_t *call = json_array_get(calls, c);
    const json_t *fn = json_object_get(call, "function");
    if (provider_string(call, "id") == NULL || !provider_is_type(call, "function") ||
        provider_string(fn, "name") == NULL || provider_string(fn, "arguments") == NULL)
      return verdict_set(v, REFUSE_INVALID,
                         "Missing required parameter: 'messages[%zu].tool_calls[%zu]' "
                         "needs id, type \"function\", function.name and "
                         "function.arguments.",
                         i, c);
  }
  return 0;
}

static int check_messages(const json_t *messages, struct verdict *v) {
  static const char *const roles[] = {"system", "developer", "user", "assistant", "tool"};
  size_t n = json_array_size(messages);
  const json_t *calls = NULL; /* the calls the messages since `from` must answer */
  size_t from = 0;
  for (size_t i = 0; i < n; i++) {
    const json_t *m = json_array_get(messages, i);
    const char *role = provider_string(m, "role");
    bool known = false;
    for (size_t r = 0; role != NULL && r < sizeof roles / sizeof roles[0]; r++)
      known |= strcmp(role, roles[r]) == 0;
    if (!known)
      return verdict_set(v, REFUSE_INVALID,
                         "Invalid value for 'messages[%zu].role'. Supported values are: "
                         "'system', 'assistant', 'user', 'tool', and 'developer'.",
                         i);
    if (strcmp(role, "tool") == 0) {
      const char *id = provider_string(m, "tool_call_id");
      if (calls == NULL)
        return verdict_set(v, REFUSE_INVALID,
                           "Invalid parameter: messages with role 'tool' must be a "
                           "response to a preceeding message with 'tool_calls'.");
      if (id == NULL)
        return verdict_set(v, REFUSE_INVALID,
                           "Missing required parameter: 'messages[%zu].tool_call_id'.",
                           i);
      if (!has_call(calls, id))
        return verdict_set(v, REFUSE_INVALID,
                           "Invalid parameter: 'tool_call_id' of '%.80s' not found in "
                           "'tool_calls' of previous message.",
                           id);
      continue;
    }
    if (calls != NULL && check_answered(calls, messages, from, i, v) != 0) return -1;
    calls = NULL;
    const json_t *content = json_object_get(m, "content");
    const json_t *tool_calls = json_object_get(m, "tool_calls");
    bool assistant = strcmp(role, "assistant") == 0;
    if (assistant && json_array_size(tool_calls) > 0) {
      if (check_calls(tool_calls, i, v) != 0) return -1;
      calls = tool_calls;
      from = i + 1;
    }
    bool may_be_null = assistant && calls != NULL;
    if (!json_is_string(content) && !json_is_array(content) &&
        !(may_be_null && (content == NULL || json_is_null(content))))
      return verdict_set(v, REFUSE_INVALID,
                         "Invalid type for 'messages[%zu].content': expected one of a "
                         "string or array of objects.",
                         i);
  }
  return calls != NULL ? check_answered(calls, messages, from, n, v) : 0;
}

/* A user message's text: its string content, or its last non-empty text part. */
static const char *user_text(const json_t *m) {
  const json_t *content = json_object_get(m, "content");
  if (json_is_string(content))
    return json_string_length(content) > 0 ? json_string_value(content) : NULL;
  for (size_t j = json_array_size(content); j-- > 0;) {
    const json_t *part = json_array_get(content, j);
    const char *text = provider_string(part, "text");
    if (provider_is_type(part, "text") && text != NULL && text[0] != '\0') return text;
  }
  return NULL;
}

static bool is_user(const json_t *m) {
  const char *role = provider_string(m, "role");
  return role != NULL && strcmp(role, "user") == 0;
}

static int check(struct evhttp_request *req, json_t *body, struct ask *q,
                 struct verdict *v) {
  /* A local server needs no key, so none is fine; a wrong one is not. */
  const char *auth =
      evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
  const char *key = auth != NULL && strncmp(auth, "Bearer ", 7) == 0 ? auth + 7 : NULL;
  if (auth != NULL && (key == NULL || strcmp(key, provider_key()) != 0))
    return verdict_set(v, REFUSE_AUTH, "Incorrect API key provided.");
  if (!json_is_object(body))
    return verdict_set(v, REFUSE_INVALID,
                       "We could not parse the JSON body of your request.");
  const json_t *messages = json_object_get(body, "messages");
  if (!json_is_true(json_object_get(body, "stream")))
    return verdict_set(v, REFUSE_INVALID,
                       "stream: this fake provider answers only \"stream\": true");
  if (!json_is_array(messages))
    return verdict_set(v, REFUSE_INVALID, "Missing required parameter: 'messages'.");
  size_t n = json_array_size(messages);
  if (n == 0)
    return verdict_set(v, REFUSE_INVALID,
                       "Invalid 'messages': empty array. Expected an array with minimum "
                       "length 1, but got an empty array instead.");
  if (check_messages(messages, v) != 0) return -1;

  memset(q, 0, sizeof *q);
  q->key = key;
  const char *model = provider_string(body, "model");
  q->model = model != NULL ? model : "fake-model";
  q->n_messages = n;
  q->first_text = "";
  for (size_t i = 0; i < n; i++) {
    const json_t *m = json_array_get(messages, i);
    if (!is_user(m)) continue;
    const char *text = user_text(m);
    q->first_text = text != NULL ? text : "";
    break;
  }
  for (size_t i = n; i-- > 0 && q->text == NULL;) {
    const json_t *m = json_array_get(messages, i);
    if (is_user(m)) q->text = user_text(m);
  }
  const char *last = provider_string(json_array_get(messages, n - 1), "role");
  q->after_tools = strcmp(last, "tool") == 0;
  q->include_usage = json_is_true(
      json_object_get(json_object_get(body, "stream_options"), "include_usage"));
  return 0;
}

/* ---------------------------------------------------------------- errors */

static int refuse(struct evhttp_request *req, enum refusal r, const char *why) {
  static const struct {
    int status;
    const char *type, *code, *message; /* code NULL: a server error, no param/code */
  } table[] = {
      [REFUSE_INVALID] = {400, "invalid_request_error", "", "Invalid request"},
      [REFUSE_AUTH] = {401, "invalid_request_error", "invalid_api_key",
                       "Incorrect API key provided."},
      [REFUSE_NOT_FOUND] = {404, "invalid_request_error", "unknown_url",
                            "Unknown request URL"},
      [REFUSE_METHOD] = {405, "invalid_request_error", "method_not_supported",
                         "Method not allowed"},
      [REFUSE_RATE_LIMIT] = {429, "requests", "rate_limit_exceeded",
                             "Rate limit reached for requests"},
      [REFUSE_SERVER] = {500, "server_error", NULL, "Internal server error"},
      [REFUSE_OVERLOADED] = {503, "server_error", NULL,
                             "The server is overloaded or not ready yet."},
      [REFUSE_NO_QUOTA] = {429, "insufficient_quota", "insufficient_quota",
                           "You exceeded your current quota, please check your plan "
                           "and billing details."},
  };
  const char *message = why != NULL ? why : table[r].message;
  const char *code = table[r].code;
  json_t *body = code == NULL ? json_pack("{s:{s:s, s:s}}", "error", "message", message,
                                          "type", table[r].type)
                              : json_pack("{s:{s:s, s:s, s:n, s:s?}}", "error", "message",
                                          message, "type", table[r].type, "param", "code",
                                          code[0] != '\0' ? code : NULL);
  return provider_send_json(req, table[r].status, body);
}

/* ---------------------------------------------------------------- stream */

struct writer {
  struct stream *s;
  const struct answer *a;
  const struct ask *q;
  char id[48];        /* every chunk's: the completion's */
  json_int_t created; /* seconds since the epoch */
  bool ok;            /* no allocation failed */
};

/* Takes data. */
static void put(struct writer *w, unsigned delay_ms, json_t *data) {
  if (!w->ok) {
    json_decref(data);
    return;
  }
  w->ok = stream_event(w->s, delay_ms, NULL, data) == 0;
}

/* A chunk: the completion's fields, then choices (taken). */
static json_t *chunk_with(const struct writer *w, json_t *choices) {
  return json_pack("{s:s, s:s, s:I, s:s, s:s, s:o}", "id", w->id, "object",
                   "chat.completion.chunk", "created", w->created, "model", w->q->model,
                   "system_fingerprint", "fp_fake", "choices", choices);
}

/* A chunk of choice 0 (takes delta; NULL: out of memory). */
static json_t *chunk(const struct writer *w, json_t *delta, const char *finish) {
  json_t *choices = json_array();
  if (json_array_append_new(choices,
                            json_pack("{s:i, s:o, s:n, s:s?}", "index", 0, "delta", delta,
                                      "logprobs", "finish_reason", finish)) != 0) {
    json_decref(choices);
    return NULL;
  }
  json_t *c = chunk_with(w, choices);
  /* With include_usage every chunk but the last says "usage": null. */
  if (c != NULL && w->q->include_usage &&
      json_object_set_new(c, "usage", json_null()) != 0) {
    json_decref(c);
    return NULL;
  }
  return c;
}

/* The last chunk when include_usage asks: no choices, the usage. */
static json_t *usage_chunk(const struct writer *w) {
  json_int_t in = (json_int_t)w->q->input_tokens;
  json_int_t out = (json_int_t)answer_output_tokens(w->a);
  json_t *c = chunk_with(w, json_array());
  if (c != NULL && json_object_set_new(c, "usage",
                                       json_pack("{s:I, s:I, s:I}", "prompt_tokens", in,
                                                 "completion_tokens", out, "total_tokens",
                                                 in + out)) != 0) {
    json_decref(c);
    return NULL;
  }
  return c;
}

/* A tool call's first entry: its id, type and name, arguments "". */
static json_t *call_start(const struct answer_tool *t, size_t index, uint64_t *ids) {
  char id[40];
  provider_id(id, sizeof id, "call_", 24, ids);
  return json_pack("{s:I, s:s, s:s, s:{s:s, s:s}}", "index", (json_int_t)index, "id", id,
                   "type", "function", "function", "name", t->name, "arguments", "");
}

static void error_chunk(struct writer *w);

/* The reply's calls; with error_in_call the last one's arguments stop halfway
 * and the error chunk ends the stream. Returns false when it ended so. */
static bool tool_calls(struct writer *w, uint64_t *ids) {
  const struct answer *a = w->a;
  for (size_t c = 0; c < a->n_tools; c++) {
    const struct answer_tool *t = &a->tools[c];
    bool cut = a->error_in_call && c + 1 == a->n_tools;
    /* A reply that starts with a call carries it in the role's chunk. */
    if (c > 0 || a->n_text > 0 || a->n_thinking > 0)
      put(w, a->event_ms,
          chunk(w, json_pack("{s:[o]}", "tool_calls", call_start(t, c, ids)), NULL));
    for (size_t i = 0; i < (cut ? t->n_input / 2 : t->n_input); i++) {
      if (t->input[i][0] == '\0') continue; /* the start's "" */
      put(w, a->delta_ms,
          chunk(w,
                json_pack("{s:[{s:I, s:{s:s}}]}", "tool_calls", "index", (json_int_t)c,
                          "function", "arguments", t->input[i]),
                NULL));
    }
    if (cut) {
      error_chunk(w);
      return false;
    }
  }
  return true;
}

static const char *finish_reason(enum answer_stop stop) {
  switch (stop) {
  case STOP_MAX_TOKENS:
    return "length";
  case STOP_TOOL_USE:
    return "tool_calls";
  case STOP_REFUSAL:
    return "content_filter";
  case STOP_END_TURN:
    break;
  }
  return "stop";
}

/* The error chunk that ends a stream midway: overloaded, or with echo_key an
 * invalid key that echoes the key the request carried. */
static void error_chunk(struct writer *w) {
  char *echo = w->a->echo_key ? provider_key_echo(w->q->key, w->a->wrap_key) : NULL;
  if (w->a->echo_key && echo == NULL) {
    w->ok = false;
    return;
  }
  put(w, w->a->event_ms,
      json_pack("{s:{s:s, s:s}}", "error", "message",
                echo != NULL ? echo : "The server is overloaded", "type",
                echo != NULL ? "invalid_request_error" : "server_error"));
  free(echo);
}

static int write_stream(struct stream *s, const struct answer *a, const struct ask *q,
                        uint64_t *ids) {
  struct writer w = {
      .s = s, .a = a, .q = q, .created = (json_int_t)time(NULL), .ok = true};
  provider_id(w.id, sizeof w.id, "chatcmpl-", 29, ids);
  if (a->n_text == 0 && a->n_thinking == 0 && a->n_tools > 0)
    put(&w, a->first_ms,
        chunk(&w,
              json_pack("{s:s, s:n, s:[o], s:n}", "role", "assistant", "content",
                        "tool_calls", call_start(&a->tools[0], 0, ids), "refusal"),
              NULL));
  else
    put(&w, a->first_ms,
        chunk(&w,
              json_pack("{s:s, s:s, s:n}", "role", "assistant", "content", "", "refusal"),
              NULL));
  for (size_t i = 0; i < a->n_thinking; i++)
    put(&w, a->delta_ms,
        chunk(&w, json_pack("{s:n, s:s}", "content", "reasoning_content", a->thinking[i]),
              NULL));
  char buf[32];
  for (size_t i = 0; i < a->n_text; i++)
    put(&w, a->delta_ms,
        chunk(&w, json_pack("{s:s}", "content", answer_text(a, i, buf, sizeof buf)),
              NULL));
  if (a->ending == ENDING_ERROR) error_chunk(&w);
  if (a->ending != ENDING_NORMAL && a->ending != ENDING_LINGER) return w.ok ? 0 : -1;
  if (!tool_calls(&w, ids)) return w.ok ? 0 : -1;
  put(&w, a->event_ms, chunk(&w, json_object(), finish_reason(a->stop)));
  if (q->include_usage) put(&w, a->event_ms, usage_chunk(&w));
  if (w.ok) w.ok = stream_data(s, a->event_ms, "[DONE]") == 0;
  return w.ok ? 0 : -1;
}

const struct provider openai_provider = {
    .path = "/v1/chat/completions",
    .check = check,
    .refuse = refuse,
    .stream = write_stream,
};
