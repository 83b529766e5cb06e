/* The fake provider's scenarios: which answer a request gets, told without any
 * provider's wire format. A keyword in the latest user text picks the scenario;
 * anthropic.c and openai.c turn the answer into their own stream or error. */
#ifndef FAKE_SCENARIO_H
#define FAKE_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>

enum scenario {
  SCENARIO_HELLO, /* 0: no keyword */
  SCENARIO_STALL,
  SCENARIO_CUT,
  SCENARIO_MIDSTREAM,
  SCENARIO_MIDCALL,
  SCENARIO_HTTP500,
  SCENARIO_KEYLEAK,
  SCENARIO_KEYWRAP,
  SCENARIO_STREAMLEAK,
  SCENARIO_RETRY_DATE,
  SCENARIO_RETRY_PAST,
  SCENARIO_RETRY_HUGE,
  SCENARIO_RETRY_AFTER,
  SCENARIO_BACKOFF,
  SCENARIO_OVERLOADED,
  SCENARIO_SILENT_START,
  SCENARIO_QUOTA,
  SCENARIO_MAXTOKENS,
  SCENARIO_REFUSAL,
  SCENARIO_THINK,
  SCENARIO_LAMP,
  SCENARIO_TWO_TOOLS,
  SCENARIO_TOOL,
  SCENARIO_SLOW,
  SCENARIO_MANY,
  SCENARIO_HUGE,
  SCENARIO_LINGER,
  SCENARIO_TIMED, /* last: it may only take what no other keyword does */
  SCENARIO_N
};

/* The scenario text asks for: the first keyword of the table (in its order, not
 * the text's) that text holds, case-sensitively; hello when none does or text
 * is NULL. Borrows text. */
enum scenario scenario_of(const char *text);
/* A name for the log: the keyword, "two-tools" for "two tools", or "hello". */
const char *scenario_name(enum scenario sc);

/* An answer either fails with an HTTP status or streams. */
enum answer_failure {
  ANSWER_STREAMS,      /* 0: a 200 stream */
  ANSWER_RATE_LIMITED, /* 429 */
  ANSWER_OVERLOADED,   /* Anthropic 529, OpenAI 503 */
  ANSWER_SERVER_ERROR, /* 500 */
  ANSWER_KEY_REFUSED,  /* 401 */
  ANSWER_NO_QUOTA      /* OpenAI 429 insufficient_quota, Anthropic 400 (credit) */
};

/* The retry-after header of a failure. */
enum retry_form {
  RETRY_NONE,    /* 0: no header */
  RETRY_SECONDS, /* delay-seconds: retry_after_s */
  RETRY_DATE     /* an HTTP-date retry_after_s from now (< 0: in the past) */
};

enum answer_stop { STOP_END_TURN, STOP_MAX_TOKENS, STOP_TOOL_USE, STOP_REFUSAL };

/* How a stream ends after its text deltas. Only answers with text and without
 * tools end other than normally. */
enum answer_ending {
  ENDING_NORMAL, /* the blocks' stops, the stop reason, the end of the reply */
  ENDING_STALL,  /* nothing more; the connection stays open */
  ENDING_CUT,    /* the connection is closed, the reply never ends */
  ENDING_ERROR,  /* the provider's error event, then the end of the reply */
  ENDING_LINGER  /* as NORMAL, but the answer never ends (no terminating chunk):
                    the connection stays open */
};

struct answer_tool {
  const char *name;
  const char *const *input; /* pieces of the input's JSON, in order; the first is "" */
  size_t n_input;
};

/* Pieces are what each delta carries. All strings are static. */
struct answer {
  enum answer_failure failure;
  enum retry_form retry_form; /* with ANSWER_RATE_LIMITED */
  long retry_after_s;         /* what the retry-after header says, as retry_form tells */
  bool echo_key; /* the failure's or the error event's message holds the key the
                    request carried (provider_key_echo) */
  bool wrap_key; /* with echo_key: the echoed key has a line break inside */
  const char *const *thinking; /* thinking pieces, then one signature */
  size_t n_thinking;
  const char *signature;
  const char *const *text; /* text pieces; NULL when counted */
  size_t n_text;
  const char *counted; /* text == NULL: piece i is "COUNTED i+1", space-separated */
  bool stamped;        /* text == NULL: every piece is "t=" STREAM_SEND_NS " ", which
                          the stream turns into its send time (a latency probe) */
  bool huge;           /* text == NULL: every piece is HUGE_PIECE bytes of "x" */
  struct answer_tool tools[2];
  size_t n_tools;
  bool error_in_call; /* the last call's input stops halfway: the provider's error
                         event ends the reply there, inside the call */
  enum answer_stop stop;
  enum answer_ending ending;
  unsigned first_ms; /* wait before the first event, the headers sent */
  unsigned event_ms; /* wait before each event after the first; 0: all in one go */
  unsigned delta_ms; /* wait before each text delta */
  bool paced;        /* waits count from the event before's due time (stream_keep_pace) */
};

/* The answer for sc. text: the latest user text, as given to scenario_of (timed
 * reads its count from "timed:N"; borrowed, may be NULL). after_tools: the
 * request's last message is tool results. attempt counts this request among the
 * conversation's identical ones, from 1: the scenarios that fail once fail on
 * attempt 1 only. */
void answer_for(struct answer *a, enum scenario sc, const char *text, bool after_tools,
                unsigned attempt);
/* Text piece i < a->n_text: a static string, or one written into buf. */
const char *answer_text(const struct answer *a, size_t i, char *buf, size_t cap);
/* The output token count the usage reports: one per delta. */
size_t answer_output_tokens(const struct answer *a);

#endif
