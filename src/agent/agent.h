/* The agent core of one turn, without I/O: it turns what the model streams
 * (model.h) into protocol events, runs the tool calls the model asks for, and
 * says what the shell must do next (emit an event, wait, start a model call,
 * wait for the model or the owner, or stop). The shell owns time, timers and
 * sockets and feeds back what happened (time, model events, a decision, a
 * cancel).
 *
 * The model is the script (script.h), which the core plays itself, or an
 * external one (a provider): then the core asks the shell to start each call
 * and takes the call's events one by one (agent_model_event). */
#ifndef TURND_AGENT_H
#define TURND_AGENT_H

#include "convo.h"
#include "model.h"
#include "script.h"
#include "tools.h"
#include "turn/turn.h"

#include <stdbool.h>
#include <stdint.h>

enum agent_action_kind {
  AGENT_EMIT,        /* ev is the next event; its seq is for the shell to set */
  AGENT_WAIT,        /* call agent_next again after wait_ms */
  AGENT_AWAIT,       /* an approval waits: call agent_next after agent_decide, or after
                        wait_ms, when it expires */
  AGENT_MODEL_CALL,  /* external model: start a call now (again, after a throttle)
                        with the session's conversation: every message stored
                        before this turn and every message taken from it so far;
                        then call agent_next */
  AGENT_RUN_TOOL,    /* run the owner's tool `tool` for call `call` with its input
                        (call->input), then call agent_next */
  AGENT_AWAIT_TOOL,  /* call agent_next after agent_tool_progress / _done */
  AGENT_AWAIT_MODEL, /* external model: call agent_next after agent_model_event, or
                        after wait_ms when it is not 0 (coalesced text is due) */
  AGENT_END          /* the turn is over: the last event emitted was its end */
};

struct agent_call;

struct agent_action {
  enum agent_action_kind kind;
  turn_event ev;                 /* AGENT_EMIT; strings valid until the next agent call */
  uint64_t wait_ms;              /* AGENT_WAIT, AGENT_AWAIT */
  const struct agent_call *call; /* AGENT_RUN_TOOL: valid until its result */
  const struct tool_def *tool;   /* AGENT_RUN_TOOL: borrowed from the toolset */
};

enum agent_state {
  AGENT_S_TURN,       /* the turn event comes first */
  AGENT_S_CALL,       /* a model call starts */
  AGENT_S_MODEL,      /* the call streams: model events become protocol events */
  AGENT_S_RETRY,      /* the call was throttled: it starts again after a wait */
  AGENT_S_TOOLS,      /* the reply is done: run its tool calls in order */
  AGENT_S_APPROVAL,   /* a tier-2 call waits for the owner */
  AGENT_S_RUN_TOOL,   /* the current call runs (approved or not tier 2) */
  AGENT_S_PROGRESS,   /* count_slowly reports its steps */
  AGENT_S_SHELL_TOOL, /* the shell runs an owner's tool: its events come in */
  AGENT_S_END,        /* the end event comes next */
  AGENT_S_DONE
};

#define AGENT_MAX_CALLS 16 /* tool calls in one reply */

/* A tool call of the current reply. Strings owned; the array grows as calls come
 * (a turn that calls no tool costs nothing here). */
struct agent_call {
  char *id;         /* the model's id for the call ("u<k>" for the script) */
  char *name;       /* the tool */
  char *input;      /* its input as JSON text, once complete; else NULL */
  char request[64]; /* "<turn>.a<k>": unique across turns, for the approval route */
  int tier;
  bool decided;
  turn_decision decision;
  bool decision_told; /* approval_decided went out */
  bool cut_waiting;   /* the turn ended while its approval waited: the end decided it */
  bool result_said;   /* its result is in the conversation, but readers never got
                         its event (agent_fail): the end says so */
  bool locked;        /* tier 2 while the backend was locked: it did not run */
  bool step_up;       /* approving it needs the owner's step-up (its effect) */
  bool step_up_told;  /* the guard event that asks for it was emitted */
  enum {
    CALL_STEP_UP_NEWS_NONE,
    CALL_STEP_UP_NEWS_PASSED,
    CALL_STEP_UP_NEWS_FAILED
  } step_up_news; /* a step-up's outcome, to emit as a guard event */
};

/* The owner guard as the shell keeps it (borrowed; read at each tier-2 call). */
struct agent_guard {
  bool locked;                        /* tier-2 calls do not run, nobody is asked */
  const char *const *step_up_effects; /* approving a call with one of these */
  size_t n_step_up_effects;           /* effects needs a step-up */
  bool pin_set; /* a PIN exists; else the step-up's ask says how to set one */
};

