/* The Anthropic Messages API: the streamed answer's decoder and the request body.
 * The stream is message_start, then content blocks one at a time (start, deltas,
 * stop, with indexes 0, 1, ...), then message_delta with the stop reason, then
 * message_stop; ping and unknown event types may come anywhere and are ignored,
 * as the API's versioning policy asks. Memory is one event's JSON plus the open
 * tool call's input, capped at TOOL_INPUT_MAX.
 *
 * States (refusals come from next_state[][]; a zero entry means refused):
 *
 *   WAIT --message_start--> MESSAGE --content_block_start--> BLOCK
 *                            |  ^                              |  ^
 *                            |  +----content_block_stop--------+  | delta
 *                            |                                    +--+
 *                            +--message_delta--> DELTA --message_stop--> DONE
 *                                                 ^  | message_delta
 *                                                 +--+
 *   any --error event, bad JSON, a refused event, a broken block--> FAILED
 *
 *   WAIT    -> MESSAGE [on_message_start]     MESSAGE -> BLOCK   [on_block_start]
 *   BLOCK   -> BLOCK   [on_block_delta]       BLOCK   -> MESSAGE [on_block_stop]
 *   MESSAGE -> DELTA   [on_message_delta]     DELTA   -> DELTA   [on_message_delta]
 *   DELTA   -> DONE    [on_message_stop: STOP handed out]
 *   any     -> FAILED  [fail(), on_error: ERROR handed out]
 *   DONE and FAILED absorb. In BLOCK one block is open, its index n_blocks - 1;
 *   tool_input holds bytes only while that block is a tool_use. */
#include "json_short.h"
#include "provider_anthropic.h"

#include "turn/turn.h"

#include <assert.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* A tool call's input larger than this is refused: no real call comes near it,
 * and it bounds what a broken or hostile stream makes us hold. */
#define TOOL_INPUT_MAX (1u << 20)

enum astate {
  AS_NONE, /* 0: so a missing table entry means "refused" */
  AS_WAIT,
  AS_MESSAGE,
  AS_BLOCK,
  AS_DELTA,
  AS_DONE,
  AS_FAILED,
  AS_N
};

enum ainput {
  AI_MESSAGE_START,
  AI_BLOCK_START,
  AI_BLOCK_DELTA,
  AI_BLOCK_STOP,
  AI_MESSAGE_DELTA,
  AI_MESSAGE_STOP,
  AI_N
};

static const char *const input_names[AI_N] = {
    "message_start",      "content_block_start", "content_block_delta",
    "content_block_stop", "message_delta",       "message_stop"};

static const enum astate next_state[AS_N][AI_N] = {
    [AS_WAIT] = {[AI_MESSAGE_START] = AS_MESSAGE},
    [AS_MESSAGE] = {[AI_BLOCK_START] = AS_BLOCK, [AI_MESSAGE_DELTA] = AS_DELTA},
    [AS_BLOCK] = {[AI_BLOCK_DELTA] = AS_BLOCK, [AI_BLOCK_STOP] = AS_MESSAGE},
    [AS_DELTA] = {[AI_MESSAGE_DELTA] = AS_DELTA, [AI_MESSAGE_STOP] = AS_DONE},
};

/* What the open content block is. Blocks we cannot hand on (redacted_thinking,
 * server tools' blocks, types added later) are OTHER: checked, not decoded. */
enum block_kind { BLOCK_TEXT, BLOCK_THINKING, BLOCK_TOOL, BLOCK_OTHER };

struct anthropic {
  enum astate state;
  enum block_kind block; /* the open block's kind, in AS_BLOCK */
  size_t n_blocks;       /* blocks started: the next start's index */
  size_t n_tools;        /* tool_use blocks started: the next call's index */
  turn_buf tool_input;   /* the open tool_use block's input; cap TOOL_INPUT_MAX + 1
                            for the NUL added before TOOL_END */
  uint64_t input_tokens, output_tokens; /* the latest totals the stream gave */
  bool have_stop;                       /* a message_delta gave a stop reason */
  enum model_stop stop;
};

static void set_state(struct anthropic *a, enum astate next) {
  a->state = next;
}

