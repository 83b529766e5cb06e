/* OpenAI-compatible Chat Completions (OpenAI, llama.cpp's server, Ollama, vLLM):
 * the stream decoder and the request body. Only choice 0 is read. Tool calls are
 * handed out in the order they first came, each TOOL_START before any of its arguments,
 * and all TOOL_ENDs at the finish_reason. Memory is bounded: OPENAI_MAX_CALLS calls of at
 * most OPENAI_ARGS_CAP bytes of arguments each.
 *
 * The answer:
 *
 *   STREAMING --finish_reason--> FINISHED --[DONE] or the end--> DONE
 *       |                            |
 *       +----an error chunk, or------+----------------------------> DONE (ERROR)
 *            a chunk it refuses
 *
 *   STREAMING -> STREAMING [on_choice, on_usage: a delta, usage]
 *   STREAMING -> FINISHED  [on_choice: finish_reason; every call has ended]
 *   FINISHED  -> FINISHED  [on_usage: usage; on_choice: finish_reason again]
 *   FINISHED  -> DONE      [openai_stream_event: [DONE]; openai_stream_finish]
 *   any       -> DONE      [fail(): an error chunk or a refused input]
 *   STREAMING: no call has ended. FINISHED: every call seen has ended and `stop`
 *   says why the reply stopped. DONE: STOP or ERROR was handed out (s->done).
 *
 * A tool call: NONE -> PENDING -> STARTED -> ENDED. PENDING holds back its START
 * until arguments arrive (or the reply finishes), so a name that comes in pieces
 * is whole when it is handed out; its arguments wait in `args` meanwhile. */
#include "json_short.h"
#include "provider_openai.h"

#include "turn/turn.h"

#include <assert.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define OPENAI_MAX_CALLS 64
#define OPENAI_ARGS_CAP  (1u << 20) /* per call: far past any tool's input */
/* An id or a name: OpenAI's names stop at 64 bytes and ids run to about 50. */
#define OPENAI_NAME_MAX 255

enum oa_state {
  OA_REFUSED, /* 0: a missing table entry refuses the input */
  OA_STREAMING,
  OA_FINISHED,
  OA_DONE,
  OA_N_STATES
};

enum oa_input {
  OA_IN_DELTA, /* a delta that says something */
  OA_IN_FINISH,
  OA_IN_USAGE,
  OA_IN_MARK, /* the "[DONE]" marker */
  OA_IN_END,  /* the answer's bytes ended */
  OA_IN_ERROR,
  OA_N_INPUTS
};

static const unsigned char oa_next[OA_N_STATES][OA_N_INPUTS] = {
    [OA_STREAMING] = {[OA_IN_DELTA] = OA_STREAMING,
                      [OA_IN_FINISH] = OA_FINISHED,
                      [OA_IN_USAGE] = OA_STREAMING,
                      [OA_IN_ERROR] = OA_DONE},
    /* Servers that never send [DONE] are done when the bytes end. */
    [OA_FINISHED] = {[OA_IN_FINISH] = OA_FINISHED,
                     [OA_IN_USAGE] = OA_FINISHED,
                     [OA_IN_MARK] = OA_DONE,
                     [OA_IN_END] = OA_DONE,
                     [OA_IN_ERROR] = OA_DONE},
};

/* Why an input is refused; in DONE nothing is handed out anyway. */
static const char *const oa_refusal[OA_N_INPUTS] = {
    [OA_IN_DELTA] = "the stream sent a delta after its finish_reason",
    [OA_IN_FINISH] = "the stream went on after its end",
    [OA_IN_USAGE] = "the stream went on after its end",
    [OA_IN_MARK] = "the stream sent [DONE] without a finish_reason",
    [OA_IN_END] = "the stream ended before a finish_reason",
    [OA_IN_ERROR] = "the stream went on after its end",
};

enum call_state { CALL_NONE, CALL_PENDING, CALL_STARTED, CALL_ENDED };

