/* The agent core: one explicit state machine per turn (see agent.h for the
 * states). Each agent_next() makes at most one event, so the shell decides when
 * to write it and the order checker sees events one by one.
 *
 *   TURN -> CALL -> MODEL* (-> RETRY -> CALL ...) -> TOOLS -> (APPROVAL) -> RUN_TOOL
 *        -> (PROGRESS*) -> TOOLS ... -> CALL (the next model call) ... -> END -> DONE
 *   any state but DONE -> END [agent_cancel, a failed model call, the call cap]
 *
 * Every move goes through set_state(), which refuses one next_states[] does
 * not list:
 *   TURN       -> CALL, END                    [next_action: a model, or none]
 *   CALL       -> MODEL                        [next_action: the call starts]
 *   MODEL      -> RETRY                        [take_model_event: throttled]
 *   MODEL      -> TOOLS                        [reply_done: its calls run]
 *   RETRY      -> MODEL                        [next_action: the call again]
 *   TOOLS      -> TOOLS                        [result: a call refused or skipped]
 *   TOOLS      -> APPROVAL, RUN_TOOL           [next_action: tier 2, or not]
 *   TOOLS      -> CALL, END                    [next_action: all calls done]
 *   APPROVAL   -> RUN_TOOL                     [next_action: decided or timed out]
 *   RUN_TOOL   -> SHELL_TOOL, PROGRESS         [run_tool: the owner's, count_slowly]
 *   RUN_TOOL, PROGRESS, SHELL_TOOL -> TOOLS    [result: the call is done]
 *   any state but TURN, DONE -> END, DONE      [close_call, end_turn: the end, cut
 *                                               short or not; END -> END per call]
 *   TURN -> END also [next_action: no script turn matches]; MODEL -> END also
 *   [reply_done, call_failed, take_model_event: the reply ends the turn]
 *
 * In MODEL, each model event (model.h) becomes at most one protocol event:
 * the script's come from its steps, played here; an external model's come from
 * agent_model_event, one at a time. */
#include "agent.h"

#include "json_short.h"
#include "schema.h"
#include "tools_demo.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MODEL_CALLS 20         /* by default: a model that calls tools forever ends */
#define HELD_CAP        (2u << 20) /* bytes of coalesced text held at once */
/* Bytes of text one event of a provider's carries. Escaped, a byte can take six
 * (\u001f), and a line must stay within the 1 MiB NDJSON readers take by default
 * (libturn's TURN_READER_DEFAULT_MAX_LINE, hence turn and turncheck). */
#define TEXT_EVENT_MAX (160u << 10)
/* How a tool call's input is read: any JSON value (the schema says which it may
 * be), not a key twice. */
#define INPUT_JSON_FLAGS (JSON_DECODE_ANY | JSON_REJECT_DUPLICATES)
#define CALL_IDS_CAP     (1u << 20) /* bytes of a turn's call ids kept to tell repeats */
#define MAX_RETRIES      5          /* throttled attempts of one call before it fails */
#define INBOX_CAP        (2u << 20) /* bytes of one model event's strings */

#define TO(s)  (1u << (s))
#define ENDING (TO(AGENT_S_END) | TO(AGENT_S_DONE)) /* a cancel, a failure, the end */
/* The states each state may move to (see the list above). */
static const unsigned next_states[AGENT_S_DONE + 1] = {
    [AGENT_S_TURN] = TO(AGENT_S_CALL) | TO(AGENT_S_END),
    [AGENT_S_CALL] = TO(AGENT_S_MODEL) | ENDING,
    [AGENT_S_MODEL] = TO(AGENT_S_RETRY) | TO(AGENT_S_TOOLS) | ENDING,
    [AGENT_S_RETRY] = TO(AGENT_S_MODEL) | ENDING,
    [AGENT_S_TOOLS] = TO(AGENT_S_TOOLS) | TO(AGENT_S_APPROVAL) | TO(AGENT_S_RUN_TOOL) |
                      TO(AGENT_S_CALL) | ENDING,
    [AGENT_S_APPROVAL] = TO(AGENT_S_RUN_TOOL) | ENDING,
    [AGENT_S_RUN_TOOL] =
        TO(AGENT_S_SHELL_TOOL) | TO(AGENT_S_PROGRESS) | TO(AGENT_S_TOOLS) | ENDING,
    [AGENT_S_PROGRESS] = TO(AGENT_S_TOOLS) | ENDING,
    [AGENT_S_SHELL_TOOL] = TO(AGENT_S_TOOLS) | ENDING,
    [AGENT_S_END] = ENDING,
    [AGENT_S_DONE] = 0,
};
#undef TO
#undef ENDING

/* The one place the state changes. Build with -DAGENT_TRACE to see every move
 * on stderr. */
static void set_state(struct agent *a, enum agent_state next) {
  assert(next_states[a->state] & (1u << next));
#ifdef AGENT_TRACE
  fprintf(stderr, "agent %s: %d -> %d\n", a->turn_id, (int)a->state, (int)next);
#endif
  a->state = next;
}

int agent_init(struct agent *a, const struct script_replies *replies,
               const char *user_text, const char *turn_id, const char *session_id,
               uint32_t approval_timeout_s) {
  memset(a, 0, sizeof *a);
  a->replies = replies;
  a->approval_timeout_s = approval_timeout_s;
  a->user_text = strdup(user_text);
  a->turn_id = strdup(turn_id);
  a->session_id = strdup(session_id);
  turn_arena_init(&a->arena, NULL);
  turn_buf_init(&a->inbox_text, INBOX_CAP, NULL);
  turn_buf_init(&a->held, HELD_CAP, NULL);
  turn_buf_init(&a->call_ids, CALL_IDS_CAP, NULL);
  a->limits.max_model_calls = MAX_MODEL_CALLS;
  convo_init(&a->convo);
  static_assert(AGENT_S_TURN == 0, "a zeroed agent starts its turn");
  a->stop = TURN_STOP_END_TURN;
  if (a->user_text == NULL || a->turn_id == NULL || a->session_id == NULL) {
    agent_fini(a);
    return -1;
  }
  return 0;
}

void agent_use_external_model(struct agent *a) {
  a->external = true;
}

void agent_set_tools(struct agent *a, const struct toolset *tools) {
  a->tools = tools;
}

void agent_set_guard(struct agent *a, const struct agent_guard *guard) {
  a->guard = guard;
}

static void tool_event_clear(struct agent *a) {
  free(a->tool_text);
  free(a->tool_result);
  a->tool_text = a->tool_result = NULL;
  a->tool_has_event = false;
}

int agent_tool_progress(struct agent *a, const char *message) {
  if (a->state != AGENT_S_SHELL_TOOL || a->tool_has_event) return -1;
  a->tool_text = strdup(message);
  a->tool_done = false;
  a->tool_has_event = a->tool_text != NULL;
  return a->tool_has_event ? 0 : -1;
}

