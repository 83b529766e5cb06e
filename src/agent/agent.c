/* The agent core: one explicit state machine per turn (see agent.h for the
 * states). Each agent_next() makes at most one event, so the shell decides when
 * to write it and the order checker sees events one by one.
 *
 *   TURN -> CALL -> STEP* -> [TOOL_INPUT] ... -> TOOLS -> (APPROVAL) -> RUN_TOOL
 *        -> (PROGRESS*) -> TOOLS ... -> CALL (the next model call) ... -> END -> DONE
 *   any state but DONE -> END [agent_cancel, a failed model call, the call cap] */
#include "agent.h"

#include "tools_demo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MODEL_CALLS 20 /* a script that calls tools forever still ends */

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
  convo_init(&a->convo);
  a->state = AGENT_S_TURN;
  a->stop = TURN_STOP_END_TURN;
  if (a->user_text == NULL || a->turn_id == NULL || a->session_id == NULL) {
    agent_fini(a);
    return -1;
  }
  return 0;
}

void agent_fini(struct agent *a) {
  free(a->user_text);
  free(a->turn_id);
  free(a->session_id);
  turn_arena_fini(&a->arena);
  convo_fini(&a->convo);
  a->user_text = a->turn_id = a->session_id = NULL;
}

void agent_cancel(struct agent *a, turn_stop_reason why) {
  if (a->state == AGENT_S_DONE || a->state == AGENT_S_END) return;
  a->cancelled = true;
  a->cancel_reason = why;
}

void agent_idle(struct agent *a) {
  turn_arena_fini(&a->arena);
  turn_arena_init(&a->arena, NULL);
}

bool agent_take_message(struct agent *a, struct convo_message *out) {
  return convo_take(&a->convo, out);
}

