/* The fake Anthropic Messages endpoint, POST /v1/messages: the request checks the
 * real API makes that a client can get wrong (key, version, alternating roles,
 * tool_result ids against the previous message's tool_use ids), and the stream
 * in the documented order: message_start, then per block content_block_start,
 * (ping after the first start), content_block_delta..., content_block_stop, then
 * message_delta with the stop reason and output tokens, then message_stop. */
#include "provider.h"

#include <event2/keyvalq_struct.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- checks */

/* Whether content, a message's blocks, has a `type` block whose key is id. */
static bool has_block(const json_t *content, const char *type, const char *key,
                      const char *id) {
  for (size_t i = 0; i < json_array_size(content); i++) {
    const json_t *b = json_array_get(content, i);
    const char *v = provider_string(b, key);
    if (provider_is_type(b, type) && v != NULL && strcmp(v, id) == 0) return true;
  }
  return false;
}

/* One block j of message i. prev: the previous message's content (for a
 * tool_result); *text_seen: a text block came before in this message. */
static int check_block(const json_t *b, size_t i, size_t j, bool user, const json_t *prev,
                       bool *text_seen, struct verdict *v) {
  const char *type = provider_string(b, "type");
  if (!json_is_object(b) || type == NULL)
    return verdict_set(v, REFUSE_INVALID, "messages.%zu.content.%zu.type: Field required",
                       i, j);
  if (strcmp(type, "text") == 0) {
    if (provider_string(b, "text") == NULL)
      return verdict_set(v, REFUSE_INVALID,
                         "messages.%zu.content.%zu.text: Field required", i, j);
    *text_seen = true;
  } else if (strcmp(type, "tool_use") == 0) {
    if (user)
      return verdict_set(v, REFUSE_INVALID,
                         "messages.%zu.content.%zu: tool_use blocks are only allowed in "
                         "assistant messages",
                         i, j);
    if (provider_string(b, "id") == NULL || provider_string(b, "name") == NULL ||
        !json_is_object(json_object_get(b, "input")))
      return verdict_set(v, REFUSE_INVALID,
                         "messages.%zu.content.%zu.tool_use: id, name and an input "
                         "object are required",
                         i, j);
  } else if (strcmp(type, "tool_result") == 0) {
    const char *id = provider_string(b, "tool_use_id");
    if (!user)
      return verdict_set(v, REFUSE_INVALID,
                         "messages.%zu.content.%zu: tool_result blocks are only allowed "
                         "in user messages",
                         i, j);
    if (id == NULL)
      return verdict_set(v, REFUSE_INVALID,
                         "messages.%zu.content.%zu.tool_result.tool_use_id: Field "
                         "required",
                         i, j);
    if (*text_seen)
      return verdict_set(v, REFUSE_INVALID,
                         "messages.%zu.content.%zu: tool_result blocks must come before "
                         "any text in a user message",
                         i, j);
    if (!has_block(prev, "tool_use", "id", id))
      return verdict_set(v, REFUSE_INVALID,
                         "messages.%zu.content.%zu: unexpected `tool_use_id` found in "
                         "`tool_result` blocks: %.80s. Each `tool_result` block must "
                         "have a corresponding `tool_use` block in the previous message.",
                         i, j, id);
  } else if (strcmp(type, "thinking") == 0) {
    const char *sig = provider_string(b, "signature");
    if (user || provider_string(b, "thinking") == NULL || sig == NULL || sig[0] == '\0')
      return verdict_set(v, REFUSE_INVALID,
                         "messages.%zu.content.%zu.thinking.signature: Field required", i,
                         j);
  }
  return 0; /* images, documents and the rest: not ours to check */
}

/* Every tool_use of the assistant's content has a tool_result in the user's
 * next message (i) that follows it. */
static int check_answered(const json_t *asked, const json_t *answer, size_t i,
                          struct verdict *v) {
  for (size_t j = 0; j < json_array_size(asked); j++) {
    const json_t *b = json_array_get(asked, j);
    const char *id = provider_string(b, "id");
    if (provider_is_type(b, "tool_use") &&
        !has_block(answer, "tool_result", "tool_use_id", id))
      return verdict_set(v, REFUSE_INVALID,
                         "messages.%zu: `tool_use` ids were found without `tool_result` "
                         "blocks immediately after: %.80s. Each `tool_use` block must "
                         "have a corresponding `tool_result` block in the next message.",
                         i - 1, id);
  }
  return 0;
}