int agent_tool_done(struct agent *a, bool ok, const char *summary,
                    const char *result_json) {
  if (a->state != AGENT_S_SHELL_TOOL || a->tool_has_event) return -1;
  a->tool_text = strdup(summary);
  a->tool_result = result_json != NULL ? strdup(result_json) : NULL;
  if (a->tool_text == NULL || (result_json != NULL && a->tool_result == NULL)) {
    /* Out of memory: the call still ends, with what can be said. */
    tool_event_clear(a);
    ok = false;
  }
  a->tool_ok = ok;
  a->tool_done = true;
  a->tool_has_event = true;
  return 0;
}

void agent_set_limits(struct agent *a, const struct agent_limits *l) {
  a->limits = *l;
  if (a->limits.max_model_calls == 0) a->limits.max_model_calls = MAX_MODEL_CALLS;
}

static void calls_clear(struct agent *a) {
  for (size_t i = 0; i < a->n_calls; i++) {
    free(a->calls[i].id);
    free(a->calls[i].name);
    free(a->calls[i].input);
  }
  a->n_calls = a->tool = 0;
}

void agent_fini(struct agent *a) {
  tool_event_clear(a);
  calls_clear(a);
  free(a->calls);
  free(a->user_text);
  free(a->turn_id);
  free(a->session_id);
  turn_arena_fini(&a->arena);
  turn_buf_fini(&a->inbox_text);
  turn_buf_fini(&a->held);
  turn_buf_fini(&a->call_ids);
  convo_fini(&a->convo);
  memset(a, 0, sizeof *a);
}

void agent_cancel(struct agent *a, turn_stop_reason why) {
  if (a->state == AGENT_S_DONE || a->state == AGENT_S_END) return;
  a->cancelled = true;
  a->cancel_reason = why;
}

void agent_fail(struct agent *a, const char *why, bool last_dropped) {
  if (a->state == AGENT_S_DONE || a->fail_why != NULL) return;
  a->fail_why = why;
  a->cancelled = true;
  a->cancel_reason = TURN_STOP_ERROR;
  a->held.len = 0; /* more text would not be kept either */
  /* A reply in progress is not kept: it holds what readers were not shown (the
   * event not kept, the held text), and the model never hears of its calls.
   * The shell took every finished message after the last agent_next, so the
   * conversation holds that reply only. */
  if (a->state == AGENT_S_MODEL || a->state == AGENT_S_RETRY) {
    convo_fini(&a->convo);
    convo_init(&a->convo);
    a->reply_dropped = true;
  }
  if (!last_dropped) return;
  /* Readers did not get the last event: the calls are closed as they saw them.
   * Only the events that move a call matter here. */
  switch (a->last_emitted) {
  case TURN_EV_TOOL_USE: /* a call they never saw: it goes (its input never came) */
    if (a->n_calls > a->tool) {
      struct agent_call *c = &a->calls[--a->n_calls];
      free(c->id);
      free(c->name);
      free(c->input);
    }
    break;
  case TURN_EV_APPROVAL: /* not asked, as they saw it: closed without a decision */
    if (a->tool < a->n_calls) a->calls[a->tool].request[0] = '\0';
    break;
  case TURN_EV_APPROVAL_DECIDED: /* still waiting, as they saw it: decided again */
    if (a->tool < a->n_calls) a->calls[a->tool].decision_told = false;
    break;
  case TURN_EV_TOOL_RESULT: /* still open, as they saw it; the model has its result */
    if (a->tool > 0) a->calls[--a->tool].result_said = true;
    break;
  default:
    break;
  }
}

bool agent_failed(const struct agent *a) {
  return a->fail_why != NULL;
}

void agent_idle(struct agent *a) {
  turn_arena_fini(&a->arena);
  turn_arena_init(&a->arena, NULL);
}

bool agent_take_message(struct agent *a, struct convo_message *out) {
  return convo_take(&a->convo, out);
}

turn_str agent_message_front(const struct agent *a, uint64_t *part) {
  *part = a->convo.parts;
  return convo_front(&a->convo);
}

void agent_message_front_taken(struct agent *a) {
  convo_front_taken(&a->convo);
}

/* The call that waits for approval request at now_ms, or NULL. */
static struct agent_call *waiting_call(const struct agent *a, const char *request,
                                       uint64_t now_ms) {
  if (a->state != AGENT_S_APPROVAL || a->cancelled) return NULL; /* ending: over */
  struct agent_call *c = &a->calls[a->tool];
  if (strcmp(c->request, request) != 0 || c->decided) return NULL;
  if (now_ms >= a->deadline_ms) return NULL; /* expired: its timer says timeout */
  return c;
}

int agent_decide(struct agent *a, const char *request, turn_decision d, uint64_t now_ms) {
  struct agent_call *c = waiting_call(a, request, now_ms);
  if (c == NULL || (c->step_up && d == TURN_DECISION_APPROVED)) return -1;
  c->decided = true;
  c->decision = d;
  return 0;
}

enum agent_approval agent_approval_of(const struct agent *a, const char *request,
                                      uint64_t now_ms) {
  const struct agent_call *c = waiting_call(a, request, now_ms);
  if (c == NULL) return AGENT_APPROVAL_UNKNOWN;
  return c->step_up ? AGENT_APPROVAL_STEP_UP : AGENT_APPROVAL_WAITING;
}

int agent_step_up(struct agent *a, const char *request, bool passed, uint64_t now_ms) {
  struct agent_call *c = waiting_call(a, request, now_ms);
  if (c == NULL || !c->step_up) return -1;
  c->step_up_news = passed ? CALL_STEP_UP_NEWS_PASSED : CALL_STEP_UP_NEWS_FAILED;
  if (passed) {
    c->decided = true;
    c->decision = TURN_DECISION_APPROVED;
  }
  return 0;
}

/* Copies s[0..len) and a NUL into the inbox's buffer; returns its offset, or
 * SIZE_MAX when it does not fit. */
static size_t inbox_keep(struct agent *a, const char *s, size_t len) {
  size_t at = a->inbox_text.len;
  if (turn_buf_append(&a->inbox_text, s != NULL ? s : "", len) != 0 ||
      turn_buf_append(&a->inbox_text, "", 1) != 0)
    return SIZE_MAX;
  return at;
}

int agent_model_event(struct agent *a, const struct model_event *ev) {
  if (!a->external || a->state != AGENT_S_MODEL || a->has_inbox) return -1;
  turn_buf_reset(&a->inbox_text);
  size_t text = inbox_keep(a, ev->text, ev->text != NULL ? ev->len : 0);
  size_t id = inbox_keep(a, ev->id, ev->id != NULL ? strlen(ev->id) : 0);
  size_t name = inbox_keep(a, ev->name, ev->name != NULL ? strlen(ev->name) : 0);
  a->inbox = *ev;
  a->has_inbox = true;
  if (text == SIZE_MAX || id == SIZE_MAX || name == SIZE_MAX) {
    /* Too big or out of memory: the call fails here, as a broken stream would. */
    memset(&a->inbox, 0, sizeof a->inbox);
    a->inbox.kind = MODEL_EV_ERROR;
    a->inbox.text = "the model's answer was too large to keep";
    a->inbox.len = strlen(a->inbox.text);
    return -1;
  }
  const char *base = (const char *)a->inbox_text.data;
  a->inbox.text = base + text;
  a->inbox.id = base + id;
  a->inbox.name = base + name;
  return 0;
}