static bool check_invariants(const struct anthropic *a) {
  bool tool_open = a->state == AS_BLOCK && a->block == BLOCK_TOOL;
  return a->state > AS_NONE && a->state < AS_N && a->n_tools <= a->n_blocks &&
         (a->state != AS_BLOCK || a->n_blocks > 0) &&
         (tool_open || a->tool_input.len == 0) && a->tool_input.len <= TOOL_INPUT_MAX &&
         (a->state != AS_DONE || a->have_stop);
}

void *anthropic_stream_new(void) {
  struct anthropic *a = malloc(sizeof *a);
  if (a == NULL) return NULL;
  memset(a, 0, sizeof *a);
  set_state(a, AS_WAIT);
  turn_buf_init(&a->tool_input, TOOL_INPUT_MAX + 1, NULL);
  return a;
}

void anthropic_stream_free(void *impl) {
  struct anthropic *a = impl;
  if (a == NULL) return;
  turn_buf_fini(&a->tool_input);
  free(a);
}

/* The messages say what broke, never which bytes: they reach logs and users. */
static void fail(struct provider_stream *s, struct anthropic *a, const char *message) {
  turn_buf_fini(&a->tool_input);
  set_state(a, AS_FAILED);
  provider_fail(s, message);
}

static void emit_text(struct provider_stream *s, enum model_event_kind kind, size_t index,
                      const char *text, size_t len) {
  if (len == 0) return; /* an empty piece says nothing; the API sends some */
  struct model_event ev = {.kind = kind, .index = index, .text = text, .len = len};
  provider_emit(s, &ev);
}

/* A string member, NULL when missing or not a string. */
static const json_t *get_string(const json_t *o, const char *key) {
  const json_t *v = json_object_get(o, key);
  return json_is_string(v) ? v : NULL;
}

/* Sets *out from a token count that is there and sane; keeps it otherwise. */
static void get_tokens(const json_t *usage, const char *key, uint64_t *out) {
  const json_t *v = json_object_get(usage, key);
  if (json_is_integer(v) && json_integer_value(v) >= 0)
    *out = (uint64_t)json_integer_value(v);
}

static void on_message_start(struct anthropic *a, const json_t *root) {
  const json_t *usage = json_object_get(json_object_get(root, "message"), "usage");
  get_tokens(usage, "input_tokens", &a->input_tokens);
  get_tokens(usage, "output_tokens", &a->output_tokens);
}

/* Adds a piece of the open tool call's input and hands it out. */
static void add_tool_input(struct provider_stream *s, struct anthropic *a, const char *p,
                           size_t len) {
  if (len > TOOL_INPUT_MAX - a->tool_input.len) {
    fail(s, a, "a tool call's input is larger than 1 MiB");
    return;
  }
  if (turn_buf_append(&a->tool_input, p, len) != TURN_OK) {
    fail(s, a, "out of memory");
    return;
  }
  emit_text(s, MODEL_EV_TOOL_DELTA, a->n_tools - 1, p, len);
}

static void on_block_start(struct provider_stream *s, struct anthropic *a,
                           const json_t *root) {
  const json_t *block = json_object_get(root, "content_block");
  const json_t *type = get_string(block, "type");
  if (type == NULL) {
    fail(s, a, "content_block_start without a block type");
    return;
  }
  const char *t = json_string_value(type);
  if (strcmp(t, "text") == 0) {
    a->block = BLOCK_TEXT;
    const json_t *text = get_string(block, "text");
    if (text != NULL)
      emit_text(s, MODEL_EV_TEXT, 0, json_string_value(text), json_string_length(text));
  } else if (strcmp(t, "thinking") == 0) {
    a->block = BLOCK_THINKING;
    const json_t *text = get_string(block, "thinking");
    if (text != NULL)
      emit_text(s, MODEL_EV_REASONING, 0, json_string_value(text),
                json_string_length(text));
  } else if (strcmp(t, "tool_use") == 0) {
    const json_t *id = get_string(block, "id"), *name = get_string(block, "name");
    /* Both are handed on NUL-terminated: one holding a NUL would arrive cut. */
    if (id == NULL || name == NULL || json_string_length(id) == 0 ||
        json_string_length(name) == 0 ||
        strlen(json_string_value(id)) != json_string_length(id) ||
        strlen(json_string_value(name)) != json_string_length(name)) {
      fail(s, a, "a tool_use block without a usable id and name");
      return;
    }
    a->block = BLOCK_TOOL;
    struct model_event ev = {.kind = MODEL_EV_TOOL_START,
                             .index = a->n_tools++,
                             .id = json_string_value(id),
                             .name = json_string_value(name)};
    provider_emit(s, &ev);
    /* The API starts with "input": {} and streams the input as deltas; a server
     * that puts the whole input here instead has it handed on as one delta. */
    const json_t *input = json_object_get(block, "input");
    if (json_is_object(input) && json_object_size(input) > 0) {
      char *text = json_dumps(input, JSON_COMPACT);
      if (text == NULL)
        fail(s, a, "out of memory");
      else
        add_tool_input(s, a, text, strlen(text));
      free(text);
    }
  } else {
    a->block = BLOCK_OTHER;
  }
}