/* What bounds a turn. */
struct agent_limits {
  uint32_t max_model_calls;  /* more ends the turn with limit_turns (0: 20) */
  uint64_t max_total_tokens; /* input + output tokens of all its calls reaching
                                this end it with limit_total_tokens (0: none) */
  uint32_t coalesce_ms;      /* an external model's text or reasoning deltas that
                                come within this of the last one sent go out
                                together, when it is over (0: each at once) */
};

struct agent {
  const struct script_replies *replies; /* borrowed from the script */
  const struct toolset *tools;          /* borrowed; NULL: the demo tools, unchecked */
  const struct agent_guard *guard;      /* borrowed; NULL: never locked, no step-up */
  bool external;                        /* the model is the shell's, not the script */
  char *user_text, *turn_id, *session_id;
  uint32_t approval_timeout_s;
  enum agent_state state;
  size_t model_calls;               /* model calls started so far */
  const struct script_reply *reply; /* the script's reply to this call */
  size_t step;                      /* its next step */
  bool step_begun;                  /* that step (a tool_use) is half done */
  bool explicit_stop;               /* the script's reply said how it stops */
  const char *skip_calls;   /* the turn ends after this reply, whose calls do not run:
                               why, as each call's result says it; NULL: they run */
  turn_stop_reason stop;    /* how the turn ends when nothing else says */
  struct model_event inbox; /* external: the model event to take next */
  bool has_inbox;
  turn_buf inbox_text;        /* its strings: text, then id and name, each NUL-ended */
  unsigned retries;           /* throttled attempts of the current call */
  uint64_t tokens_in;         /* usage of the calls before this one */
  uint64_t tokens_out;        /* ... */
  uint64_t call_in, call_out; /* this call's usage so far */
  bool call_counted;          /* this call reported its usage */
  bool uncounted_due;         /* a notice that a reply went uncounted comes next */
  bool uncounted_told;        /* ... and was made in this turn */
  struct agent_limits limits;
  turn_buf held;                   /* coalesced text not yet sent */
  enum model_event_kind held_kind; /* MODEL_EV_TEXT or MODEL_EV_REASONING */
  uint64_t window_end_ms;          /* deltas of a burst before this are held */
  uint64_t last_delta_ms;          /* when the last delta came (0: none since
                                      another event): one that comes a whole
                                      window later starts a burst */
  bool tool_has_event;             /* SHELL_TOOL: an event waits in what follows */
  bool tool_done;                  /* ... it is the result (else a progress line) */
  bool tool_ok;                    /* ... */
  char *tool_text;                 /* ... its message or summary (owned) */
  char *tool_result;               /* ... the result's JSON for the model (owned) */
  uint64_t pending_wait_ms;        /* a wait owed after the event just emitted */
  struct agent_call *calls;        /* owned; cap_calls of them, n_calls in use */
  size_t cap_calls;
  size_t n_calls, tool;   /* calls of this reply; the one running */
  size_t tools_used;      /* ids made up so far in the turn (script calls, and an
                             external model's calls that came without one) */
  turn_buf call_ids;      /* external: every call id of the turn, each NUL-ended */
  size_t approvals_asked; /* across the turn, for request ids "<turn>.a<k>" */
  uint64_t deadline_ms;   /* AGENT_S_APPROVAL: when it times out */
  uint32_t progress_done; /* AGENT_S_PROGRESS: steps reported */
  bool cancelled;
  turn_stop_reason cancel_reason; /* CANCELLED (the owner), INTERRUPT (turnd stops)
                                     or ERROR (agent_fail) */
  const char *end_why;            /* what ends the turn before its calls ran, when
                                     it is not a cancel (a constant): the results
                                     the end gives them say it */
  const char *fail_why;           /* agent_fail: the error event's message (borrowed) */
  bool fail_told;                 /* ... that error event went out */
  bool reply_dropped;             /* ... and the reply it cut was not kept */
  turn_event_type last_emitted;   /* the type of the last event emitted */
  bool told_no_reply;             /* the notice for a script without a matching turn */
  turn_arena arena;               /* strings of the event being emitted */
  struct convo convo;             /* the turn's messages, for the shell to store */
};

/* Starts a turn (copies the strings). replies NULL: no script turn matches, and
 * the turn ends with a notice. Returns 0 or -1 when out of memory. */
int agent_init(struct agent *a, const struct script_replies *replies,
               const char *user_text, const char *turn_id, const char *session_id,
               uint32_t approval_timeout_s);