static int check_message(const json_t *messages, size_t i, struct verdict *v) {
  const json_t *m = json_array_get(messages, i);
  const char *role = provider_string(m, "role");
  if (role == NULL || (strcmp(role, "user") != 0 && strcmp(role, "assistant") != 0))
    return verdict_set(v, REFUSE_INVALID,
                       "messages.%zu.role: Input should be 'user' or 'assistant'", i);
  bool user = strcmp(role, "user") == 0;
  if (i == 0 && !user)
    return verdict_set(v, REFUSE_INVALID,
                       "messages: first message must use the \"user\" role");
  if (user != (i % 2 == 0))
    return verdict_set(v, REFUSE_INVALID,
                       "messages: roles must alternate between \"user\" and "
                       "\"assistant\", but found multiple \"%s\" roles in a row",
                       role);
  const json_t *content = json_object_get(m, "content");
  const json_t *prev =
      i > 0 ? json_object_get(json_array_get(messages, i - 1), "content") : NULL;
  bool may_be_empty = !user && i + 1 == json_array_size(messages); /* a prefill */
  size_t len;
  if (json_is_string(content))
    len = json_string_length(content);
  else if (json_is_array(content))
    len = json_array_size(content);
  else
    return verdict_set(v, REFUSE_INVALID,
                       "messages.%zu.content: Input should be a valid string or list", i);
  if (len == 0 && !may_be_empty)
    return verdict_set(v, REFUSE_INVALID,
                       "messages.%zu: all messages must have non-empty content except "
                       "for the optional final assistant message",
                       i);
  bool text_seen = false;
  for (size_t j = 0; j < json_array_size(content); j++)
    if (check_block(json_array_get(content, j), i, j, user, prev, &text_seen, v) != 0)
      return -1;
  return user && i > 0 ? check_answered(prev, content, i, v) : 0;
}

/* A user message's text: its string content, or its last non-empty text block;
 * NULL when it has none (tool results only). */
static const char *user_text(const json_t *m) {
  const json_t *content = json_object_get(m, "content");
  if (json_is_string(content))
    return json_string_length(content) > 0 ? json_string_value(content) : NULL;
  for (size_t j = json_array_size(content); j-- > 0;) {
    const json_t *b = json_array_get(content, j);
    const char *text = provider_string(b, "text");
    if (provider_is_type(b, "text") && text != NULL && text[0] != '\0') return text;
  }
  return NULL;
}

/* The last message is tool results and nothing the user said. */
static bool is_tool_results(const json_t *m) {
  const json_t *content = json_object_get(m, "content");
  bool results = false;
  for (size_t j = 0; j < json_array_size(content); j++)
    results |= provider_is_type(json_array_get(content, j), "tool_result");
  return results && user_text(m) == NULL;
}

static int check(struct evhttp_request *req, json_t *body, struct ask *q,
                 struct verdict *v) {
  struct evkeyvalq *headers = evhttp_request_get_input_headers(req);
  const char *key = evhttp_find_header(headers, "x-api-key");
  if (key == NULL) return verdict_set(v, REFUSE_AUTH, "x-api-key header is required");
  if (strcmp(key, provider_key()) != 0)
    return verdict_set(v, REFUSE_AUTH, "invalid x-api-key");
  if (evhttp_find_header(headers, "anthropic-version") == NULL)
    return verdict_set(v, REFUSE_INVALID, "anthropic-version: header is required");
  if (!json_is_object(body))
    return verdict_set(v, REFUSE_INVALID, "The request body is not valid JSON.");
  const json_t *max = json_object_get(body, "max_tokens");
  const json_t *messages = json_object_get(body, "messages");
  const json_t *system = json_object_get(body, "system");
  if (provider_string(body, "model") == NULL)
    return verdict_set(v, REFUSE_INVALID, "model: Field required");
  if (!json_is_integer(max))
    return verdict_set(v, REFUSE_INVALID, "max_tokens: Field required");
  if (json_integer_value(max) < 1)
    return verdict_set(v, REFUSE_INVALID,
                       "max_tokens: Input should be greater than or equal to 1");
  if (!json_is_true(json_object_get(body, "stream")))
    return verdict_set(v, REFUSE_INVALID,
                       "stream: this fake provider answers only \"stream\": true");
  if (system != NULL && !json_is_string(system) && !json_is_array(system))
    return verdict_set(v, REFUSE_INVALID,
                       "system: Input should be a valid string or list");
  if (!json_is_array(messages))
    return verdict_set(v, REFUSE_INVALID, "messages: Field required");
  size_t n = json_array_size(messages);
  if (n == 0)
    return verdict_set(v, REFUSE_INVALID, "messages: at least one message is required");
  for (size_t i = 0; i < n; i++)
    if (check_message(messages, i, v) != 0) return -1;

  memset(q, 0, sizeof *q);
  q->key = key;
  q->model = provider_string(body, "model");
  q->n_messages = n;
  const char *first = user_text(json_array_get(messages, 0));
  q->first_text = first != NULL ? first : "";
  for (size_t i = n; i-- > 0 && q->text == NULL;)
    if (i % 2 == 0) q->text = user_text(json_array_get(messages, i)); /* user's */
  const json_t *last = json_array_get(messages, n - 1);
  q->after_tools = n % 2 == 1 && is_tool_results(last);
  return 0;
}