static void on_block_delta(struct provider_stream *s, struct anthropic *a,
                           const json_t *root) {
  const json_t *delta = json_object_get(root, "delta");
  const json_t *type = get_string(delta, "type");
  if (type == NULL) {
    fail(s, a, "content_block_delta without a delta type");
    return;
  }
  if (a->block == BLOCK_OTHER) return;

  /* Which block each known delta belongs to, where its text is, what it becomes. */
  static const struct {
    const char *type, *field;
    enum block_kind block;
    enum model_event_kind kind;
  } deltas[] = {
      {"text_delta", "text", BLOCK_TEXT, MODEL_EV_TEXT},
      {"thinking_delta", "thinking", BLOCK_THINKING, MODEL_EV_REASONING},
      {"signature_delta", "signature", BLOCK_THINKING, MODEL_EV_SIGNATURE},
      {"input_json_delta", "partial_json", BLOCK_TOOL, MODEL_EV_TOOL_DELTA},
  };
  const char *t = json_string_value(type);
  for (size_t i = 0; i < sizeof deltas / sizeof deltas[0]; i++) {
    if (strcmp(t, deltas[i].type) != 0) continue;
    if (deltas[i].block != a->block) {
      fail(s, a, "a content block got a delta of another kind");
      return;
    }
    const json_t *text = get_string(delta, deltas[i].field);
    if (text == NULL) {
      fail(s, a, "a content block delta without its text");
      return;
    }
    if (deltas[i].kind == MODEL_EV_TOOL_DELTA)
      add_tool_input(s, a, json_string_value(text), json_string_length(text));
    else
      emit_text(s, deltas[i].kind, 0, json_string_value(text), json_string_length(text));
    return;
  }
  /* Other delta types (citations_delta, ones added later) carry nothing we hand
   * on. */
}

static void on_block_stop(struct provider_stream *s, struct anthropic *a) {
  if (a->block != BLOCK_TOOL) return;
  /* NUL-terminated for a consumer that wants a C string; len excludes it. */
  if (turn_buf_append(&a->tool_input, "", 1) != TURN_OK) {
    fail(s, a, "out of memory");
    return;
  }
  struct model_event ev = {.kind = MODEL_EV_TOOL_END,
                           .index = a->n_tools - 1,
                           .text = a->tool_input.data,
                           .len = a->tool_input.len - 1};
  turn_buf_reset(&a->tool_input);
  provider_emit(s, &ev);
}

static enum model_stop stop_from_name(const char *name) {
  if (strcmp(name, "end_turn") == 0) return MODEL_STOP_END_TURN;
  if (strcmp(name, "tool_use") == 0) return MODEL_STOP_TOOL_USE;
  /* The reply ran into the context window: cut short as at the output limit. */
  if (strcmp(name, "max_tokens") == 0 ||
      strcmp(name, "model_context_window_exceeded") == 0)
    return MODEL_STOP_MAX_TOKENS;
  if (strcmp(name, "refusal") == 0) return MODEL_STOP_REFUSED;
  return MODEL_STOP_OTHER; /* stop_sequence, pause_turn, later ones */
}

static void on_message_delta(struct provider_stream *s, struct anthropic *a,
                             const json_t *root) {
  const json_t *reason = get_string(json_object_get(root, "delta"), "stop_reason");
  if (reason != NULL) {
    a->stop = stop_from_name(json_string_value(reason));
    a->have_stop = true;
  }
  /* The counts here are cumulative; input_tokens, when sent, replaces the one
   * from message_start. */
  const json_t *usage = json_object_get(root, "usage");
  if (!json_is_object(usage)) return;
  get_tokens(usage, "input_tokens", &a->input_tokens);
  get_tokens(usage, "output_tokens", &a->output_tokens);
  struct model_event ev = {.kind = MODEL_EV_USAGE,
                           .input_tokens = a->input_tokens,
                           .output_tokens = a->output_tokens};
  provider_emit(s, &ev);
}