static turn_str str_of(const char *s) {
  return turn_str_c(s);
}

/* The text of a step with "{{input}}" replaced by the user's text, in the arena. */
static turn_str expand(struct agent *a, const char *text) {
  static const char marker[] = "{{input}}";
  size_t n_marks = 0;
  for (const char *p = strstr(text, marker); p != NULL; p = strstr(p + 1, marker))
    n_marks++;
  size_t len = strlen(text) + n_marks * strlen(a->user_text);
  char *out = turn_arena_alloc(&a->arena, len + 1);
  if (out == NULL) return str_of("");
  size_t w = 0;
  for (const char *p = text; *p != '\0';) {
    if (strncmp(p, marker, sizeof marker - 1) == 0) {
      size_t u = strlen(a->user_text);
      memcpy(out + w, a->user_text, u);
      w += u;
      p += sizeof marker - 1;
    } else {
      out[w++] = *p++;
    }
  }
  out[w] = '\0';
  return (turn_str){out, w};
}

static void emit(struct agent_action *out, turn_event_type type) {
  memset(out, 0, sizeof *out);
  out->kind = AGENT_EMIT;
  out->ev.type = type;
}

/* No event this step: the shell calls agent_next again at once. */
static void go_on(struct agent_action *out) {
  out->kind = AGENT_WAIT;
  out->wait_ms = 0;
}

/* Whether the current call has begun to act: an owner's program runs,
 * count_slowly counts, or render_ui's widget is out. The model is told so if
 * the turn ends there, not that it never ran. */
static bool call_began(const struct agent *a) {
  return a->state == AGENT_S_SHELL_TOOL || a->state == AGENT_S_PROGRESS ||
         (a->state == AGENT_S_RUN_TOOL && a->progress_done > 0);
}

static turn_str arena_text(struct agent *a, const char *text, size_t len);

/* What ended the turn before its calls were done, for their results. */
static const char *cut_why(const struct agent *a) {
  if (a->fail_why != NULL) return a->fail_why;
  if (a->cancelled)
    return a->cancel_reason == TURN_STOP_INTERRUPT ? "turnd stopped"
                                                   : "the turn was cancelled";
  return a->end_why != NULL ? a->end_why : "the turn ended";
}

static const turn_approval approval_of_decision[] = {
    [TURN_DECISION_APPROVED] = TURN_APPROVAL_APPROVED,
    [TURN_DECISION_REJECTED] = TURN_APPROVAL_REJECTED,
    [TURN_DECISION_TIMEOUT] = TURN_APPROVAL_TIMEOUT,
};

/* Closes the current call, which the end cut off: its approval's decision when
 * the approval waits, else its result, which the model is told too. */
static void close_call(struct agent *a, struct agent_action *out, uint64_t now_ms) {
  struct agent_call *c = &a->calls[a->tool];
  if (c->request[0] != '\0' && !c->decision_told) {
    /* Nobody approved it, and nothing approves on its own: the ask is over. */
    if (!c->decided) {
      c->decided = true;
      c->decision = TURN_DECISION_REJECTED;
      c->cut_waiting = true;
    }
    c->decision_told = true;
    emit(out, TURN_EV_APPROVAL_DECIDED);
    out->ev.approval_decided.request = str_of(c->request);
    out->ev.approval_decided.decision = c->decision;
    return;
  }
  /* The owner's cancel keeps a call from running as the owner's no does;
   * anything else that does is an error, as is a call stopped midway. */
  bool began = call_began(a), owner = a->cancelled && a->fail_why == NULL &&
                                      a->cancel_reason == TURN_STOP_CANCELLED;
  const char *before = "not run: ", *after = "";
  turn_status status = owner ? TURN_STATUS_REJECTED : TURN_STATUS_ERROR;
  if (c->result_said) {
    before = "its result was not kept: ";
    status = TURN_STATUS_ERROR;
  } else if (began) {
    before = "stopped: ";
    after = " while it ran";
    status = TURN_STATUS_ERROR;
  } else if (c->input == NULL) {
    after = " before its input was complete";
  } else if (c->cut_waiting) {
    after = " while its approval waited";
    status = TURN_STATUS_REJECTED;
  } else if (c->decision_told && c->decision != TURN_DECISION_APPROVED) {
    status = TURN_STATUS_REJECTED;
  }
  char buf[300];
  snprintf(buf, sizeof buf, "%s%s%s", before, cut_why(a), after);
  turn_str summary = arena_text(a, buf, strlen(buf));
  /* A call whose input never came was not put in the conversation. */
  if (c->input != NULL && !c->result_said && !a->reply_dropped)
    convo_tool_result(&a->convo, c->id, summary, true, now_ms);
  emit(out, TURN_EV_TOOL_RESULT);
  out->ev.tool_result.id = str_of(c->id);
  out->ev.tool_result.tool = str_of(c->name);
  out->ev.tool_result.status = status;
  out->ev.tool_result.summary = summary;
  out->ev.tool_result.approval =
      c->decision_told ? approval_of_decision[c->decision] : TURN_APPROVAL_NULL;
  a->tool++;
  set_state(a, AGENT_S_END); /* the calls after it never began */
}

/* The turn ends: first every call it started and did not finish is closed, one
 * event per step, so that no reader is left showing a call that runs for ever
 * (and the model is never sent a call without a result); then the error that
 * agent_fail asked for; then the end. */
static void end_turn(struct agent *a, struct agent_action *out, turn_stop_reason why,
                     uint64_t now_ms) {
  if (a->tool < a->n_calls) {
    close_call(a, out, now_ms);
    return;
  }
  convo_finish(&a->convo); /* what the model said before the end stays said */
  if (a->fail_why != NULL && !a->fail_told) {
    a->fail_told = true;
    emit(out, TURN_EV_ERROR);
    out->ev.error.message = str_of(a->fail_why);
    return;
  }
  calls_clear(a);
  emit(out, TURN_EV_END);
  out->ev.end.stop_reason = why;
  set_state(a, AGENT_S_DONE);
}

static void notice(struct agent_action *out, turn_str text) {
  emit(out, TURN_EV_NOTICE);
  out->ev.notice.text = text;
}

/* Whether the call's input can be shown as tool_input and approval carry it,
 * into *in. libturn refuses some JSON jansson takes (nesting a little deeper). */