/* ---------------------------------------------------------------- errors */

static int refuse(struct evhttp_request *req, enum refusal r, const char *why) {
  static const struct {
    int status;
    const char *type, *message;
  } table[] = {
      [REFUSE_INVALID] = {400, "invalid_request_error", "Invalid request"},
      [REFUSE_AUTH] = {401, "authentication_error", "invalid x-api-key"},
      [REFUSE_NOT_FOUND] = {404, "not_found_error", "Not found"},
      [REFUSE_METHOD] = {405, "invalid_request_error", "Method not allowed"},
      [REFUSE_RATE_LIMIT] = {429, "rate_limit_error",
                             "Number of request tokens has exceeded your per-minute "
                             "rate limit"},
      [REFUSE_SERVER] = {500, "api_error", "Internal server error"},
      [REFUSE_OVERLOADED] = {529, "overloaded_error", "Overloaded"},
      [REFUSE_NO_QUOTA] = {400, "invalid_request_error",
                           "Your credit balance is too low to access the Anthropic API."},
  };
  return provider_send_json(req, table[r].status,
                            json_pack("{s:s, s:{s:s, s:s}}", "type", "error", "error",
                                      "type", table[r].type, "message",
                                      why != NULL ? why : table[r].message));
}

/* ---------------------------------------------------------------- stream */

struct writer {
  struct stream *s;
  const struct answer *a;
  const struct ask *q;
  size_t index; /* the open or next content block's */
  bool pinged;  /* the ping went out, after the first block's start */
  bool ok;      /* no allocation failed */
};

static void put(struct writer *w, unsigned delay_ms, const char *name, json_t *data) {
  if (!w->ok) {
    json_decref(data);
    return;
  }
  w->ok = stream_event(w->s, delay_ms, name, data) == 0;
}

/* Takes block. */
static void block_start(struct writer *w, json_t *block) {
  put(w, w->a->event_ms, "content_block_start",
      json_pack("{s:s, s:I, s:o}", "type", "content_block_start", "index",
                (json_int_t)w->index, "content_block", block));
  if (!w->pinged) put(w, w->a->event_ms, "ping", json_pack("{s:s}", "type", "ping"));
  w->pinged = true;
}

/* Takes delta. */
static void block_delta(struct writer *w, unsigned delay_ms, json_t *delta) {
  put(w, delay_ms, "content_block_delta",
      json_pack("{s:s, s:I, s:o}", "type", "content_block_delta", "index",
                (json_int_t)w->index, "delta", delta));
}

static void block_stop(struct writer *w) {
  put(w, w->a->event_ms, "content_block_stop",
      json_pack("{s:s, s:I}", "type", "content_block_stop", "index",
                (json_int_t)w->index));
  w->index++;
}

static void thinking_block(struct writer *w) {
  const struct answer *a = w->a;
  block_start(w, json_pack("{s:s, s:s}", "type", "thinking", "thinking", ""));
  for (size_t i = 0; i < a->n_thinking; i++)
    block_delta(
        w, a->delta_ms,
        json_pack("{s:s, s:s}", "type", "thinking_delta", "thinking", a->thinking[i]));
  block_delta(
      w, a->event_ms,
      json_pack("{s:s, s:s}", "type", "signature_delta", "signature", a->signature));
  block_stop(w);
}

