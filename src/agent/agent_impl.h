/* Inside the agent core (agent.h): what its files share. agent.c takes the
 * shell's inputs; agent_next.c is the state machine that makes each action,
 * through agent_state.c's moves and agent_action.c's actions;
 * agent_reply.c turns the model's events into protocol events; agent_tools.c
 * runs the reply's tool calls; agent_script.c plays the script as the model.
 * Not for the shell. */
#ifndef TURND_AGENT_AGENT_IMPL_H
#define TURND_AGENT_AGENT_IMPL_H

#include "agent.h"

#define HELD_CAP (2u << 20) /* bytes of coalesced text held at once */
/* How a tool call's input is read: any JSON value (the schema says which it may
 * be), not a key twice. */
#define INPUT_JSON_FLAGS (JSON_DECODE_ANY | JSON_REJECT_DUPLICATES)

static inline turn_str str_of(const char *s) {
  return turn_str_c(s);
}

/* ---- Moves and actions (agent_state.c, agent_action.c) ------------------- */

/* The one place the state changes: asserts that the move is one the table of
 * transitions allows. */
void agent_set_state(struct agent *a, enum agent_state next);
/* out becomes an event of this type, its fields zero. */
void agent_emit(struct agent_action *out, turn_event_type type);
/* No event this step: the shell calls agent_next again at once. */
void agent_go_on(struct agent_action *out);
void agent_notice(struct agent_action *out, turn_str text);
/* text[0..len) copied into the arena, for an event's string ("" when out of
 * memory); valid until the next agent call. */
turn_str agent_text(struct agent *a, const char *text, size_t len);

/* ---- The model's reply, state MODEL (agent_reply.c) ----------------------- */

/* One model event of the current call (borrowed): at most one protocol event. */
void agent_reply_take(struct agent *a, const struct model_event *ev, uint64_t now_ms,
                      struct agent_action *out);
/* An external model's step: the event in the inbox, held text that is due, or
 * a wait for either. */
void agent_reply_step(struct agent *a, uint64_t now_ms, struct agent_action *out);
/* Sends held text as one text or reasoning event (a part of it when long). */
void agent_flush_held(struct agent *a, uint64_t now_ms, struct agent_action *out);

/* ---- The reply's tool calls (agent_tools.c) ------------------------------- */

/* Drops the shell tool's event that waits (SHELL_TOOL). */
void agent_tool_event_clear(struct agent *a);
/* Drops the reply's calls. */
void agent_calls_clear(struct agent *a);
/* The input field of c, as tool_input and approval carry it. */
turn_input agent_call_input(struct agent *a, const struct agent_call *c);
/* The step of each tool state: TOOLS, APPROVAL, RUN_TOOL, PROGRESS, SHELL_TOOL. */
void agent_tools_step(struct agent *a, uint64_t now_ms, struct agent_action *out);
void agent_approval_step(struct agent *a, uint64_t now_ms, struct agent_action *out);
void agent_run_tool(struct agent *a, uint64_t now_ms, struct agent_action *out);
void agent_count_step(struct agent *a, uint64_t now_ms, struct agent_action *out);
void agent_shell_tool_step(struct agent *a, uint64_t now_ms, struct agent_action *out);

/* ---- The script as the model (agent_script.c) ----------------------------- */

/* The script's next model event for this call, or a wait. */
void agent_script_step(struct agent *a, uint64_t now_ms, struct agent_action *out);

#endif