static bool input_shown(struct agent *a, const struct agent_call *c, turn_input *in) {
  const char *visible = demo_visible_input(c->name, c->input, &a->arena);
  turn_error err;
  *in = (turn_input){{NULL, 0}, {NULL, 0}, false};
  return visible != NULL &&
         turn_input_from_json(in, &a->arena, visible, strlen(visible), &err) == TURN_OK;
}

/* The input field of a call, as tool_input and approval carry it: {} for one
 * that cannot be shown, which refusal() keeps from running. */
static turn_input input_of(struct agent *a, const struct agent_call *c) {
  turn_input in;
  if (!input_shown(a, c, &in)) in = (turn_input){str_of("{}"), {NULL, 0}, false};
  return in;
}

/* The current call's result: the event for the owner says summary; the model
 * is told for_model (NULL: the summary too). */
static void result_for(struct agent *a, uint64_t now_ms, struct agent_action *out,
                       turn_status status, turn_str summary, const char *for_model) {
  struct agent_call *c = &a->calls[a->tool];
  convo_tool_result(&a->convo, c->id, for_model != NULL ? turn_str_c(for_model) : summary,
                    status != TURN_STATUS_OK, now_ms);
  emit(out, TURN_EV_TOOL_RESULT);
  out->ev.tool_result.id = str_of(c->id);
  out->ev.tool_result.tool = str_of(c->name);
  out->ev.tool_result.status = status;
  out->ev.tool_result.summary = summary;
  out->ev.tool_result.approval = c->locked ? TURN_APPROVAL_LOCKED : TURN_APPROVAL_NULL;
  if (c->decided)
    out->ev.tool_result.approval =
        c->decision == TURN_DECISION_APPROVED   ? TURN_APPROVAL_APPROVED
        : c->decision == TURN_DECISION_REJECTED ? TURN_APPROVAL_REJECTED
                                                : TURN_APPROVAL_TIMEOUT;
  a->tool++;
  set_state(a, AGENT_S_TOOLS);
}

static void result(struct agent *a, uint64_t now_ms, struct agent_action *out,
                   turn_status status, turn_str summary) {
  result_for(a, now_ms, out, status, summary, NULL);
}

/* Whether approving a call with effect needs the owner's step-up. */
static bool needs_step_up(const struct agent *a, const char *effect) {
  if (a->guard == NULL) return false;
  for (size_t i = 0; i < a->guard->n_step_up_effects; i++)
    if (strcmp(a->guard->step_up_effects[i], effect) == 0) return true;
  return false;
}

/* The guard event of c's step-up that is due: the ask, or how a try went. */
static void step_up_event(const struct agent *a, struct agent_call *c,
                          struct agent_action *out) {
  emit(out, TURN_EV_GUARD);
  out->ev.guard.request = str_of(c->request);
  if (!c->step_up_told) {
    c->step_up_told = true;
    out->ev.guard.action = str_of("step_up");
    out->ev.guard.message =
        a->guard->pin_set ? str_of("Approving this needs your PIN.")
                          : str_of("Approving this needs your PIN. None is set yet: set "
                                   "one with `turnd set-pin`, then approve with it.");
    return;
  }
  bool passed = c->step_up_news == CALL_STEP_UP_NEWS_PASSED;
  c->step_up_news = CALL_STEP_UP_NEWS_NONE;
  out->ev.guard.action = str_of(passed ? "passed" : "failed");
  if (!passed) out->ev.guard.message = str_of("Wrong PIN.");
}

/* The text in the arena, for an event's string. */
static turn_str arena_text(struct agent *a, const char *text, size_t len) {
  char *copy = turn_arena_alloc(&a->arena, len + 1);
  if (copy == NULL) return str_of("");
  memcpy(copy, text, len);
  copy[len] = '\0';
  return (turn_str){copy, len};
}

/* A new call of the reply, from the model's id and name. Returns it, or NULL
 * when out of memory or past AGENT_MAX_CALLS. */
static struct agent_call *call_add(struct agent *a, const char *id, const char *name) {
  if (a->n_calls == AGENT_MAX_CALLS) return NULL;
  if (a->n_calls == a->cap_calls) {
    size_t cap = a->cap_calls == 0 ? 2 : a->cap_calls * 2;
    struct agent_call *grown = realloc(a->calls, cap * sizeof *grown);
    if (grown == NULL) return NULL;
    a->calls = grown;
    a->cap_calls = cap;
  }
  struct agent_call *c = &a->calls[a->n_calls];
  memset(c, 0, sizeof *c);
  c->id = strdup(id);
  c->name = strdup(name);
  if (c->id == NULL || c->name == NULL) {
    free(c->id);
    free(c->name);
    return NULL;
  }
  a->n_calls++;
  if (a->tools != NULL) {
    const struct tool_def *def = toolset_find(a->tools, name);
    c->tier = def != NULL ? def->tier : TURN_TIER_NULL;
  } else {
    const struct demo_tool *tool = demo_tool_find(name);
    c->tier = tool != NULL ? tool->tier : TURN_TIER_NULL;
  }
  return c;
}

/* Why the call may not run, in the arena, or NULL when it may: an unknown tool,
 * or an input its schema refuses (the model is told, and may try again). */
static const char *refusal(struct agent *a, const struct agent_call *c) {
  if (a->tools == NULL) return NULL; /* the script's demo: unchecked */
  const struct tool_def *def = toolset_find(a->tools, c->name);
  if (def == NULL) {
    char buf[200];
    snprintf(buf, sizeof buf, "no such tool: %.128s", c->name);
    return arena_text(a, buf, strlen(buf)).p;
  }
  /* The script's demo calls keep the demo's lenient defaults. */
  if (def->kind == TOOL_DEMO && !a->external) return NULL;
  json_error_t jerr;
  json_t *input = json_loads(c->input, INPUT_JSON_FLAGS, &jerr);
  if (input == NULL) {
    if (json_error_code(&jerr) == json_error_duplicate_key)
      return "the input repeats a key";
    if (json_error_code(&jerr) == json_error_numeric_overflow)
      return "the input has a number too big to read exactly";
    if (json_error_code(&jerr) == json_error_null_character)
      return "the input has a NUL character (\\u0000), which turnd cannot show";
    return "the input is not valid JSON";
  }
  /* The owner approves, and readers see, the input as shown: one that cannot be
   * shown would be approved as {} and run as it is. */
  turn_input shown;
  if (!input_shown(a, c, &shown)) {
    json_decref(input);
    return "the input is one turnd cannot show";
  }
  struct schema_error err;
  int rc = schema_validate(def->schema, input, &err);
  json_decref(input);
  if (rc == 0) return NULL;
  char buf[512];
  snprintf(buf, sizeof buf, "invalid input%s%s: %s", err.path[0] != '\0' ? " at " : "",
           err.path, err.message);
  return arena_text(a, buf, strlen(buf)).p;
}

