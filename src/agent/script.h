/* The script model: replies written down in advance, for tests and the demo.
 * Format (a contract; tests outside this repository use it):
 *   {"turns": [{"when": "SUBSTRING", "replies": [REPLY, ...]}, ...],
 *    "default": [REPLY, ...]}
 * The first turn whose "when" occurs in the user's text is used, else "default".
 * Model call i of a turn gets replies[i] (past the end: the last). A REPLY is a
 * list of steps done in order; see enum script_step_kind. */
#ifndef TURND_AGENT_SCRIPT_H
#define TURND_AGENT_SCRIPT_H

#include <stddef.h>
#include <stdint.h>

enum script_step_kind {
  SCRIPT_TEXT,      /* {"text": "..."}: text deltas; "{{input}}" is the user's text */
  SCRIPT_REASONING, /* {"reasoning": "..."} */
  SCRIPT_TOOL_USE,  /* {"tool_use": {"name": "...", "input": {...}}} */
  SCRIPT_DELAY,     /* {"delay_ms": N} */
  SCRIPT_THROTTLE,  /* {"throttle": SECONDS}: throttled, then the steps after it */
  SCRIPT_FAIL,      /* {"fail": "message"}: the model call fails */
  SCRIPT_STOP       /* {"stop": "end_turn" | "max_tokens"} */
};

struct script_step {
  enum script_step_kind kind;
  char *text;      /* TEXT, REASONING, FAIL: the text; TOOL_USE: the tool's name */
  char *input;     /* TOOL_USE: the input object as compact JSON */
  double seconds;  /* THROTTLE */
  uint32_t ms;     /* DELAY */
  int stop_reason; /* STOP: a turn_stop_reason */
};

struct script_reply {
  struct script_step *steps;
  size_t n;
};

struct script_replies {
  char *when; /* NULL for the default */
  struct script_reply *replies;
  size_t n; /* >= 1 */
};

struct script {
  struct script_replies *turns;
  size_t n_turns;
  struct script_replies fallback; /* "default"; n == 0 when the script has none */
};

/* Parses a script from JSON text (borrows text). Returns 0, or -1 with a reason
 * (which part of the script is wrong) in err[0..cap). */
int script_parse(struct script *s, const char *text, size_t len, char *err, size_t cap);
void script_free(struct script *s);

/* The replies for a user's text, or NULL when no turn matches and there is no
 * default. */
const struct script_replies *script_pick(const struct script *s, const char *user_text);
/* Reply number call (0-based) of a turn: past the end, the last. */
const struct script_reply *script_reply_at(const struct script_replies *r, size_t call);

/* The built-in demo script (--model demo). */
extern const char script_demo[];

#endif
