/* The agent core's entry points (agent.h): a turn starts and ends here, and
 * what the shell feeds back (a model event, a tool's progress or result, a
 * decision, a step-up, a cancel or a failure) is taken here, to be acted on at
 * the next agent_next (agent_next.c). Nothing here emits an event. */
#include "agent_impl.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MODEL_CALLS 20         /* by default: a model that calls tools forever ends */
#define CALL_IDS_CAP    (1u << 20) /* bytes of a turn's call ids kept to tell repeats */
#define INBOX_CAP       (2u << 20) /* bytes of one model event's strings */

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
    agent_tool_event_clear(a);
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

void agent_fini(struct agent *a) {
  agent_tool_event_clear(a);
  agent_calls_clear(a);
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