struct call {
  enum call_state state;
  json_int_t server_index;        /* the "index" it came with, or -1 */
  char id[OPENAI_NAME_MAX + 1];   /* NUL-terminated; "" until one arrives */
  char name[OPENAI_NAME_MAX + 1]; /* NUL-terminated; grows while PENDING */
  size_t name_len;                /* PENDING may have 0; STARTED has > 0 */
  size_t ordinal; /* STARTED, ENDED: the index its events carry (see start_call) */
  turn_buf args;  /* every argument piece so far; cap OPENAI_ARGS_CAP. Handed out
                     as they came once STARTED; all at once when it starts. */
};

struct openai {
  enum oa_state state;
  enum model_stop stop; /* FINISHED: why the reply stopped */
  struct call *calls;   /* [0..n_calls), in the order they first came */
  size_t n_calls;       /* <= OPENAI_MAX_CALLS */
  size_t n_started;     /* calls started so far: the next one's ordinal */
};

static void set_state(struct openai *o, enum oa_state next) {
  o->state = next;
}

/* A call only moves forward: NONE -> PENDING -> STARTED -> ENDED. */
static void call_set_state(struct call *c, enum call_state next) {
  assert(next == c->state + 1);
  c->state = next;
}

static inline bool check_invariants(const struct openai *o) {
  if (o->n_calls > OPENAI_MAX_CALLS) return false;
  for (size_t i = 0; i < o->n_calls; i++) {
    const struct call *c = &o->calls[i];
    if (o->state == OA_STREAMING && c->state == CALL_ENDED) return false;
    if (o->state == OA_FINISHED && c->state != CALL_NONE && c->state != CALL_ENDED)
      return false;
    if (c->state >= CALL_STARTED && (c->name_len == 0 || c->ordinal >= o->n_started))
      return false;
  }
  return o->n_started <= o->n_calls;
}

static void fail(struct provider_stream *s, struct openai *o, const char *message) {
  set_state(o, OA_DONE);
  provider_fail(s, message);
}

/* Returns false when the input is refused; the stream has then failed. */
static bool step(struct provider_stream *s, struct openai *o, enum oa_input in) {
  enum oa_state next = oa_next[o->state][in];
  if (next == OA_REFUSED) {
    fail(s, o, oa_refusal[in]);
    return false;
  }
  set_state(o, next);
  assert(check_invariants(o));
  return true;
}

void *openai_stream_new(void) {
  struct openai *o = calloc(1, sizeof *o);
  if (o == NULL) return NULL;
  set_state(o, OA_STREAMING);
  return o;
}

void openai_stream_free(void *impl) {
  struct openai *o = impl;
  if (o == NULL) return;
  for (size_t i = 0; i < o->n_calls; i++)
    turn_buf_fini(&o->calls[i].args);
  free(o->calls);
  free(o);
}

static void emit_piece(struct provider_stream *s, enum model_event_kind kind,
                       size_t index, const char *text, size_t len) {
  struct model_event ev = {.kind = kind, .index = index, .text = text, .len = len};
  provider_emit(s, &ev);
}

/* ------------------------------------------------------------- tool calls */

/* Hands out call i's START and then, at once, the arguments it held back. The
 * events of the reply's calls are numbered 0, 1, 2... in the order they start,
 * whatever the server's indexes: some servers begin at 1 or leave gaps. */
static void start_call(struct provider_stream *s, struct openai *o, size_t i) {
  struct call *c = &o->calls[i];
  assert(c->state == CALL_PENDING && c->name_len > 0);
  c->ordinal = o->n_started++;
  /* Some servers send no id: it stays "", and the agent makes one up that is
   * unique in the turn (a reply's ordinal would come again in the next reply). */
  struct model_event ev = {
      .kind = MODEL_EV_TOOL_START, .index = c->ordinal, .id = c->id, .name = c->name};
  provider_emit(s, &ev);
  call_set_state(c, CALL_STARTED);
  if (c->args.len > 0)
    emit_piece(s, MODEL_EV_TOOL_DELTA, c->ordinal, c->args.data, c->args.len);
}