/* Whether the string has a character that survives provider_error_message():
 * one that is not a space or a C0, DEL or C1 control. */
static bool visible(const json_t *str) {
  const unsigned char *p = (const unsigned char *)json_string_value(str);
  size_t len = json_string_length(str);
  for (size_t i = 0; p != NULL && i < len; i++) {
    if (p[i] <= 0x20 || p[i] == 0x7f) continue;
    if (p[i] == 0xc2 && i + 1 < len && p[i + 1] < 0xa0) {
      i++;
      continue;
    }
    return true;
  }
  return false;
}

static void on_error(struct provider_stream *s, struct anthropic *a, const char *data,
                     size_t len, const json_t *root) {
  const json_t *err = json_object_get(root, "error");
  const json_t *type = get_string(err, "type");
  bool throttled =
      type != NULL && (strcmp(json_string_value(type), "overloaded_error") == 0 ||
                       strcmp(json_string_value(type), "rate_limit_error") == 0);
  /* provider_error_message() takes the message from this very shape, made safe.
   * Given one it would reduce to nothing, it names the status, which we lack. */
  char *text =
      visible(get_string(err, "message")) ? provider_error_message(0, data, len) : NULL;
  const char *msg = text != NULL ? text : "the provider reported an error";
  struct model_event ev = {.kind = MODEL_EV_ERROR,
                           .text = msg,
                           .len = strlen(msg),
                           .throttled = throttled,
                           .retry_after_s = -1};
  turn_buf_fini(&a->tool_input);
  set_state(a, AS_FAILED);
  provider_emit(s, &ev);
  free(text);
}

static int input_from_name(const char *name) {
  for (int i = 0; i < AI_N; i++)
    if (strcmp(name, input_names[i]) == 0) return i;
  return -1;
}

/* One event whose data is the parsed root; its type decides. */
static void step(struct provider_stream *s, struct anthropic *a, const char *type,
                 const char *data, size_t len, const json_t *root) {
  if (strcmp(type, "error") == 0) {
    on_error(s, a, data, len, root);
    return;
  }
  int in = input_from_name(type);
  if (in < 0) return; /* ping, and event types added later */

  enum astate next = next_state[a->state][in];
  if (next == AS_NONE) {
    fail(s, a,
         in == AI_MESSAGE_STOP  ? "message_stop came before message_delta"
         : in == AI_BLOCK_DELTA ? "a content block delta came outside its block"
         : in == AI_BLOCK_START ? "a content block started out of order"
                                : "an event came out of order");
    return;
  }
  /* Blocks come one at a time, numbered from 0: anything else is a stream we
   * would misread, so it is refused rather than guessed at. */
  if (in == AI_BLOCK_START || in == AI_BLOCK_DELTA || in == AI_BLOCK_STOP) {
    const json_t *index = json_object_get(root, "index");
    size_t want = in == AI_BLOCK_START ? a->n_blocks : a->n_blocks - 1;
    if (!json_is_integer(index) || json_integer_value(index) < 0 ||
        (uint64_t)json_integer_value(index) != (uint64_t)want) {
      fail(s, a,
           in == AI_BLOCK_START ? "a content block started out of order"
                                : "a content block event for a block that is not open");
      return;
    }
  }
  if (in == AI_MESSAGE_STOP && !a->have_stop) {
    fail(s, a, "message_stop came without a stop reason");
    return;
  }
  set_state(a, next);
  switch ((enum ainput)in) {
  case AI_MESSAGE_START:
    on_message_start(a, root);
    break;
  case AI_BLOCK_START:
    a->n_blocks++;
    on_block_start(s, a, root);
    break;
  case AI_BLOCK_DELTA:
    on_block_delta(s, a, root);
    break;
  case AI_BLOCK_STOP:
    on_block_stop(s, a);
    break;
  case AI_MESSAGE_DELTA:
    on_message_delta(s, a, root);
    break;
  case AI_MESSAGE_STOP: {
    struct model_event ev = {.kind = MODEL_EV_STOP, .stop = a->stop};
    provider_emit(s, &ev);
    break;
  }
  case AI_N:
    break;
  }
}

