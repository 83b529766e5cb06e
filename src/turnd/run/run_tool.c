/* A run's calls to the owner's tools (tools files): the agent asks with
 * AGENT_RUN_TOOL, the program runs on the loop (tool_proc.c), and its progress
 * and result are fed back to the agent, pumping it after each. */
#include "run.h"

#include "daemon.h"
#include "tool_proc.h"

static void on_tool_event(void *ctx, const struct tool_proc_event *ev) {
  struct run *r = ctx;
  if (ev->kind == TOOL_PROC_PROGRESS) {
    agent_tool_progress(&r->agent, ev->message);
  } else {
    r->tool = NULL; /* its last event: tool_proc frees itself */
    agent_tool_done(&r->agent, ev->ok, ev->summary, ev->result_json);
  }
  run_pump(r);
}

void run_tool_start(struct run *r, const struct agent_call *call,
                    const struct tool_def *tool) {
  const struct tool_config *cfg = &r->d->tools_config->tools[tool->shell_index];
  r->tool = tool_proc_start(r->d->base, cfg, call->input, on_tool_event, r);
  if (r->tool == NULL)
    agent_tool_done(&r->agent, false, "turnd could not start the tool", NULL);
}

void run_tool_stop(struct run *r) {
  if (r->tool != NULL) tool_proc_kill(r->tool);
  r->tool = NULL;
}
