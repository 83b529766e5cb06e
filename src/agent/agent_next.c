/* The agent core's state machine: one per turn (see agent.h for the states).
 * Each agent_next() makes at most one event, so the shell decides when to
 * write it and the order checker sees events one by one.
 *
 *   TURN -> CALL -> MODEL* (-> RETRY -> CALL ...) -> TOOLS -> (APPROVAL) -> RUN_TOOL
 *        -> (PROGRESS*) -> TOOLS ... -> CALL (the next model call) ... -> END -> DONE
 *   any state but DONE -> END [agent_cancel, a failed model call, the call cap]
 *
 * (agent_state.c lists every move and checks each one.)
 *
 * In MODEL, each model event (model.h) becomes at most one protocol event
 * (agent_reply.c): the script's come from its steps (agent_script.c); an
 * external model's come from agent_model_event, one at a time. However the
 * turn ends, the end closes every call it left open first (end_turn). */
#include "agent_impl.h"

#include <stdio.h>
#include <string.h>

/* Whether the current call has begun to act: an owner's program runs,
 * count_slowly counts, or render_ui's widget is out. The model is told so if
 * the turn ends there, not that it never ran. */
static bool call_began(const struct agent *a) {
  return a->state == AGENT_S_SHELL_TOOL || a->state == AGENT_S_PROGRESS ||
         (a->state == AGENT_S_RUN_TOOL && a->progress_done > 0);
}

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
    agent_emit(out, TURN_EV_APPROVAL_DECIDED);
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
  turn_str summary = agent_text(a, buf, strlen(buf));
  /* A call whose input never came was not put in the conversation. */
  if (c->input != NULL && !c->result_said && !a->reply_dropped)
    convo_tool_result(&a->convo, c->id, summary, true, now_ms);
  agent_emit(out, TURN_EV_TOOL_RESULT);
  out->ev.tool_result.id = str_of(c->id);
  out->ev.tool_result.tool = str_of(c->name);
  out->ev.tool_result.status = status;
  out->ev.tool_result.summary = summary;
  out->ev.tool_result.approval =
      c->decision_told ? approval_of_decision[c->decision] : TURN_APPROVAL_NULL;
  a->tool++;
  agent_set_state(a, AGENT_S_END); /* the calls after it never began */
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
    agent_emit(out, TURN_EV_ERROR);
    out->ev.error.message = str_of(a->fail_why);
    return;
  }
  agent_calls_clear(a);
  agent_emit(out, TURN_EV_END);
  out->ev.end.stop_reason = why;
  agent_set_state(a, AGENT_S_DONE);
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
      agent_flush_held(a, now_ms,
                       out); /* it is in the conversation: readers get it too */
      return;
    }
    end_turn(a, out, a->cancel_reason, now_ms);
    return;
  }
  if (a->uncounted_due) {
    a->uncounted_due = false;
    a->uncounted_told = true;
    agent_notice(out, str_of("The model's server did not say how many tokens this reply "
                             "used: the turn's token limit cannot count them."));
    return;
  }
  switch (a->state) {
  case AGENT_S_TURN:
    agent_emit(out, TURN_EV_TURN);
    out->ev.turn.turn = str_of(a->turn_id);
    out->ev.turn.session = str_of(a->session_id);
    convo_user_text(&a->convo, a->user_text, now_ms);
    agent_set_state(a, a->external || a->replies != NULL ? AGENT_S_CALL : AGENT_S_END);
    if (a->state == AGENT_S_END) a->stop = TURN_STOP_ERROR;
    return;
  case AGENT_S_CALL:
    if (a->model_calls == a->limits.max_model_calls) {
      end_turn(a, out, TURN_STOP_LIMIT_TURNS, now_ms);
      return;
    }
    agent_calls_clear(a);
    a->stop = TURN_STOP_END_TURN;
    a->explicit_stop = false;
    a->retries = 0;
    a->call_in = a->call_out = 0;
    a->call_counted = false;
    agent_set_state(a, AGENT_S_MODEL);
    if (a->external) {
      a->model_calls++;
      out->kind = AGENT_MODEL_CALL;
      return;
    }
    a->reply = script_reply_at(a->replies, a->model_calls++);
    a->step = 0;
    a->step_begun = false;
    agent_script_step(a, now_ms, out);
    return;
  case AGENT_S_MODEL:
    if (a->external)
      agent_reply_step(a, now_ms, out);
    else
      agent_script_step(a, now_ms, out);
    return;
  case AGENT_S_RETRY:
    /* The throttle's wait is over: the same call again. The script goes on
     * after its throttle step; a provider is sent the call anew, and what the
     * cut attempt said stays said. Whether it counts is the new attempt's to
     * say. */
    a->call_counted = false;
    agent_set_state(a, AGENT_S_MODEL);
    if (a->external) {
      out->kind = AGENT_MODEL_CALL;
      return;
    }
    agent_script_step(a, now_ms, out);
    return;
  case AGENT_S_TOOLS:
    agent_tools_step(a, now_ms, out);
    return;
  case AGENT_S_APPROVAL:
    agent_approval_step(a, now_ms, out);
    return;
  case AGENT_S_RUN_TOOL:
    agent_run_tool(a, now_ms, out);
    return;
  case AGENT_S_PROGRESS:
    agent_count_step(a, now_ms, out);
    return;
  case AGENT_S_SHELL_TOOL:
    agent_shell_tool_step(a, now_ms, out);
    return;
  case AGENT_S_END:
    if (!a->external && a->replies == NULL && !a->told_no_reply) {
      a->told_no_reply = true;
      agent_notice(out, str_of("The model has no reply to this."));
      return;
    }
    end_turn(a, out, a->stop, now_ms);
    return;
  case AGENT_S_DONE:
    out->kind = AGENT_END;
    return;
  }
}

void agent_next(struct agent *a, uint64_t now_ms, struct agent_action *out) {
  next_action(a, now_ms, out);
  if (out->kind == AGENT_EMIT) a->last_emitted = out->ev.type; /* for agent_fail */
  /* Any other event ends a burst of deltas: the next delta, the first of a new
   * burst (after a tool's result, say), goes out at once. */
  if (out->kind == AGENT_EMIT && out->ev.type != TURN_EV_TEXT &&
      out->ev.type != TURN_EV_REASONING)
    a->window_end_ms = a->last_delta_ms = 0;
}