void anthropic_stream_event(struct provider_stream *s, const char *event,
                            const char *data, size_t len) {
  struct anthropic *a = s->impl;
  if (a->state == AS_DONE || a->state == AS_FAILED) return;
  json_error_t jerr;
  /* NULs are let in: a text delta may hold one, and text goes on with its len. */
  json_t *root = json_loadb(data, len, JSON_ALLOW_NUL, &jerr);
  if (!json_is_object(root)) {
    json_decref(root);
    /* Only the events of the API's stream must be JSON: a proxy's keep-alive
     * (an unnamed "message") or an event type added later is passed over, as
     * such events are when their data is JSON. */
    bool known = strcmp(event, "error") == 0 || strcmp(event, "ping") == 0 ||
                 input_from_name(event) >= 0;
    if (known) fail(s, a, "an event's data is not a JSON object");
    return;
  }
  /* The data names its own type; the SSE event name is the same where both are
   * sent, and is what is left when a proxy drops the data's. */
  const json_t *type = get_string(root, "type");
  step(s, a, type != NULL ? json_string_value(type) : event, data, len, root);
  json_decref(root);
  assert(check_invariants(a));
}

void anthropic_stream_finish(struct provider_stream *s) {
  /* Nothing to flush: a stream that ended before message_stop is reported by
   * provider_stream_finish(), which sees no STOP. */
  (void)s;
}

/* ------------------------------------------------------- the request body */

/* Appends the parsed messages; false when one is not a JSON object or memory ran
 * out. */
static bool add_messages(json_t *messages, const struct provider_request *req) {
  for (size_t i = 0; i < req->n_messages; i++) {
    json_error_t jerr;
    /* A tool's output may hold a NUL, which convo.c writes as \u0000. */
    json_t *msg = json_loads(req->messages[i], JSON_ALLOW_NUL, &jerr);
    if (!json_is_object(msg)) {
      json_decref(msg);
      return false;
    }
    if (json_array_append_new(messages, msg) != 0) return false;
  }
  return true;
}