/* Starts every pending call up to slot `last`, in order. A call still without a
 * name holds back itself and those after it, since its name may be on the way;
 * at the finish (`force`) it never will be, and that is an error. Returns false
 * when the stream failed. */
static bool start_calls(struct provider_stream *s, struct openai *o, size_t last,
                        bool force) {
  for (size_t i = 0; i <= last && i < o->n_calls; i++) {
    struct call *c = &o->calls[i];
    if (c->state != CALL_PENDING) continue;
    if (c->name_len == 0) {
      if (!force) return true;
      fail(s, o, "the stream sent a tool call without a name");
      return false;
    }
    start_call(s, o, i);
  }
  return true;
}

/* The call in `slot`, made (NONE, with server_index) when slot is n_calls.
 * NULL when past the limit or out of memory; the stream has then failed. */
static struct call *call_at(struct provider_stream *s, struct openai *o, size_t slot,
                            json_int_t server_index) {
  if (slot < o->n_calls) return &o->calls[slot];
  if (o->n_calls == OPENAI_MAX_CALLS) {
    fail(s, o, "the stream sent too many tool calls");
    return NULL;
  }
  struct call *calls = realloc(o->calls, (o->n_calls + 1) * sizeof *calls);
  if (calls == NULL) {
    fail(s, o, "out of memory");
    return NULL;
  }
  o->calls = calls;
  struct call *c = &calls[o->n_calls++];
  memset(c, 0, sizeof *c);
  turn_buf_init(&c->args, OPENAI_ARGS_CAP, NULL);
  c->server_index = server_index;
  return c;
}

/* Which call a tool_calls entry belongs to, into *slot (n_calls: a new one), and
 * the "index" it carries into *server_index (-1: none). An id seen before is its
 * call. Else the index says: the latest call that came with it, unless the
 * entry brings a name and an id and that call has another id (Ollama numbers
 * every call 0 and sends each whole, name and id). A piece without a name is
 * more of the latest call even under a new id (some servers change the id
 * between a call's pieces). A server that leaves "index" out means a new call
 * with a new id, or the last call when there is no id either. False when the
 * index is not a count. */
static bool call_index(const struct openai *o, json_t *tc, size_t *slot,
                       json_int_t *server_index) {
  json_t *index = json_object_get(tc, "index");
  if (json_is_integer(index) && json_integer_value(index) >= 0)
    *server_index = json_integer_value(index);
  else if (index == NULL || json_is_null(index))
    *server_index = -1;
  else
    return false;
  const char *id = json_string_value(json_object_get(tc, "id"));
  bool has_id = id != NULL && id[0] != '\0';
  for (size_t i = 0; has_id && i < o->n_calls; i++)
    if (strcmp(o->calls[i].id, id) == 0) {
      *slot = i;
      return true;
    }
  if (*server_index >= 0) {
    bool named =
        json_string_length(json_object_get(json_object_get(tc, "function"), "name")) > 0;
    *slot = o->n_calls;
    for (size_t i = o->n_calls; i-- > 0;)
      if (o->calls[i].server_index == *server_index) {
        if (!has_id || !named || o->calls[i].id[0] == '\0') *slot = i;
        break;
      }
    return true;
  }
  *slot = has_id || o->n_calls == 0 ? o->n_calls : o->n_calls - 1;
  return true;
}

/* Copies an id or a name piece into dst[*len..]. Returns false when it would
 * pass OPENAI_NAME_MAX or holds a NUL, which a NUL-terminated event cannot carry. */