/* The model call failed for good: a notice tells the owner, then the end. */
static void call_failed(struct agent *a, struct agent_action *out, const char *why,
                        size_t len) {
  if (len == SIZE_MAX) len = strlen(why);
  /* At most 200 bytes of it, cut between characters (the notice is UTF-8). */
  size_t cut = len > 200 ? 200 : len;
  while (cut > 0 && cut < len && ((unsigned char)why[cut] & 0xC0) == 0x80)
    cut--;
  char buf[300];
  snprintf(buf, sizeof buf, "The model call failed: %.*s", (int)cut, why);
  notice(out, arena_text(a, buf, strlen(buf)));
  a->stop = TURN_STOP_ERROR;
  a->end_why = "the model call failed";
  set_state(a, AGENT_S_END);
}

/* Seconds before throttled attempt n (from 1) starts again, when the provider
 * did not say: 1, 2, 4, 8, 16 s, each with up to a quarter more, spread by the
 * turn's id so that turns throttled together do not come back together. */
static double backoff_s(const struct agent *a, unsigned n) {
  unsigned spread = 0;
  for (const char *p = a->turn_id; *p != '\0'; p++)
    spread = spread * 31u + (unsigned char)*p;
  spread = (spread + n * 2654435761u) % 1000u;
  return (double)(1u << (n - 1)) * (1.0 + (double)spread / 4000.0);
}

/* a + b, or UINT64_MAX past it: a provider's counts are its word, and a wrapped
 * sum would slip under the token budget. */
static uint64_t add_capped(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The reply is complete: its calls run, unless it was cut at max_tokens, the
 * token budget is spent, or the provider's policy stopped it (then it is not
 * the reply the model meant to give, and the turn ends after it). */
static void reply_done(struct agent *a, enum model_stop stop, struct agent_action *out) {
  convo_finish(&a->convo);
  a->tokens_in = add_capped(a->tokens_in, a->call_in);
  a->tokens_out = add_capped(a->tokens_out, a->call_out);
  a->call_in = a->call_out = 0;
  /* A server that counts nothing (one that ignores stream_options) would let
   * the budget pass unseen: the owner is told, once a turn. */
  if (a->external && a->limits.max_total_tokens > 0 && !a->call_counted &&
      !a->uncounted_told)
    a->uncounted_due = true;
  if (!a->explicit_stop)
    a->stop = stop == MODEL_STOP_MAX_TOKENS ? TURN_STOP_MAX_TOKENS : TURN_STOP_END_TURN;
  a->tool = 0;
  if (a->limits.max_total_tokens > 0 &&
      add_capped(a->tokens_in, a->tokens_out) >= a->limits.max_total_tokens) {
    a->stop = TURN_STOP_LIMIT_TOTAL_TOKENS;
    a->skip_calls = "not run: the turn reached its token limit";
  } else if (stop == MODEL_STOP_REFUSED) {
    a->skip_calls = "not run: the provider stopped the reply";
  }
  /* The calls that do not run each get a result that says so, so the turn ends
   * with none open (the reply itself stays): those of a reply cut at max_tokens
   * (the last may not even be whole) as the turn ends, the others here. */
  set_state(a, a->n_calls > 0 && a->stop != TURN_STOP_MAX_TOKENS ? AGENT_S_TOOLS
                                                                 : AGENT_S_END);
  if (a->stop == TURN_STOP_MAX_TOKENS)
    a->end_why = "the reply was cut at the output limit";
  /* The protocol has no stop reason for a policy's stop, and a reply that
   * stops midway without a word reads as the model's own choice. */
  if (stop == MODEL_STOP_REFUSED)
    notice(out,
           str_of("The model's provider stopped this reply under its content policy."));
  else
    go_on(out);
}

/* A tool call's input as everyone sees it from then on (the tool, the owner,
 * the conversation): the model's text parsed and written out again compactly,
 * so a tool reads one line of JSON holding exactly the value its schema check
 * passed. Text that does not parse, or that repeats a key (parsers disagree on
 * which one wins), is kept as it came, and the check refuses it. NULL when out
 * of memory. */
