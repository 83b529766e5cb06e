/* The agent core of one turn, without I/O: it walks the model's replies and the
 * tool calls they ask for, and says what the shell must do next (emit an event,
 * wait, wait for the owner, or stop). The shell owns time, timers and sockets and
 * feeds back what happened (time, a decision, a cancel). */
#ifndef TURND_AGENT_H
#define TURND_AGENT_H

#include "convo.h"
#include "script.h"
#include "turn/turn.h"

#include <stdbool.h>
#include <stdint.h>

enum agent_action_kind {
  AGENT_EMIT,  /* ev is the next event; its seq is for the shell to set */
  AGENT_WAIT,  /* call agent_next again after wait_ms */
  AGENT_AWAIT, /* an approval waits: call agent_next after agent_decide, or after
                  wait_ms, when it expires */
  AGENT_END    /* the turn is over: the last event emitted was its end */
};

struct agent_action {
  enum agent_action_kind kind;
  turn_event ev;    /* AGENT_EMIT; strings valid until the next agent call */
  uint64_t wait_ms; /* AGENT_WAIT, AGENT_AWAIT */
};

enum agent_state {
  AGENT_S_TURN,       /* the turn event comes first */
  AGENT_S_CALL,       /* a model call starts: pick its reply */
  AGENT_S_STEP,       /* performing the reply's steps */
  AGENT_S_TOOL_INPUT, /* the last tool_use's input follows it */
  AGENT_S_TOOLS,      /* the reply is done: run its tool calls in order */
  AGENT_S_APPROVAL,   /* a tier-2 call waits for the owner */
  AGENT_S_RUN_TOOL,   /* the current call runs (approved or not tier 2) */
  AGENT_S_PROGRESS,   /* count_slowly reports its steps */
  AGENT_S_END,        /* the end event comes next */
  AGENT_S_DONE
};

#define AGENT_MAX_CALLS 16 /* tool calls in one reply */

struct agent_call {
  char id[16];
  char request[64]; /* "<turn>.a<k>": unique across turns, for the approval route */
  const struct script_step *step; /* the tool_use step: name and input */
  int tier;
  bool decided;
  turn_decision decision;
};

struct agent {
  const struct script_replies *replies; /* borrowed from the script */
  char *user_text, *turn_id, *session_id;
  uint32_t approval_timeout_s;
  enum agent_state state;
  size_t model_calls; /* model calls started so far */
  const struct script_reply *reply;
  size_t step;              /* next step of reply */
  turn_stop_reason stop;    /* how the turn ends when nothing else says */
  uint64_t pending_wait_ms; /* a wait owed after the event just emitted */
  struct agent_call calls[AGENT_MAX_CALLS];
  size_t n_calls, tool;   /* calls of this reply; the one running */
  size_t tools_used;      /* across the turn, for ids */
  size_t approvals_asked; /* across the turn, for request ids "<turn>.a<k>" */
  uint64_t deadline_ms;   /* AGENT_S_APPROVAL: when it times out */
  uint32_t progress_done; /* AGENT_S_PROGRESS: steps reported */
  bool cancelled;
  turn_stop_reason cancel_reason; /* CANCELLED (the owner) or INTERRUPT (turnd stops) */
  bool told_no_reply;             /* the notice for a script without a matching turn */
  turn_arena arena;               /* strings of the event being emitted */
  struct convo convo;             /* the turn's messages, for the shell to store */
};

/* Starts a turn (copies the strings). replies NULL: no script turn matches, and
 * the turn ends with a notice. Returns 0 or -1 when out of memory. */
int agent_init(struct agent *a, const struct script_replies *replies,
               const char *user_text, const char *turn_id, const char *session_id,
               uint32_t approval_timeout_s);
void agent_fini(struct agent *a);

/* The next action, at time now_ms (Unix milliseconds). */
void agent_next(struct agent *a, uint64_t now_ms, struct agent_action *out);
/* The owner asked to stop (why: TURN_STOP_CANCELLED) or turnd is stopping
 * (TURN_STOP_INTERRUPT): the next action ends the turn for that reason, and the
 * reply cut short is kept as far as it came. */
void agent_cancel(struct agent *a, turn_stop_reason why);
/* The shell is about to wait: gives back the memory of the last event's strings
 * (a turn that waits costs no arena block). */
void agent_idle(struct agent *a);
/* A message of the conversation that is complete (see convo.h): call after every
 * agent_next until it returns false. The caller frees out->json. */
bool agent_take_message(struct agent *a, struct convo_message *out);
/* The owner's answer to approval request at now_ms. Returns 0, or -1 for a
 * request this turn does not wait for (any more: a decision at or past the
 * deadline is refused, and the timeout stands). */
int agent_decide(struct agent *a, const char *request, turn_decision d, uint64_t now_ms);

#endif
