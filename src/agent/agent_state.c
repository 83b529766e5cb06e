/* The agent core's moves between states (see agent.h for the states, and
 * agent_next.c for the machine that makes them): the table of allowed moves,
 * and agent_set_state(), through which every move goes and which refuses one
 * the table does not list:
 *   TURN       -> CALL, END                    [next_action: a model, or none]
 *   CALL       -> MODEL                        [next_action: the call starts]
 *   MODEL      -> RETRY                        [agent_reply_take: throttled]
 *   MODEL      -> TOOLS                        [reply_done: its calls run]
 *   RETRY      -> MODEL                        [next_action: the call again]
 *   TOOLS      -> TOOLS                        [result: a call refused or skipped]
 *   TOOLS      -> APPROVAL, RUN_TOOL           [agent_tools_step: tier 2, or not]
 *   TOOLS      -> CALL, END                    [agent_tools_step: all calls done]
 *   APPROVAL   -> RUN_TOOL                     [agent_approval_step: decided]
 *   RUN_TOOL   -> SHELL_TOOL, PROGRESS         [agent_run_tool: the owner's tool,
 *                                               count_slowly]
 *   RUN_TOOL, PROGRESS, SHELL_TOOL -> TOOLS    [result: the call is done]
 *   any state but TURN, DONE -> END, DONE      [close_call, end_turn: the end, cut
 *                                               short or not; END -> END per call]
 *   TURN -> END also [next_action: no script turn matches]; MODEL -> END also
 *   [reply_done, call_failed, agent_reply_take: the reply ends the turn] */
#include "agent_impl.h"

#include <assert.h>
#include <stdio.h>

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

/* Build with -DAGENT_TRACE to see every move on stderr. */
void agent_set_state(struct agent *a, enum agent_state next) {
  assert(next_states[a->state] & (1u << next));
#ifdef AGENT_TRACE
  fprintf(stderr, "agent %s: %d -> %d\n", a->turn_id, (int)a->state, (int)next);
#endif
  a->state = next;
}