static bool append_name(char *dst, size_t *len, json_t *piece) {
  size_t n = json_string_length(piece);
  const char *p = json_string_value(piece);
  if (n > OPENAI_NAME_MAX - *len || memchr(p, '\0', n) != NULL) return false;
  memcpy(dst + *len, p, n);
  *len += n;
  dst[*len] = '\0';
  return true;
}

static bool is_text(json_t *v) {
  return json_is_string(v) || v == NULL || json_is_null(v);
}

/* One entry of delta.tool_calls. Returns false when the stream failed. */
static bool on_tool_delta(struct provider_stream *s, struct openai *o, json_t *tc) {
  json_t *fn = json_object_get(tc, "function");
  json_t *id = json_object_get(tc, "id");
  json_t *name = json_object_get(fn, "name");
  json_t *args = json_object_get(fn, "arguments");
  size_t slot;
  json_int_t server_index;
  if (!json_is_object(tc) || !(fn == NULL || json_is_null(fn) || json_is_object(fn)) ||
      !is_text(id) || !is_text(name) || !(is_text(args) || json_is_object(args)) ||
      !call_index(o, tc, &slot, &server_index)) {
    fail(s, o, "the stream sent a malformed tool call");
    return false;
  }
  struct call *c = call_at(s, o, slot, server_index);
  if (c == NULL) return false;
  if (c->state == CALL_NONE) call_set_state(c, CALL_PENDING);

  /* Only the first id counts: some servers repeat it in every delta. */
  size_t id_len = 0;
  if (c->id[0] == '\0' && json_string_length(id) > 0 &&
      !append_name(c->id, &id_len, id)) {
    fail(s, o, "the stream sent an overlong tool call id");
    return false;
  }
  /* Most servers send the name once; some send it in pieces, and some repeat
   * the whole name in every delta, so a piece equal to the name so far is a
   * repeat, not a piece. */
  if (json_string_length(name) > 0 && strcmp(json_string_value(name), c->name) != 0) {
    if (c->state != CALL_PENDING) {
      fail(s, o, "the stream changed a tool call's name after it began");
      return false;
    }
    if (!append_name(c->name, &c->name_len, name)) {
      fail(s, o, "the stream sent an overlong tool call name");
      return false;
    }
  }

  char *dumped = json_is_object(args) ? json_dumps(args, JSON_COMPACT) : NULL;
  const char *piece = dumped != NULL ? dumped : json_string_value(args);
  size_t len = dumped != NULL ? strlen(dumped) : json_string_length(args);
  if (json_is_object(args) && dumped == NULL) {
    fail(s, o, "out of memory");
    return false;
  }
  int rv = turn_buf_append(&c->args, piece, len);
  free(dumped);
  if (rv != TURN_OK) {
    fail(s, o,
         rv == TURN_E_TOOBIG ? "the stream sent tool call arguments over 1 MiB"
                             : "out of memory");
    return false;
  }
  if (len == 0) return true;
  if (c->state == CALL_STARTED) {
    emit_piece(s, MODEL_EV_TOOL_DELTA, c->ordinal, c->args.data + c->args.len - len, len);
    return true;
  }
  /* Arguments mean the name is whole. */
  return start_calls(s, o, slot, false);
}

/* ----------------------------------------------------------------- chunks */

static enum model_stop stop_from(const char *reason, bool called) {
  /* Some servers (and OpenAI itself under tool_choice "required") say "stop"
   * after tool calls; the calls still wait for their results. */
  if (strcmp(reason, "stop") == 0)
    return called ? MODEL_STOP_TOOL_USE : MODEL_STOP_END_TURN;
  if (strcmp(reason, "tool_calls") == 0 || strcmp(reason, "function_call") == 0)
    return MODEL_STOP_TOOL_USE;
  if (strcmp(reason, "length") == 0) return MODEL_STOP_MAX_TOKENS;
  if (strcmp(reason, "content_filter") == 0) return MODEL_STOP_REFUSED;
  return MODEL_STOP_OTHER;
}