static char *canonical_input(const char *text, size_t len) {
  if (len == 0) return strdup("{}");
  json_t *v = json_loadb(text, len, INPUT_JSON_FLAGS, NULL);
  char *out = v != NULL ? json_dumps_shortest(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
  json_decref(v);
  return out != NULL ? out : strndup(text, len);
}

/* Whether deltas are held at now_ms. The clock is the wall clock, which can be
 * set back: a window that ends further off than a whole window from now is
 * over, or text would wait for as long as the clock went back. */
static bool in_window(const struct agent *a, uint64_t now_ms) {
  return now_ms < a->window_end_ms && a->window_end_ms - now_ms <= a->limits.coalesce_ms;
}

/* Whether a delta at now_ms belongs to the burst of the one before: it came
 * within a window of it. One that comes later is the first of a new burst and
 * goes at once, even if held text went out since and opened a window of its
 * own: a provider that fell behind and caught up in a rush, then went on at
 * its pace, is not held back all along. (A clock set back counts as soon.) */
static bool in_burst(const struct agent *a, uint64_t now_ms) {
  return a->last_delta_ms != 0 &&
         (now_ms < a->last_delta_ms || now_ms - a->last_delta_ms < a->limits.coalesce_ms);
}

/* Sends the held text as one event, or its first TEXT_EVENT_MAX bytes or so (cut
 * between characters) when there is more: the rest goes at the next step, and
 * the next window starts once all of it is out. */
static void flush_held(struct agent *a, uint64_t now_ms, struct agent_action *out) {
  size_t n = a->held.len;
  if (n > TEXT_EVENT_MAX) {
    n = TEXT_EVENT_MAX;
    const unsigned char *p = (const unsigned char *)a->held.data;
    for (int back = 0; back < 3 && (p[n] & 0xc0) == 0x80; back++)
      n--; /* p[n] continues a character: cut before it */
  }
  emit(out, a->held_kind == MODEL_EV_TEXT ? TURN_EV_TEXT : TURN_EV_REASONING);
  out->ev.text.delta = arena_text(a, (const char *)a->held.data, n);
  memmove(a->held.data, a->held.data + n, a->held.len - n);
  a->held.len -= n;
  a->window_end_ms = a->held.len > 0 ? now_ms : now_ms + a->limits.coalesce_ms;
}

/* Whether the turn has had a call with this id. */
static bool call_id_used(const struct agent *a, const char *id) {
  if (a->call_ids.len == 0) return false;
  const char *p = a->call_ids.data, *end = p + a->call_ids.len;
  for (; p < end; p += strlen(p) + 1)
    if (strcmp(p, id) == 0) return true;
  return false;
}

/* One model event of the current call: at most one protocol event. */
static void take_model_event(struct agent *a, const struct model_event *ev,
                             uint64_t now_ms, struct agent_action *out) {
  switch (ev->kind) {
  case MODEL_EV_TEXT:
  case MODEL_EV_REASONING: {
    turn_str delta = arena_text(a, ev->text, ev->len);
    if (ev->kind == MODEL_EV_TEXT)
      convo_text(&a->convo, delta, now_ms);
    else
      convo_thinking(&a->convo, delta, now_ms);
    /* A provider's deltas that come soon after the last one sent wait for the
     * window to end and go out together: a fast model's tiny deltas would
     * otherwise cost every client an event each. The first of a burst goes at
     * once. (The script's are its test's to count: never held.) */
    bool held = a->external && a->limits.coalesce_ms > 0 && in_window(a, now_ms) &&
                in_burst(a, now_ms);
    a->last_delta_ms = now_ms;
    if (held && turn_buf_append(&a->held, delta.p, delta.len) == 0) {
      a->held_kind = ev->kind;
      go_on(out);
      return;
    }
    /* Nothing is held here (see AGENT_S_MODEL). A delta too big for one event
     * goes out in pieces. */
    if (a->external && delta.len > TEXT_EVENT_MAX &&
        turn_buf_append(&a->held, delta.p, delta.len) == 0) {
      a->held_kind = ev->kind;
      flush_held(a, now_ms, out);
      return;
    }
    emit(out, ev->kind == MODEL_EV_TEXT ? TURN_EV_TEXT : TURN_EV_REASONING);
    out->ev.text.delta = delta;
    a->window_end_ms = now_ms + a->limits.coalesce_ms;
    return;
  }
  case MODEL_EV_SIGNATURE:
    convo_signature(&a->convo, (turn_str){ev->text, ev->len});
    go_on(out);
    return;
  case MODEL_EV_TOOL_DELTA: /* nothing to show: the input goes out whole, at its end */
    go_on(out);
    return;
  case MODEL_EV_USAGE:
    a->call_in = ev->input_tokens;
    a->call_out = ev->output_tokens;
    a->call_counted = true;
    go_on(out);
    return;
  case MODEL_EV_TOOL_START: {
    /* Unique in the turn, as the protocol wants. A provider's own id is kept
     * unless the turn used it already: some servers number a reply's calls from
     * 0 (Kimi's "functions.clock:0"), or send none. Those get one made of the
     * characters every provider takes back ([A-Za-z0-9_-]) if the session
     * changes provider. */
    char made[64];
    const char *id = ev->id;
    if (id == NULL || id[0] == '\0' || call_id_used(a, id)) {
      do
        snprintf(made, sizeof made, "call_%.40s_%zu", a->turn_id, ++a->tools_used);
      while (call_id_used(a, made));
      id = made;
    }
    struct agent_call *c = call_add(a, id, ev->name);
    if (c == NULL) {
      notice(out, str_of("The model asked for too many tool calls at once."));
      a->stop = TURN_STOP_ERROR;
      a->end_why = "the model asked for too many tool calls at once";
      set_state(a, AGENT_S_END);
      return;
    }
    /* Past CALL_IDS_CAP (thousands of calls) a repeat is no longer caught. */
    (void)turn_buf_append(&a->call_ids, c->id, strlen(c->id) + 1);
    emit(out, TURN_EV_TOOL_USE);
    out->ev.tool_use.id = str_of(c->id);
    out->ev.tool_use.tool = str_of(c->name);
    out->ev.tool_use.tier = c->tier;
    return;
  }
  case MODEL_EV_TOOL_END: {
    if (ev->index >= a->n_calls || a->calls[ev->index].input != NULL) {
      call_failed(a, out, "the model ended a tool call it never started", SIZE_MAX);
      return;
    }
    struct agent_call *c = &a->calls[ev->index];
    c->input = canonical_input(ev->text, ev->len);
    if (c->input == NULL) {
      call_failed(a, out, "out of memory", SIZE_MAX);
      return;
    }
    convo_tool_use(&a->convo, c->id, c->name, c->input, now_ms);
    emit(out, TURN_EV_TOOL_INPUT);
    out->ev.tool_input.id = str_of(c->id);
    out->ev.tool_input.tool = str_of(c->name);
    out->ev.tool_input.input = input_of(a, c);
    return;
  }
  case MODEL_EV_STOP:
    reply_done(a, ev->stop, out);
    return;
  case MODEL_EV_ERROR:
    /* The same call again says again what this attempt said, text aside (it
     * stays said): a call it began would be begun twice, so that fails instead,
     * as the shell fails a throttle once anything was said. */
    if (ev->throttled && a->retries < MAX_RETRIES && a->n_calls == 0) {
      a->retries++;
      double delay_s =
          ev->retry_after_s >= 0 ? ev->retry_after_s : backoff_s(a, a->retries);
      emit(out, TURN_EV_THROTTLED);
      out->ev.throttled.delay_seconds = delay_s;
      a->pending_wait_ms = (uint64_t)(delay_s * 1000.0);
      set_state(a, AGENT_S_RETRY);
      return;
    }
    call_failed(a, out, ev->text != NULL ? ev->text : "", ev->text != NULL ? ev->len : 0);
    return;
  }
}

/* The script's next model event for this call, or a wait. */
static void script_step(struct agent *a, uint64_t now_ms, struct agent_action *out) {
  struct model_event ev;
  memset(&ev, 0, sizeof ev);
  if (a->step == a->reply->n) {
    ev.kind = MODEL_EV_STOP;
    ev.stop = a->n_calls > 0 ? MODEL_STOP_TOOL_USE : MODEL_STOP_END_TURN;
    take_model_event(a, &ev, now_ms, out);
    return;
  }
  const struct script_step *st = &a->reply->steps[a->step];
  switch (st->kind) {
  case SCRIPT_TEXT:
  case SCRIPT_REASONING: {
    turn_str text = expand(a, st->text);
    ev.kind = st->kind == SCRIPT_TEXT ? MODEL_EV_TEXT : MODEL_EV_REASONING;
    ev.text = text.p;
    ev.len = text.len;
    a->step++;
    break;
  }
  case SCRIPT_TOOL_USE:
    /* Two model events, as a provider streams them: the call starts, then its
     * input is complete. The step is done after the second. */
    if (!a->step_begun) {
      char id[32];
      snprintf(id, sizeof id, "u%zu", ++a->tools_used);
      ev.kind = MODEL_EV_TOOL_START;
      ev.id = id;
      ev.name = st->text;
      ev.index = a->n_calls;
      a->step_begun = true;
      take_model_event(a, &ev, now_ms, out);
      return;
    }
    a->step_begun = false;
    ev.kind = MODEL_EV_TOOL_END;
    ev.index = a->n_calls - 1;
    ev.text = st->input;
    ev.len = strlen(st->input);
    a->step++;
    break;
  case SCRIPT_DELAY:
    a->step++;
    out->kind = AGENT_WAIT;
    out->wait_ms = st->ms;
    return;
  case SCRIPT_THROTTLE:
    a->step++; /* the retry goes on after it: a script never throttles forever */
    ev.kind = MODEL_EV_ERROR;
    ev.throttled = true;
    ev.retry_after_s = st->seconds;
    a->retries = 0; /* the script's throttles are not the provider's retries */
    break;
  case SCRIPT_FAIL:
    a->step++;
    ev.kind = MODEL_EV_ERROR;
    ev.text = st->text;
    ev.len = strlen(st->text);
    break;
  case SCRIPT_STOP:
    a->step++;
    a->stop = (turn_stop_reason)st->stop_reason;
    a->explicit_stop = true;
    go_on(out);
    return;
  }
  take_model_event(a, &ev, now_ms, out);
}

/* The current call, once it may run: one-shot tools finish at once. */
static void run_tool(struct agent *a, uint64_t now_ms, struct agent_action *out) {
  struct agent_call *c = &a->calls[a->tool];
  const char *name = c->name;
  if (c->decided && c->decision != TURN_DECISION_APPROVED) {
    result(a, now_ms, out, TURN_STATUS_REJECTED,
           str_of(c->decision == TURN_DECISION_TIMEOUT
                      ? "the owner did not answer in time"
                      : "the owner said no"));
    return;
  }
  const struct tool_def *def = a->tools != NULL ? toolset_find(a->tools, name) : NULL;
  if (def != NULL && def->kind == TOOL_EXTERNAL) {
    tool_event_clear(a);
    out->kind = AGENT_RUN_TOOL;
    out->call = c;
    out->tool = def;
    set_state(a, AGENT_S_SHELL_TOOL);
    return;
  }
  if (strcmp(name, "count_slowly") == 0) {
    a->progress_done = 0;
    set_state(a, AGENT_S_PROGRESS);
    go_on(out);
    return;
  }
  if (strcmp(name, "render_ui") == 0 && a->progress_done == 0) {
    turn_str title, html;
    if (demo_widget_params(c->input, &a->arena, &title, &html) != 0) {
      result(a, now_ms, out, TURN_STATUS_ERROR,
             str_of("render_ui needs a title and html"));
      return;
    }
    emit(out, TURN_EV_WIDGET);
    out->ev.widget.id = str_of(c->id);
    out->ev.widget.title = title;
    out->ev.widget.html = html;
    a->progress_done = 1; /* the widget is out; the result comes next */
    return;
  }
  a->progress_done = 0;
  turn_status status;
  turn_str summary;
  if (strcmp(name, "render_ui") == 0) {
    status = TURN_STATUS_OK;
    summary = str_of("widget shown");
  } else {
    demo_tool_finish(name, c->input, now_ms, &a->arena, &status, &summary);
  }
  result(a, now_ms, out, status, summary);
}

static void count_step(struct agent *a, uint64_t now_ms, struct agent_action *out) {
  struct agent_call *c = &a->calls[a->tool];
  uint32_t to, interval_ms;
  demo_count_params(c->input, &to, &interval_ms);
  if (a->progress_done == to) {
    char buf[64];
    snprintf(buf, sizeof buf, "counted to %u", to);
    char *copy = turn_arena_alloc(&a->arena, strlen(buf) + 1);
    if (copy != NULL) memcpy(copy, buf, strlen(buf) + 1);
    a->progress_done = 0;
    result(a, now_ms, out, TURN_STATUS_OK, str_of(copy != NULL ? copy : ""));
    return;
  }
  char buf[64];
  snprintf(buf, sizeof buf, "%u of %u", ++a->progress_done, to);
  char *copy = turn_arena_alloc(&a->arena, strlen(buf) + 1);
  if (copy != NULL) memcpy(copy, buf, strlen(buf) + 1);
  emit(out, TURN_EV_TOOL_PROGRESS);
  out->ev.tool_progress.id = str_of(c->id);
  out->ev.tool_progress.tool = str_of(c->name);
  out->ev.tool_progress.message = str_of(copy != NULL ? copy : "");
  a->pending_wait_ms = a->progress_done < to ? interval_ms : 0;
}

/* The owner's tool, run by the shell: its progress, then its result. */
static void shell_tool_step(struct agent *a, uint64_t now_ms, struct agent_action *out) {
  struct agent_call *c = &a->calls[a->tool];
  if (!a->tool_has_event) {
    out->kind = AGENT_AWAIT_TOOL;
    return;
  }
  turn_str text = arena_text(a, a->tool_text != NULL ? a->tool_text : "",
                             a->tool_text != NULL ? strlen(a->tool_text) : 0);
  if (!a->tool_done) {
    emit(out, TURN_EV_TOOL_PROGRESS);
    out->ev.tool_progress.id = str_of(c->id);
    out->ev.tool_progress.tool = str_of(c->name);
    out->ev.tool_progress.message = text;
    tool_event_clear(a);
    return;
  }
  /* The model gets the result's data after the summary; the owner the summary. */
  const char *for_model = NULL;
  if (a->tool_result != NULL) {
    size_t len = text.len + 1 + strlen(a->tool_result);
    char *joined = turn_arena_alloc(&a->arena, len + 1);
    if (joined != NULL) {
      snprintf(joined, len + 1, "%s\n%s", text.p, a->tool_result);
      for_model = joined;
    }
  }
  bool ok = a->tool_ok;
  tool_event_clear(a);
  result_for(a, now_ms, out, ok ? TURN_STATUS_OK : TURN_STATUS_ERROR, text, for_model);
}

static void next_action(struct agent *a, uint64_t now_ms, struct agent_action *out);

void agent_next(struct agent *a, uint64_t now_ms, struct agent_action *out) {
  next_action(a, now_ms, out);
  if (out->kind == AGENT_EMIT) a->last_emitted = out->ev.type; /* for agent_fail */
  /* Any other event ends a burst of deltas: the next delta, the first of a new
   * burst (after a tool's result, say), goes out at once. */
  if (out->kind == AGENT_EMIT && out->ev.type != TURN_EV_TEXT &&
      out->ev.type != TURN_EV_REASONING)
    a->window_end_ms = a->last_delta_ms = 0;
}

static void next_action(struct agent *a, uint64_t now_ms, struct agent_action *out) {
  turn_arena_reset(&a->arena);
  memset(out, 0, sizeof *out);
  if (a->pending_wait_ms > 0 && !a->cancelled) {
    out->kind = AGENT_WAIT;
    out->wait_ms = a->pending_wait_ms;
    a->pending_wait_ms = 0;
    return;
  }
  a->pending_wait_ms = 0;
  if (a->state == AGENT_S_DONE) {
    out->kind = AGENT_END;
    return;
  }
  if (a->cancelled && a->state != AGENT_S_TURN) {
    if (a->held.len > 0) {
      flush_held(a, now_ms, out); /* it is in the conversation: readers get it too */
      return;
    }
    end_turn(a, out, a->cancel_reason, now_ms);
    return;
  }
  if (a->uncounted_due) {
    a->uncounted_due = false;
    a->uncounted_told = true;
    notice(out, str_of("The model's server did not say how many tokens this reply "
                       "used: the turn's token limit cannot count them."));
    return;
  }
  switch (a->state) {
  case AGENT_S_TURN:
    emit(out, TURN_EV_TURN);
    out->ev.turn.turn = str_of(a->turn_id);
    out->ev.turn.session = str_of(a->session_id);
    convo_user_text(&a->convo, a->user_text, now_ms);
    set_state(a, a->external || a->replies != NULL ? AGENT_S_CALL : AGENT_S_END);
    if (a->state == AGENT_S_END) a->stop = TURN_STOP_ERROR;
    return;
  case AGENT_S_CALL:
    if (a->model_calls == a->limits.max_model_calls) {
      end_turn(a, out, TURN_STOP_LIMIT_TURNS, now_ms);
      return;
    }
    calls_clear(a);
    a->stop = TURN_STOP_END_TURN;
    a->explicit_stop = false;
    a->retries = 0;
    a->call_in = a->call_out = 0;
    a->call_counted = false;
    set_state(a, AGENT_S_MODEL);
    if (a->external) {
      a->model_calls++;
      out->kind = AGENT_MODEL_CALL;
      return;
    }
    a->reply = script_reply_at(a->replies, a->model_calls++);
    a->step = 0;
    a->step_begun = false;
    script_step(a, now_ms, out);
    return;
  case AGENT_S_MODEL:
    if (!a->external) {
      script_step(a, now_ms, out);
      return;
    }
    /* What is held goes before anything else: before an event of another kind,
     * once its window is over (a delta of its kind that came then goes with
     * it, after it), and before a delta that would not fit with it. */
    if (a->held.len > 0 && (!in_window(a, now_ms) ||
                            (a->has_inbox && (a->inbox.kind != a->held_kind ||
                                              a->held.len + a->inbox.len > HELD_CAP)))) {
      if (a->has_inbox && a->inbox.kind == a->held_kind &&
          a->held.len + a->inbox.len <= HELD_CAP &&
          turn_buf_append(&a->held, a->inbox.text, a->inbox.len) == 0) {
        turn_str delta = {a->inbox.text, a->inbox.len};
        if (a->held_kind == MODEL_EV_TEXT)
          convo_text(&a->convo, delta, now_ms);
        else
          convo_thinking(&a->convo, delta, now_ms);
        a->has_inbox = false;
        a->last_delta_ms = now_ms;
      }
      flush_held(a, now_ms, out);
      return;
    }
    if (!a->has_inbox) {
      out->kind = AGENT_AWAIT_MODEL;
      out->wait_ms = a->held.len > 0 ? a->window_end_ms - now_ms : 0;
      return;
    }
    a->has_inbox = false;
    take_model_event(a, &a->inbox, now_ms, out);
    return;
  case AGENT_S_RETRY:
    /* The throttle's wait is over: the same call again. The script goes on
     * after its throttle step; a provider is sent the call anew, and what the
     * cut attempt said stays said. Whether it counts is the new attempt's to
     * say. */
    a->call_counted = false;
    set_state(a, AGENT_S_MODEL);
    if (a->external) {
      out->kind = AGENT_MODEL_CALL;
      return;
    }
    script_step(a, now_ms, out);
    return;
  case AGENT_S_TOOLS: {
    if (a->tool == a->n_calls) {
      convo_finish(&a->convo); /* the results go back in one message */
      /* the next model call, with the results; or the end the limit asked for */
      set_state(a, a->skip_calls != NULL ? AGENT_S_END : AGENT_S_CALL);
      go_on(out);
      return;
    }
    if (a->skip_calls != NULL) {
      result(a, now_ms, out, TURN_STATUS_ERROR, str_of(a->skip_calls));
      return;
    }
    struct agent_call *c = &a->calls[a->tool];
    const char *why = refusal(a, c);
    if (why != NULL) { /* nothing runs and nobody is asked */
      result(a, now_ms, out, TURN_STATUS_ERROR, str_of(why));
      return;
    }
    if (c->tier == 2 && a->guard != NULL && a->guard->locked) {
      c->locked = true; /* the owner is away: nobody is asked, nothing runs */
      result(a, now_ms, out, TURN_STATUS_REJECTED,
             str_of("not run: the backend is locked"));
      return;
    }
    if (c->tier == 2) {
      const struct tool_def *def =
          a->tools != NULL ? toolset_find(a->tools, c->name) : NULL;
      const struct demo_tool *demo = def == NULL ? demo_tool_find(c->name) : NULL;
      const char *effect = def != NULL ? def->effect : demo != NULL ? demo->effect : "";
      snprintf(c->request, sizeof c->request, "%.40s.a%zu", a->turn_id,
               ++a->approvals_asked);
      emit(out, TURN_EV_APPROVAL);
      out->ev.approval.request = str_of(c->request);
      out->ev.approval.tool = str_of(c->name);
      out->ev.approval.tier = 2;
      out->ev.approval.effect = str_of(effect);
      out->ev.approval.input = input_of(a, c);
      c->step_up = needs_step_up(a, effect);
      a->deadline_ms = now_ms + (uint64_t)a->approval_timeout_s * 1000;
      out->ev.approval.has_expires_at = true;
      out->ev.approval.expires_at_s =
          (double)a->deadline_ms / 1000.0; /* the deadline itself */
      set_state(a, AGENT_S_APPROVAL);
      return;
    }
    set_state(a, AGENT_S_RUN_TOOL);
    run_tool(a, now_ms, out);
    return;
  }
  case AGENT_S_APPROVAL: {
    struct agent_call *c = &a->calls[a->tool];
    if ((c->step_up && !c->step_up_told) || c->step_up_news != CALL_STEP_UP_NEWS_NONE) {
      step_up_event(a, c, out);
      return;
    }
    if (!c->decided && now_ms < a->deadline_ms) {
      out->kind = AGENT_AWAIT;
      out->wait_ms = a->deadline_ms - now_ms;
      return;
    }
    if (!c->decided) { /* nothing approves on its own: time running out is a no */
      c->decided = true;
      c->decision = TURN_DECISION_TIMEOUT;
    }
    c->decision_told = true;
    emit(out, TURN_EV_APPROVAL_DECIDED);
    out->ev.approval_decided.request = str_of(c->request);
    out->ev.approval_decided.decision = c->decision;
    set_state(a, AGENT_S_RUN_TOOL);
    return;
  }
  case AGENT_S_RUN_TOOL:
    run_tool(a, now_ms, out);
    return;
  case AGENT_S_PROGRESS:
    count_step(a, now_ms, out);
    return;
  case AGENT_S_SHELL_TOOL:
    shell_tool_step(a, now_ms, out);
    return;
  case AGENT_S_END:
    if (!a->external && a->replies == NULL && !a->told_no_reply) {
      a->told_no_reply = true;
      notice(out, str_of("The model has no reply to this."));
      return;
    }
    end_turn(a, out, a->stop, now_ms);
    return;
  case AGENT_S_DONE:
    out->kind = AGENT_END;
    return;
  }
}