/* Makes the model external (before the first agent_next): replies are unused. */
void agent_use_external_model(struct agent *a);
/* Sets the turn's limits (before the first agent_next; copied). */
void agent_set_limits(struct agent *a, const struct agent_limits *l);
/* The tools the model may call (borrowed; outlives the agent). Their inputs are
 * checked against their schemas before anything runs or is asked; without a
 * toolset the demo tools run as the script calls them, unchecked. */
void agent_set_tools(struct agent *a, const struct toolset *tools);
/* The owner guard (borrowed; outlives the agent; NULL: none). */
void agent_set_guard(struct agent *a, const struct agent_guard *guard);
/* After AGENT_AWAIT_TOOL: a progress line of the running tool (copied), or its
 * result (ok, a summary for the owner and the model, and its result as JSON
 * text for the model or NULL; copied). Call agent_next next. Return 0, or -1
 * when no tool of the agent's runs (the event is ignored). */
int agent_tool_progress(struct agent *a, const char *message);
int agent_tool_done(struct agent *a, bool ok, const char *summary,
                    const char *result_json);
void agent_fini(struct agent *a);

/* The next action, at time now_ms (Unix milliseconds). */
void agent_next(struct agent *a, uint64_t now_ms, struct agent_action *out);
/* The external model's next event (copied), after AGENT_AWAIT_MODEL: call
 * agent_next next. Returns 0, or -1 when the agent does not wait for one (it is
 * then ignored: a late event after a cancel) or memory ran out (the call then
 * fails). */
int agent_model_event(struct agent *a, const struct model_event *ev);
/* The owner asked to stop (why: TURN_STOP_CANCELLED) or turnd is stopping
 * (TURN_STOP_INTERRUPT): the next actions end the turn for that reason, and the
 * reply cut short is kept as far as it came.
 *
 * However a turn ends, every call it started (its tool_use went out) gets its
 * tool_result before the end, one event per agent_next: an approval that waits
 * is decided first (approval_decided "rejected"), and the result says why the
 * call did not run, or that it was stopped while it ran. The model is told the
 * same in the call's result (when its input came: else it never saw the call).
 * A cancel keeps calls from running as the owner's no would: their status is
 * "rejected"; any other end gives "error". */
void agent_cancel(struct agent *a, turn_stop_reason why);
/* turnd failed outside the agent (why: a constant, borrowed; the turn's log is
 * full): the next actions close the calls readers saw open as agent_cancel's
 * do, then emit an error event with why, then the end with "error". Held text
 * is dropped, and so is a reply still streaming: it is not put in the
 * conversation (nor its calls' results). last_dropped: the last event emitted
 * was not kept, so readers did not see it; the calls are closed as they stood
 * before it. Call it between agent_next calls, after taking their messages.
 * Does nothing once the end is out or after a first agent_fail. */
void agent_fail(struct agent *a, const char *why, bool last_dropped);
/* Whether agent_fail was called. */
bool agent_failed(const struct agent *a);
/* The shell is about to wait: gives back the memory of the last event's strings
 * (a turn that waits costs no arena block). */
void agent_idle(struct agent *a);
/* A message of the conversation that is complete (see convo.h): call after every
 * agent_next until it returns false. The caller frees out->json. */
bool agent_take_message(struct agent *a, struct convo_message *out);
/* The front of the message being built that no later piece changes (see
 * convo_front), and into *part its number among the pieces of that message's
 * front; agent_message_front_taken once it is stored. */
turn_str agent_message_front(const struct agent *a, uint64_t *part);
void agent_message_front_taken(struct agent *a);
/* The owner's answer to approval request at now_ms. Returns 0, or -1 for a
 * request this turn does not wait for (any more: a decision at or past the
 * deadline is refused, and the timeout stands) and for an approval that needs a
 * step-up (agent_step_up approves those). */
int agent_decide(struct agent *a, const char *request, turn_decision d, uint64_t now_ms);

/* What approval request is to the turn. */
enum agent_approval {
  AGENT_APPROVAL_UNKNOWN, /* not this turn's, or not waiting (any more) */
  AGENT_APPROVAL_WAITING, /* the owner may decide */
  AGENT_APPROVAL_STEP_UP  /* ... and approving needs a step-up first */
};
enum agent_approval agent_approval_of(const struct agent *a, const char *request,
                                      uint64_t now_ms);
/* The step-up for approval request is over: passed approves the call (the guard
 * event "passed", then approval_decided); failed leaves it waiting (the guard
 * event "failed"). Call agent_next next. Returns 0, or -1 when the request does
 * not wait for a step-up. */
int agent_step_up(struct agent *a, const char *request, bool passed, uint64_t now_ms);

#endif