/* The error event that ends a stream midway: overloaded, or with echo_key an
 * authentication error that echoes the key the request carried. */
static void error_event(struct writer *w) {
  char *echo = w->a->echo_key ? provider_key_echo(w->q->key, w->a->wrap_key) : NULL;
  if (w->a->echo_key && echo == NULL) {
    w->ok = false;
    return;
  }
  put(w, w->a->event_ms, "error",
      json_pack("{s:s, s:{s:s, s:s}}", "type", "error", "error", "type",
                echo != NULL ? "authentication_error" : "overloaded_error", "message",
                echo != NULL ? echo : "Overloaded"));
  free(echo);
}

/* The text block, or as much of it as the ending lets through. Returns false
 * when the stream ends with it. */
static bool text_block(struct writer *w) {
  const struct answer *a = w->a;
  char buf[32];
  block_start(w, json_pack("{s:s, s:s}", "type", "text", "text", ""));
  for (size_t i = 0; i < a->n_text; i++)
    block_delta(w, a->delta_ms,
                json_pack("{s:s, s:s}", "type", "text_delta", "text",
                          answer_text(a, i, buf, sizeof buf)));
  if (a->ending == ENDING_ERROR) error_event(w);
  if (a->ending != ENDING_NORMAL && a->ending != ENDING_LINGER) return false;
  block_stop(w);
  return true;
}

/* A tool_use block; cut: only the first half of its input, then the error event
 * that ends the stream. Returns false when the stream ends with it. */
static bool tool_block(struct writer *w, const struct answer_tool *t, uint64_t *ids,
                       bool cut) {
  char id[40];
  provider_id(id, sizeof id, "toolu_01", 22, ids);
  block_start(w, json_pack("{s:s, s:s, s:s, s:{}}", "type", "tool_use", "id", id, "name",
                           t->name, "input"));
  for (size_t i = 0; i < (cut ? t->n_input / 2 : t->n_input); i++)
    block_delta(
        w, w->a->delta_ms,
        json_pack("{s:s, s:s}", "type", "input_json_delta", "partial_json", t->input[i]));
  if (cut) {
    error_event(w);
    return false;
  }
  block_stop(w);
  return true;
}

static const char *stop_reason(enum answer_stop stop) {
  switch (stop) {
  case STOP_MAX_TOKENS:
    return "max_tokens";
  case STOP_TOOL_USE:
    return "tool_use";
  case STOP_REFUSAL:
    return "refusal";
  case STOP_END_TURN:
    break;
  }
  return "end_turn";
}

static int write_stream(struct stream *s, const struct answer *a, const struct ask *q,
                        uint64_t *ids) {
  struct writer w = {.s = s, .a = a, .q = q, .ok = true};
  char id[40];
  provider_id(id, sizeof id, "msg_01", 22, ids);
  put(&w, a->first_ms, "message_start",
      json_pack("{s:s, s:{s:s, s:s, s:s, s:[], s:s, s:n, s:n, s:{s:I, s:i, s:i, s:i}}}",
                "type", "message_start", "message", "id", id, "type", "message", "role",
                "assistant", "content", "model", q->model, "stop_reason", "stop_sequence",
                "usage", "input_tokens", (json_int_t)q->input_tokens,
                "cache_creation_input_tokens", 0, "cache_read_input_tokens", 0,
                "output_tokens", 1));
  if (a->n_thinking > 0) thinking_block(&w);
  if (a->n_text > 0 && !text_block(&w)) return w.ok ? 0 : -1;
  for (size_t i = 0; i < a->n_tools; i++)
    if (!tool_block(&w, &a->tools[i], ids, a->error_in_call && i + 1 == a->n_tools))
      return w.ok ? 0 : -1;
  put(&w, a->event_ms, "message_delta",
      json_pack("{s:s, s:{s:s, s:n}, s:{s:I}}", "type", "message_delta", "delta",
                "stop_reason", stop_reason(a->stop), "stop_sequence", "usage",
                "output_tokens", (json_int_t)answer_output_tokens(a)));
  put(&w, a->event_ms, "message_stop", json_pack("{s:s}", "type", "message_stop"));
  return w.ok ? 0 : -1;
}

const struct provider anthropic_provider = {
    .path = "/v1/messages",
    .check = check,
    .refuse = refuse,
    .stream = write_stream,
};