/* The reply finished: every call starts if it has not and ends, in order.
 * Returns false when the stream failed. */
static bool on_finish(struct provider_stream *s, struct openai *o, const char *reason) {
  if (o->state == OA_STREAMING) {
    if (o->n_calls > 0 && !start_calls(s, o, o->n_calls - 1, true)) return false;
    bool called = false;
    for (size_t i = 0; i < o->n_calls; i++) {
      struct call *c = &o->calls[i];
      if (c->state != CALL_STARTED) continue;
      emit_piece(s, MODEL_EV_TOOL_END, c->ordinal, c->args.len > 0 ? c->args.data : "",
                 c->args.len);
      call_set_state(c, CALL_ENDED);
      called = true;
    }
    o->stop = stop_from(reason, called);
  }
  /* A repeated finish_reason changes nothing. */
  return step(s, o, OA_IN_FINISH);
}

static bool says_something(json_t *v) {
  return json_string_length(v) > 0 || json_array_size(v) > 0;
}

/* Choice 0 of a chunk. Returns false when the stream failed. */
static bool on_choice(struct provider_stream *s, struct openai *o, json_t *choice) {
  json_t *delta = json_object_get(choice, "delta");
  json_t *text = json_object_get(delta, "content");
  json_t *refusal = json_object_get(delta, "refusal");
  /* llama.cpp and older vLLM say reasoning_content; newer vLLM and others say
   * reasoning, and some send both with the same text. */
  json_t *reasoning = json_object_get(delta, "reasoning_content");
  if (!json_is_string(reasoning)) reasoning = json_object_get(delta, "reasoning");
  json_t *tools = json_object_get(delta, "tool_calls");
  json_t *finish = json_object_get(choice, "finish_reason");
  if (!json_is_object(choice) ||
      !(delta == NULL || json_is_null(delta) || json_is_object(delta)) ||
      !is_text(text) || !is_text(refusal) || !is_text(reasoning) ||
      !(tools == NULL || json_is_null(tools) || json_is_array(tools)) ||
      !is_text(finish)) {
    fail(s, o, "the stream sent a malformed chunk");
    return false;
  }
  /* Empty deltas (the first one's role, keep-alives) say nothing, and a server
   * may send one after the finish_reason. */
  if (says_something(reasoning) || says_something(text) || says_something(refusal) ||
      says_something(tools)) {
    if (!step(s, o, OA_IN_DELTA)) return false;
    if (says_something(reasoning))
      emit_piece(s, MODEL_EV_REASONING, 0, json_string_value(reasoning),
                 json_string_length(reasoning));
    if (says_something(text))
      emit_piece(s, MODEL_EV_TEXT, 0, json_string_value(text), json_string_length(text));
    /* OpenAI's refusal is what the user gets to read instead of an answer. */
    if (says_something(refusal))
      emit_piece(s, MODEL_EV_TEXT, 0, json_string_value(refusal),
                 json_string_length(refusal));
    for (size_t i = 0; i < json_array_size(tools); i++)
      if (!on_tool_delta(s, o, json_array_get(tools, i))) return false;
  }
  /* Some servers (older Ollama, sglang) say "" where they mean null. */
  if (json_string_length(finish) > 0) return on_finish(s, o, json_string_value(finish));
  return true;
}

static bool on_usage(struct provider_stream *s, struct openai *o, json_t *usage) {
  if (!json_is_object(usage)) {
    fail(s, o, "the stream sent malformed usage");
    return false;
  }
  if (!step(s, o, OA_IN_USAGE)) return false;
  json_int_t in = json_integer_value(json_object_get(usage, "prompt_tokens"));
  json_int_t out = json_integer_value(json_object_get(usage, "completion_tokens"));
  struct model_event ev = {.kind = MODEL_EV_USAGE,
                           .input_tokens = in > 0 ? (uint64_t)in : 0,
                           .output_tokens = out > 0 ? (uint64_t)out : 0};
  provider_emit(s, &ev);
  return true;
}