int agent_decide(struct agent *a, const char *request, turn_decision d, uint64_t now_ms) {
  if (a->state != AGENT_S_APPROVAL) return -1;
  struct agent_call *c = &a->calls[a->tool];
  if (strcmp(c->request, request) != 0 || c->decided) return -1;
  if (now_ms >= a->deadline_ms) return -1; /* expired: its timer says timeout */
  c->decided = true;
  c->decision = d;
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

static void end_turn(struct agent *a, struct agent_action *out, turn_stop_reason why,
                     uint64_t now_ms) {
  /* A call the end cut off still gets a result in the conversation: a model is
   * never sent a tool call without one. (No tool_result event: it did not run.) */
  for (size_t i = a->tool; i < a->n_calls; i++)
    convo_tool_result(&a->convo, a->calls[i].id,
                      TURN_STR("not run: the turn ended first"), true, now_ms);
  a->n_calls = a->tool = 0;
  convo_finish(&a->convo); /* what the model said before the end stays said */
  emit(out, TURN_EV_END);
  out->ev.end.stop_reason = why;
  a->state = AGENT_S_DONE;
}

static void notice(struct agent_action *out, turn_str text) {
  emit(out, TURN_EV_NOTICE);
  out->ev.notice.text = text;
}

/* The input field of a call, as tool_input and approval carry it. */
static turn_input input_of(struct agent *a, const struct agent_call *c) {
  const char *visible = demo_visible_input(c->step->text, c->step->input, &a->arena);
  turn_input in = {{NULL, 0}, {NULL, 0}, false};
  turn_error err;
  if (visible == NULL ||
      turn_input_from_json(&in, &a->arena, visible, strlen(visible), &err) != TURN_OK)
    in.json = str_of("{}");
  return in;
}

static void result(struct agent *a, uint64_t now_ms, struct agent_action *out,
                   turn_status status, turn_str summary) {
  struct agent_call *c = &a->calls[a->tool];
  convo_tool_result(&a->convo, c->id, summary, status != TURN_STATUS_OK, now_ms);
  emit(out, TURN_EV_TOOL_RESULT);
  out->ev.tool_result.id = str_of(c->id);
  out->ev.tool_result.tool = str_of(c->step->text);
  out->ev.tool_result.status = status;
  out->ev.tool_result.summary = summary;
  out->ev.tool_result.approval = TURN_APPROVAL_NULL;
  if (c->decided)
    out->ev.tool_result.approval =
        c->decision == TURN_DECISION_APPROVED   ? TURN_APPROVAL_APPROVED
        : c->decision == TURN_DECISION_REJECTED ? TURN_APPROVAL_REJECTED
                                                : TURN_APPROVAL_TIMEOUT;
  a->tool++;
  a->state = AGENT_S_TOOLS;
}

/* One step of the current reply. */
static void do_step(struct agent *a, uint64_t now_ms, struct agent_action *out) {
  if (a->step == a->reply->n) {
    convo_finish(&a->convo); /* the reply is complete */
    a->tool = 0;
    a->state =
        a->n_calls > 0 && a->stop != TURN_STOP_MAX_TOKENS ? AGENT_S_TOOLS : AGENT_S_END;
    out->kind = AGENT_WAIT; /* no event: go straight on */
    out->wait_ms = 0;
    return;
  }
  const struct script_step *st = &a->reply->steps[a->step++];
  switch (st->kind) {
  case SCRIPT_TEXT:
    emit(out, TURN_EV_TEXT);
    out->ev.text.delta = expand(a, st->text);
    convo_text(&a->convo, out->ev.text.delta, now_ms);
    return;
  case SCRIPT_REASONING:
    emit(out, TURN_EV_REASONING);
    out->ev.text.delta = expand(a, st->text);
    convo_thinking(&a->convo, out->ev.text.delta, now_ms);
    return;
  case SCRIPT_TOOL_USE: {
    if (a->n_calls == AGENT_MAX_CALLS) {
      notice(out, str_of("The model asked for too many tool calls at once."));
      a->stop = TURN_STOP_ERROR;
      a->state = AGENT_S_END;
      return;
    }
    struct agent_call *c = &a->calls[a->n_calls++];
    memset(c, 0, sizeof *c);
    c->step = st;
    snprintf(c->id, sizeof c->id, "u%zu", ++a->tools_used);
    const struct demo_tool *tool = demo_tool_find(st->text);
    c->tier = tool != NULL ? tool->tier : TURN_TIER_NULL;
    convo_tool_use(&a->convo, c->id, st->text, st->input, now_ms);
    emit(out, TURN_EV_TOOL_USE);
    out->ev.tool_use.id = str_of(c->id);
    out->ev.tool_use.tool = str_of(st->text);
    out->ev.tool_use.tier = c->tier;
    a->state = AGENT_S_TOOL_INPUT; /* a script's input is complete at once */
    return;
  }
  case SCRIPT_DELAY:
    out->kind = AGENT_WAIT;
    out->wait_ms = st->ms;
    return;
  case SCRIPT_THROTTLE:
    emit(out, TURN_EV_THROTTLED);
    out->ev.throttled.delay_seconds = st->seconds;
    a->pending_wait_ms = (uint64_t)(st->seconds * 1000.0);
    return;
  case SCRIPT_FAIL: {
    char buf[300];
    snprintf(buf, sizeof buf, "The model call failed: %.200s", st->text);
    turn_str text = {NULL, 0};
    char *copy = turn_arena_alloc(&a->arena, strlen(buf) + 1);
    if (copy != NULL) {
      memcpy(copy, buf, strlen(buf) + 1);
      text = str_of(copy);
    }
    notice(out, text);
    a->stop = TURN_STOP_ERROR;
    a->state = AGENT_S_END;
    return;
  }
  case SCRIPT_STOP:
    a->stop = (turn_stop_reason)st->stop_reason;
    out->kind = AGENT_WAIT;
    out->wait_ms = 0;
    return;
  }
}

/* The current call, once it may run: one-shot tools finish at once. */
static void run_tool(struct agent *a, uint64_t now_ms, struct agent_action *out) {
  struct agent_call *c = &a->calls[a->tool];
  const char *name = c->step->text;
  if (c->decided && c->decision != TURN_DECISION_APPROVED) {
    result(a, now_ms, out, TURN_STATUS_REJECTED,
           str_of(c->decision == TURN_DECISION_TIMEOUT
                      ? "the owner did not answer in time"
                      : "the owner said no"));
    return;
  }
  if (strcmp(name, "count_slowly") == 0) {
    a->progress_done = 0;
    a->state = AGENT_S_PROGRESS;
    out->kind = AGENT_WAIT;
    out->wait_ms = 0;
    return;
  }
  if (strcmp(name, "render_ui") == 0 && a->progress_done == 0) {
    turn_str title, html;
    if (demo_widget_params(c->step->input, &a->arena, &title, &html) != 0) {
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
    demo_tool_finish(name, c->step->input, now_ms, &a->arena, &status, &summary);
  }
  result(a, now_ms, out, status, summary);
}

static void count_step(struct agent *a, uint64_t now_ms, struct agent_action *out) {
  struct agent_call *c = &a->calls[a->tool];
  uint32_t to, interval_ms;
  demo_count_params(c->step->input, &to, &interval_ms);
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
  out->ev.tool_progress.tool = str_of(c->step->text);
  out->ev.tool_progress.message = str_of(copy != NULL ? copy : "");
  a->pending_wait_ms = a->progress_done < to ? interval_ms : 0;
}

void agent_next(struct agent *a, uint64_t now_ms, struct agent_action *out) {
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
    end_turn(a, out, a->cancel_reason, now_ms);
    return;
  }
  switch (a->state) {
  case AGENT_S_TURN:
    emit(out, TURN_EV_TURN);
    out->ev.turn.turn = str_of(a->turn_id);
    out->ev.turn.session = str_of(a->session_id);
    convo_user_text(&a->convo, a->user_text, now_ms);
    a->state = a->replies != NULL ? AGENT_S_CALL : AGENT_S_END;
    if (a->replies == NULL) a->stop = TURN_STOP_ERROR;
    return;
  case AGENT_S_CALL:
    if (a->model_calls == MAX_MODEL_CALLS) {
      end_turn(a, out, TURN_STOP_LIMIT_TURNS, now_ms);
      return;
    }
    a->reply = script_reply_at(a->replies, a->model_calls++);
    a->step = 0;
    a->n_calls = 0;
    a->tool = 0;
    a->stop = TURN_STOP_END_TURN;
    a->state = AGENT_S_STEP;
    do_step(a, now_ms, out);
    return;
  case AGENT_S_STEP:
    do_step(a, now_ms, out);
    return;
  case AGENT_S_TOOL_INPUT: {
    struct agent_call *c = &a->calls[a->n_calls - 1];
    emit(out, TURN_EV_TOOL_INPUT);
    out->ev.tool_input.id = str_of(c->id);
    out->ev.tool_input.tool = str_of(c->step->text);
    out->ev.tool_input.input = input_of(a, c);
    a->state = AGENT_S_STEP;
    return;
  }
  case AGENT_S_TOOLS: {
    if (a->tool == a->n_calls) {
      convo_finish(&a->convo); /* the results go back in one message */
      a->state = AGENT_S_CALL; /* the next model call, with the results */
      out->kind = AGENT_WAIT;
      out->wait_ms = 0;
      return;
    }
    struct agent_call *c = &a->calls[a->tool];
    if (c->tier == 2) {
      const struct demo_tool *tool = demo_tool_find(c->step->text);
      snprintf(c->request, sizeof c->request, "%.40s.a%zu", a->turn_id,
               ++a->approvals_asked);
      emit(out, TURN_EV_APPROVAL);
      out->ev.approval.request = str_of(c->request);
      out->ev.approval.tool = str_of(c->step->text);
      out->ev.approval.tier = 2;
      out->ev.approval.effect = str_of(tool != NULL ? tool->effect : "");
      out->ev.approval.input = input_of(a, c);
      a->deadline_ms = now_ms + (uint64_t)a->approval_timeout_s * 1000;
      out->ev.approval.has_expires_at = true;
      out->ev.approval.expires_at_s =
          (double)a->deadline_ms / 1000.0; /* the deadline itself */
      a->state = AGENT_S_APPROVAL;
      return;
    }
    a->state = AGENT_S_RUN_TOOL;
    run_tool(a, now_ms, out);
    return;
  }
  case AGENT_S_APPROVAL: {
    struct agent_call *c = &a->calls[a->tool];
    if (!c->decided && now_ms < a->deadline_ms) {
      out->kind = AGENT_AWAIT;
      out->wait_ms = a->deadline_ms - now_ms;
      return;
    }
    if (!c->decided) { /* nothing approves on its own: time running out is a no */
      c->decided = true;
      c->decision = TURN_DECISION_TIMEOUT;
    }
    emit(out, TURN_EV_APPROVAL_DECIDED);
    out->ev.approval_decided.request = str_of(c->request);
    out->ev.approval_decided.decision = c->decision;
    a->state = AGENT_S_RUN_TOOL;
    return;
  }
  case AGENT_S_RUN_TOOL:
    run_tool(a, now_ms, out);
    return;
  case AGENT_S_PROGRESS:
    count_step(a, now_ms, out);
    return;
  case AGENT_S_END:
    if (a->replies == NULL && !a->told_no_reply) {
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
