/* The reply's tool calls, run in order by the agent core (states TOOLS,
 * APPROVAL, RUN_TOOL, PROGRESS and SHELL_TOOL): each is checked against its
 * schema, asked about when it is tier 2, run (a demo tool here, an owner's by
 * the shell), and closed by exactly one tool_result. */
#include "agent_impl.h"

#include "schema.h"
#include "tools_demo.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void agent_tool_event_clear(struct agent *a) {
  free(a->tool_text);
  free(a->tool_result);
  a->tool_text = a->tool_result = NULL;
  a->tool_has_event = false;
}

void agent_calls_clear(struct agent *a) {
  for (size_t i = 0; i < a->n_calls; i++) {
    free(a->calls[i].id);
    free(a->calls[i].name);
    free(a->calls[i].input);
  }
  a->n_calls = a->tool = 0;
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
turn_input agent_call_input(struct agent *a, const struct agent_call *c) {
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
  agent_emit(out, TURN_EV_TOOL_RESULT);
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
  agent_set_state(a, AGENT_S_TOOLS);
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
  agent_emit(out, TURN_EV_GUARD);
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

/* Why the call may not run, in the arena, or NULL when it may: an unknown tool,
 * or an input its schema refuses (the model is told, and may try again). */
static const char *refusal(struct agent *a, const struct agent_call *c) {
  if (a->tools == NULL) return NULL; /* the script's demo: unchecked */
  const struct tool_def *def = toolset_find(a->tools, c->name);
  if (def == NULL) {
    char buf[200];
    snprintf(buf, sizeof buf, "no such tool: %.128s", c->name);
    return agent_text(a, buf, strlen(buf)).p;
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
  return agent_text(a, buf, strlen(buf)).p;
}

/* The current call, once it may run: one-shot tools finish at once. */
void agent_run_tool(struct agent *a, uint64_t now_ms, struct agent_action *out) {
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
    agent_tool_event_clear(a);
    out->kind = AGENT_RUN_TOOL;
    out->call = c;
    out->tool = def;
    agent_set_state(a, AGENT_S_SHELL_TOOL);
    return;
  }
  if (strcmp(name, "count_slowly") == 0) {
    a->progress_done = 0;
    agent_set_state(a, AGENT_S_PROGRESS);
    agent_go_on(out);
    return;
  }
  if (strcmp(name, "render_ui") == 0 && a->progress_done == 0) {
    turn_str title, html;
    if (demo_widget_params(c->input, &a->arena, &title, &html) != 0) {
      result(a, now_ms, out, TURN_STATUS_ERROR,
             str_of("render_ui needs a title and html"));
      return;
    }
    agent_emit(out, TURN_EV_WIDGET);
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

void agent_count_step(struct agent *a, uint64_t now_ms, struct agent_action *out) {
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
  agent_emit(out, TURN_EV_TOOL_PROGRESS);
  out->ev.tool_progress.id = str_of(c->id);
  out->ev.tool_progress.tool = str_of(c->name);
  out->ev.tool_progress.message = str_of(copy != NULL ? copy : "");
  a->pending_wait_ms = a->progress_done < to ? interval_ms : 0;
}

/* The owner's tool, run by the shell: its progress, then its result. */
void agent_shell_tool_step(struct agent *a, uint64_t now_ms, struct agent_action *out) {
  struct agent_call *c = &a->calls[a->tool];
  if (!a->tool_has_event) {
    out->kind = AGENT_AWAIT_TOOL;
    return;
  }
  turn_str text = agent_text(a, a->tool_text != NULL ? a->tool_text : "",
                             a->tool_text != NULL ? strlen(a->tool_text) : 0);
  if (!a->tool_done) {
    agent_emit(out, TURN_EV_TOOL_PROGRESS);
    out->ev.tool_progress.id = str_of(c->id);
    out->ev.tool_progress.tool = str_of(c->name);
    out->ev.tool_progress.message = text;
    agent_tool_event_clear(a);
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
  agent_tool_event_clear(a);
  result_for(a, now_ms, out, ok ? TURN_STATUS_OK : TURN_STATUS_ERROR, text, for_model);
}

/* TOOLS: the next call of the reply is refused, asked about or run; after the
 * last, the next model call or the end. */
void agent_tools_step(struct agent *a, uint64_t now_ms, struct agent_action *out) {
  if (a->tool == a->n_calls) {
    convo_finish(&a->convo); /* the results go back in one message */
    /* the next model call, with the results; or the end the limit asked for */
    agent_set_state(a, a->skip_calls != NULL ? AGENT_S_END : AGENT_S_CALL);
    agent_go_on(out);
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
    agent_emit(out, TURN_EV_APPROVAL);
    out->ev.approval.request = str_of(c->request);
    out->ev.approval.tool = str_of(c->name);
    out->ev.approval.tier = 2;
    out->ev.approval.effect = str_of(effect);
    out->ev.approval.input = agent_call_input(a, c);
    c->step_up = needs_step_up(a, effect);
    a->deadline_ms = now_ms + (uint64_t)a->approval_timeout_s * 1000;
    out->ev.approval.has_expires_at = true;
    out->ev.approval.expires_at_s =
        (double)a->deadline_ms / 1000.0; /* the deadline itself */
    agent_set_state(a, AGENT_S_APPROVAL);
    return;
  }
  agent_set_state(a, AGENT_S_RUN_TOOL);
  agent_run_tool(a, now_ms, out);
}

/* APPROVAL: the step-up's guard events, a wait for the owner, then the
 * decision. */
void agent_approval_step(struct agent *a, uint64_t now_ms, struct agent_action *out) {
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
  agent_emit(out, TURN_EV_APPROVAL_DECIDED);
  out->ev.approval_decided.request = str_of(c->request);
  out->ev.approval_decided.decision = c->decision;
  agent_set_state(a, AGENT_S_RUN_TOOL);
}