static bool says_rate_limit(json_t *v) {
  if (json_is_integer(v)) return json_integer_value(v) == 429;
  const char *text = json_string_value(v);
  return text != NULL && (strstr(text, "rate_limit") != NULL || strcmp(text, "429") == 0);
}

/* An error the server sent inside the 2xx stream: {"error": {...}}, from some
 * servers {"error": "text"}, or an "error" event's own object (err is then the
 * chunk; NULL when its data is not JSON). */
static void on_error(struct provider_stream *s, struct openai *o, json_t *err,
                     const char *data, size_t len) {
  if (!step(s, o, OA_IN_ERROR)) return;
  json_t *message = json_is_string(err) ? err : json_object_get(err, "message");
  /* The same safe text (cut, no control characters) as an error answer gets;
   * it finds the message in the chunk as it does in a body. */
  char *text =
      json_string_length(message) > 0 ? provider_error_message(200, data, len) : NULL;
  const char *said = text != NULL ? text : "the provider sent an error";
  struct model_event ev = {
      .kind = MODEL_EV_ERROR,
      .text = said,
      .len = strlen(said),
      .throttled = says_rate_limit(json_object_get(err, "code")) ||
                   says_rate_limit(json_object_get(err, "type")) ||
                   says_rate_limit(json_object_get(err, "status")),
      .retry_after_s = -1,
  };
  provider_emit(s, &ev);
  free(text);
}

/* Choice 0; NULL when the chunk has none (the usage chunk has none at all). */
static json_t *choice_zero(json_t *choices) {
  for (size_t i = 0; i < json_array_size(choices); i++) {
    json_t *c = json_array_get(choices, i);
    json_t *index = json_object_get(c, "index");
    if (index == NULL || json_integer_value(index) == 0) return c;
  }
  return NULL;
}

static void on_chunk(struct provider_stream *s, struct openai *o, bool error_event,
                     const char *data, size_t len) {
  /* \u0000 is valid JSON; the events carry lengths, so it does no harm. */
  json_t *root = json_loadb(data, len, JSON_ALLOW_NUL, NULL);
  if (root == NULL && error_event) {
    on_error(s, o, NULL, data, len); /* its data is the server's, not ours to pass on */
    return;
  }
  if (!json_is_object(root)) {
    fail(s, o, "the stream sent a chunk that is not a JSON object");
    json_decref(root);
    return;
  }
  json_t *err = json_object_get(root, "error");
  json_t *choices = json_object_get(root, "choices");
  json_t *usage = json_object_get(root, "usage");
  json_t *choice = choice_zero(choices);
  if (err != NULL && !json_is_null(err))
    on_error(s, o, err, data, len);
  else if (error_event)
    on_error(s, o, root, data, len);
  else if (!(choices == NULL || json_is_null(choices) || json_is_array(choices)))
    fail(s, o, "the stream sent a malformed chunk");
  else if ((choice == NULL || on_choice(s, o, choice)) && usage != NULL &&
           !json_is_null(usage))
    on_usage(s, o, usage);
  json_decref(root);
}

void openai_stream_event(struct provider_stream *s, const char *event, const char *data,
                         size_t len) {
  struct openai *o = s->impl;
  if (s->done || o->state == OA_DONE) return;
  bool error_event = event != NULL && strcmp(event, "error") == 0;
  /* Chat Completions sends unnamed events only; others (a proxy's "ping") are
   * not ours to read. */
  if (event != NULL && event[0] != '\0' && strcmp(event, "message") != 0 && !error_event)
    return;
  if (len == 0 && !error_event) return; /* a keep-alive */
  if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
    if (!step(s, o, OA_IN_MARK)) return;
    struct model_event ev = {.kind = MODEL_EV_STOP, .stop = o->stop};
    provider_emit(s, &ev);
    return;
  }
  on_chunk(s, o, error_event, data, len);
}