/* Whether the API takes id as a tool_use id: ^[a-zA-Z0-9_-]+$. */
static bool id_taken(const char *id) {
  if (id[0] == '\0') return false;
  for (const char *p = id; *p != '\0'; p++) /* ASCII whatever the locale */
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
          (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
      return false;
  return true;
}

/* The id field of a call's block or of its result's; NULL for other blocks. */
static const char *call_id_key(json_t *block) {
  const char *type = json_string_value(json_object_get(block, "type"));
  if (type == NULL) return NULL;
  if (strcmp(type, "tool_use") == 0) return "id";
  if (strcmp(type, "tool_result") == 0) return "tool_use_id";
  return NULL;
}

/* Gives every call an id the API takes, unique in the request, and its result
 * the same: a session that ran on another provider holds ids such as Kimi's
 * "functions.clock:0", numbered per reply and so repeated from turn to turn,
 * and the API refuses every request that holds one. A call's results are in
 * the message right after its reply (convo_repair saw to it); what is left
 * over there (a second result for one call, or one for no call) would be
 * refused too and goes, and a call that finds no result (two calls of one id
 * given one) is given one. Returns false when out of memory. */
static bool mend_call_ids(json_t *messages) {
  json_t *used = json_object();   /* every id in the request: true once a call has it */
  json_t *renamed = json_array(); /* the last message's calls: [old, new], in order */
  bool ok = used != NULL && renamed != NULL;
  /* A made-up id is none the request holds already: a call that has one keeps it. */
  for (size_t i = 0; ok && i < json_array_size(messages); i++) {
    json_t *blocks = json_object_get(json_array_get(messages, i), "content");
    for (size_t j = 0; ok && j < json_array_size(blocks); j++) {
      json_t *b = json_array_get(blocks, j);
      const char *key = call_id_key(b);
      const char *id = key != NULL ? json_string_value(json_object_get(b, key)) : NULL;
      if (id != NULL) ok = json_object_set_new(used, id, json_false()) == 0;
    }
  }
  size_t made = 0;
  for (size_t i = 0; ok && i < json_array_size(messages); i++) {
    json_t *blocks = json_object_get(json_array_get(messages, i), "content");
    json_t *calls = json_array();
    ok = calls != NULL;
    for (size_t j = 0; ok && j < json_array_size(blocks);) {
      json_t *b = json_array_get(blocks, j);
      const char *key = call_id_key(b);
      const char *id = key != NULL ? json_string_value(json_object_get(b, key)) : NULL;
      if (id != NULL && strcmp(key, "tool_use_id") == 0) {
        /* The first call of its id not yet answered, or none: then it goes. */
        size_t k = 0;
        while (k < json_array_size(renamed) &&
               strcmp(json_string_value(json_array_get(json_array_get(renamed, k), 0)),
                      id) != 0)
          k++;
        if (k == json_array_size(renamed)) {
          ok = json_array_remove(blocks, j) == 0;
          continue;
        }
        ok =
            json_object_set(b, key, json_array_get(json_array_get(renamed, k), 1)) == 0 &&
            json_array_remove(renamed, k) == 0;
      } else if (id != NULL) {
        char fresh[48];
        const char *now = id;
        if (!id_taken(id) || json_is_true(json_object_get(used, id))) {
          do
            snprintf(fresh, sizeof fresh, "toolu_turnd_%zu", ++made);
          while (json_object_get(used, fresh) != NULL);
          now = fresh;
        }
        ok = json_array_append_new(calls, json_pack("[s, s]", id, now)) == 0 &&
             json_object_set_new(used, now, json_true()) == 0 &&
             (now == id || json_object_set_new(b, key, json_string(now)) == 0);
      }
      j++;
    }
    /* The last reply's calls this message did not answer get a result here. */
    const char *role =
        json_string_value(json_object_get(json_array_get(messages, i), "role"));
    bool user = role != NULL && strcmp(role, "user") == 0;
    for (size_t k = 0; ok && user && k < json_array_size(renamed); k++)
      ok = json_array_append_new(
               blocks,
               json_pack("{s:s, s:O, s:s, s:b}", "type", "tool_result", "tool_use_id",
                         json_array_get(json_array_get(renamed, k), 1), "content",
                         "no result was kept for this call", "is_error", true)) == 0;
    json_decref(renamed);
    renamed = calls;
  }
  json_decref(renamed);
  json_decref(used);
  return ok;
}

static json_t *tool_json(const struct provider_tool *tool) {
  json_t *schema = provider_schema_shown(tool->input_schema);
  json_t *t = json_object();
  bool ok = json_is_object(schema) && t != NULL &&
            json_object_set_new(t, "name", json_string(tool->name)) == 0 &&
            (tool->description == NULL ||
             json_object_set_new(t, "description", json_string(tool->description)) == 0);
  if (ok) {
    ok = json_object_set_new(t, "input_schema", schema) == 0;
    schema = NULL; /* set_new took it, even on failure */
  }
  json_decref(schema);
  if (!ok) {
    json_decref(t);
    return NULL;
  }
  return t;
}

char *provider_anthropic_body(const struct provider_request *req) {
  json_t *root = json_object();
  json_t *messages = json_array();
  bool ok = root != NULL && messages != NULL &&
            json_object_set_new(root, "model", json_string(req->model)) == 0 &&
            json_object_set_new(root, "max_tokens", json_integer(req->max_tokens)) == 0 &&
            json_object_set_new(root, "stream", json_true()) == 0;
  /* The API refuses an empty system text, and it means no prompt anyway. */
  if (ok && req->system != NULL && req->system[0] != '\0')
    ok = json_object_set_new(root, "system", json_string(req->system)) == 0;
  if (ok) ok = add_messages(messages, req) && mend_call_ids(messages);
  if (ok) {
    ok = json_object_set_new(root, "messages", messages) == 0;
    messages = NULL;
  }
  if (ok && req->n_tools > 0) {
    json_t *tools = json_array();
    ok = json_object_set_new(root, "tools", tools) == 0;
    for (size_t i = 0; ok && i < req->n_tools; i++)
      ok = json_array_append_new(tools, tool_json(&req->tools[i])) == 0;
  }
  char *body = ok ? json_dumps_shortest(root, JSON_COMPACT) : NULL;
  json_decref(messages);
  json_decref(root);
  return body;
}