void openai_stream_finish(struct provider_stream *s) {
  struct openai *o = s->impl;
  if (s->done || o->state == OA_DONE) return;
  if (!step(s, o, OA_IN_END)) return;
  struct model_event ev = {.kind = MODEL_EV_STOP, .stop = o->stop};
  provider_emit(s, &ev);
}

/* ------------------------------------------------------------------- body */

static bool put(json_t *obj, const char *key, json_t *value) {
  return json_object_set_new(obj, key, value) == 0; /* takes value, even NULL */
}

static bool push(json_t *arr, json_t *value) {
  return json_array_append_new(arr, value) == 0;
}

static bool is_type(json_t *block, const char *type) {
  const char *t = json_string_value(json_object_get(block, "type"));
  return t != NULL && strcmp(t, type) == 0;
}

/* The text blocks of content (an array of blocks, or a plain string) joined by
 * blank lines, into *out; *out is NULL when there are none. Returns false when
 * out of memory. */
static bool join_text(json_t *content, json_t **out) {
  *out = NULL;
  if (json_is_string(content)) return (*out = json_copy(content)) != NULL;
  turn_buf b;
  turn_buf_init(&b, SIZE_MAX, NULL);
  bool any = false, ok = true;
  for (size_t i = 0; ok && i < json_array_size(content); i++) {
    json_t *block = json_array_get(content, i);
    json_t *text = json_object_get(block, "text");
    if (!is_type(block, "text") || !json_is_string(text)) continue;
    if (any) ok = turn_buf_append(&b, "\n\n", 2) == TURN_OK;
    ok = ok && turn_buf_append(&b, json_string_value(text), json_string_length(text)) ==
                   TURN_OK;
    any = true;
  }
  /* json_stringn refuses a NULL pointer even for 0 bytes. */
  if (ok && any) *out = b.len > 0 ? json_stringn(b.data, b.len) : json_string("");
  turn_buf_fini(&b);
  return ok && (!any || *out != NULL);
}

static json_t *text_message(const char *role, json_t *content) {
  json_t *m = json_object();
  if (m == NULL) {
    json_decref(content);
    return NULL;
  }
  if (!put(m, "role", json_string(role)) || !put(m, "content", content)) {
    json_decref(m);
    return NULL;
  }
  return m;
}

/* A user message: one "tool" message per tool_result, then its text, if any.
 * Returns false when a block is malformed or out of memory. */
static bool add_user(json_t *out, json_t *content) {
  for (size_t i = 0; i < json_array_size(content); i++) {
    json_t *block = json_array_get(content, i);
    if (!is_type(block, "tool_result")) continue;
    json_t *id = json_object_get(block, "tool_use_id");
    json_t *result;
    if (!json_is_string(id) || !join_text(json_object_get(block, "content"), &result))
      return false;
    json_t *m = text_message("tool", result != NULL ? result : json_string(""));
    if (m == NULL || !put(m, "tool_call_id", json_copy(id))) {
      json_decref(m);
      return false;
    }
    if (!push(out, m)) return false; /* push took m */
  }
  json_t *text;
  if (!join_text(content, &text)) return false;
  return text == NULL || push(out, text_message("user", text));
}

static json_t *tool_call(json_t *block) {
  json_t *id = json_object_get(block, "id");
  json_t *name = json_object_get(block, "name");
  json_t *input = json_object_get(block, "input");
  if (!json_is_string(id) || !json_is_string(name)) return NULL;
  char *args =
      input != NULL ? json_dumps_shortest(input, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
  json_t *call = json_pack("{s:O, s:s, s:{s:O, s:s}}", "id", id, "type", "function",
                           "function", "name", name, "arguments", args ? args : "{}");
  free(args);
  return call;
}

/* An assistant message: its text and its tool calls; thinking is not sent back.
 * Returns false when a block is malformed or out of memory. */
static bool add_assistant(json_t *out, json_t *content) {
  json_t *text, *calls = json_array();
  if (calls == NULL || !join_text(content, &text)) {
    json_decref(calls);
    return false;
  }
  for (size_t i = 0; i < json_array_size(content); i++) {
    json_t *block = json_array_get(content, i);
    if (is_type(block, "tool_use") && !push(calls, tool_call(block))) {
      json_decref(calls);
      json_decref(text);
      return false;
    }
  }
  /* A reply that was only thinking leaves nothing to send; Chat Completions
   * refuses an assistant message without content or tool calls. */
  if (text == NULL && json_array_size(calls) == 0) {
    json_decref(calls);
    return true;
  }
  json_t *m = text_message("assistant", text != NULL ? text : json_null());
  if (m != NULL && json_array_size(calls) > 0 &&
      !put(m, "tool_calls", json_incref(calls))) {
    json_decref(m);
    m = NULL;
  }
  json_decref(calls);
  return push(out, m); /* takes m; fails on NULL */
}

static bool add_message(json_t *out, const char *message) {
  /* A tool's output or the model's text may hold a NUL, which convo.c writes as
   * \u0000. */
  json_t *m = json_loads(message, JSON_ALLOW_NUL, NULL);
  const char *role = json_string_value(json_object_get(m, "role"));
  json_t *content = json_object_get(m, "content");
  bool ok = false;
  if (role != NULL && (json_is_array(content) || json_is_string(content))) {
    if (strcmp(role, "user") == 0)
      ok = add_user(out, content);
    else if (strcmp(role, "assistant") == 0)
      ok = add_assistant(out, content);
  }
  json_decref(m);
  return ok;
}

static json_t *tool_entry(const struct provider_tool *t) {
  json_t *schema = provider_schema_shown(t->input_schema);
  json_t *fn = json_object();
  json_t *tool = json_pack("{s:s, s:o}", "type", "function", "function", fn);
  bool ok =
      t->name != NULL && json_is_object(schema) && tool != NULL &&
      put(fn, "name", json_string(t->name)) &&
      (t->description == NULL || put(fn, "description", json_string(t->description))) &&
      put(fn, "parameters", json_incref(schema));
  json_decref(schema);
  if (!ok) {
    json_decref(tool);
    return NULL;
  }
  return tool;
}

bool provider_openai_is_own_api(const char *base_url) {
  static const char host[] = "api.openai.com";
  const char *p = strstr(base_url, "://");
  p = p != NULL ? p + 3 : base_url;
  size_t len = strcspn(p, "/:?#");
  return len == sizeof host - 1 && strncasecmp(p, host, len) == 0;
}

char *provider_openai_body(const struct provider_request *req) {
  const char *limit = req->max_completion_tokens ? "max_completion_tokens" : "max_tokens";
  json_t *body =
      json_pack("{s:s, s:b, s:{s:b}, s:I}", "model", req->model, "stream", 1,
                "stream_options", "include_usage", 1, limit, (json_int_t)req->max_tokens);
  json_t *messages = json_array();
  bool ok =
      body != NULL && messages != NULL && put(body, "messages", json_incref(messages));
  if (ok && req->system != NULL && req->system[0] != '\0')
    ok = push(messages, text_message("system", json_string(req->system)));
  for (size_t i = 0; ok && i < req->n_messages; i++)
    ok = add_message(messages, req->messages[i]);
  if (ok && req->n_tools > 0) {
    json_t *tools = json_array();
    ok = tools != NULL && put(body, "tools", json_incref(tools));
    for (size_t i = 0; ok && i < req->n_tools; i++)
      ok = push(tools, tool_entry(&req->tools[i]));
    json_decref(tools);
  }
  char *text = ok ? json_dumps_shortest(body, JSON_COMPACT) : NULL;
  json_decref(messages);
  json_decref(body);
  return text;
}
