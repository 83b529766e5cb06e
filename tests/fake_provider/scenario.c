/* Scenarios, keyed by words in the user's text (see README.md). The table's
 * order is the match order: "two tools" must come before "tool", or the former
 * could never be chosen. Tool inputs arrive in many small pieces, cut inside
 * names and values, so a client that parses a piece alone is caught. */
#include "scenario.h"
#include "stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *keyword; /* NULL: hello, the fallback */
  const char *name;
} table[SCENARIO_N] = {
    [SCENARIO_STALL] = {"stall", "stall"},
    [SCENARIO_CUT] = {"cut", "cut"},
    [SCENARIO_MIDSTREAM] = {"midstream", "midstream"},
    [SCENARIO_MIDCALL] = {"midcall", "midcall"},
    [SCENARIO_HTTP500] = {"http500", "http500"},
    [SCENARIO_KEYLEAK] = {"keyleak", "keyleak"},
    [SCENARIO_KEYWRAP] = {"keywrap", "keywrap"},
    [SCENARIO_STREAMLEAK] = {"streamleak", "streamleak"},
    [SCENARIO_RETRY_DATE] = {"retry-date", "retry-date"},
    [SCENARIO_RETRY_PAST] = {"retry-past", "retry-past"},
    [SCENARIO_RETRY_HUGE] = {"retry-huge", "retry-huge"},
    [SCENARIO_RETRY_AFTER] = {"retry-after", "retry-after"},
    [SCENARIO_BACKOFF] = {"backoff", "backoff"},
    [SCENARIO_OVERLOADED] = {"overloaded", "overloaded"},
    [SCENARIO_SILENT_START] = {"silentstart", "silentstart"},
    [SCENARIO_QUOTA] = {"quota", "quota"},
    [SCENARIO_MAXTOKENS] = {"maxtokens", "maxtokens"},
    [SCENARIO_REFUSAL] = {"refusal", "refusal"},
    [SCENARIO_THINK] = {"think", "think"},
    [SCENARIO_LAMP] = {"lamp", "lamp"},
    [SCENARIO_TWO_TOOLS] = {"two tools", "two-tools"},
    [SCENARIO_TOOL] = {"tool", "tool"},
    [SCENARIO_SLOW] = {"slow", "slow"},
    [SCENARIO_MANY] = {"many", "many"},
    [SCENARIO_HUGE] = {"huge", "huge"},
    [SCENARIO_LINGER] = {"linger", "linger"},
    [SCENARIO_TIMED] = {"timed", "timed"},
    [SCENARIO_HELLO] = {NULL, "hello"},
};

enum scenario scenario_of(const char *text) {
  if (text == NULL) return SCENARIO_HELLO;
  for (int sc = 0; sc < SCENARIO_N; sc++)
    if (table[sc].keyword != NULL && strstr(text, table[sc].keyword) != NULL)
      return (enum scenario)sc;
  return SCENARIO_HELLO;
}

const char *scenario_name(enum scenario sc) {
  return (unsigned)sc < SCENARIO_N ? table[sc].name : "?";
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *const hello[] = {"Hello", " from", " the fake", " model."};
static const char *const truncated[] = {"This answer", " runs", " out of"};
static const char *const declined[] = {"I can help with", " part of"};
static const char *const thinking[] = {"The user", " wants me", " to think.", " I will."};
static const char *const thought[] = {"I thought", " about it."};
/* Around tool calls the text is one delta each, so a test can name it whole. */
static const char *const lamp_intro[] = {"I will turn on the desk lamp."};
static const char *const lamp_done[] = {"Done."};
static const char *const clock_intro[] = {"Let me look at the clock."};
static const char *const clock_done[] = {"The clock says hello."};
static const char *const both_done[] = {"The clock and the count are done."};

/* Joined: {"name": "desk", "on": true} */
static const char *const lamp_input[] = {"",       "{\"na",  "me\":", " \"de",
                                         "sk\", ", "\"on\"", ": tr",  "ue}"};
/* Joined: {} */
static const char *const clock_input[] = {"", "{", "}"};
/* Joined: {"to": 2, "interval_ms": 1} */
static const char *const count_input[] = {"",          "{\"to\"",  ": 2",
                                          ", \"inter", "val_ms\"", ": 1}"};

/* Thinking blocks are signed; a client must send this back unchanged. */
static const char signature[] = "EqQBCkYIBRgCKkBmYWtlLXNpZ25hdHVyZS1mb3ItdHVybmQtdGVzdHM";

#define EVENT_MS 3   /* between events: the client must really read a stream */
#define SLOW_MS  100 /* between the slow scenario's deltas: time to cancel */
#define N_SLOW   50
#define N_MANY   500
/* huge: a turn past the 64 MiB turnd keeps of one turn, in few deltas, each far
 * larger than a real provider's (turnd takes events of up to 1 MiB). */
#define HUGE_PIECE (64u << 10)
#define N_HUGE     1100
/* timed: deltas far enough apart that turnd's coalescing window (15 ms by
 * default) has closed before each one, so every delta is the first of its
 * burst and a delay measured on it is the loop's, not the window's. */
#define TIMED_MS    20
#define N_TIMED     200
#define N_TIMED_MAX 100000 /* "timed:N" above this gets N_TIMED */
/* retry-date's date is this far ahead: far enough that what is left of it when
 * the client reads it (a date has whole seconds) is told from a backoff of 1 s. */
#define RETRY_DATE_S    4
#define RETRY_PAST_S    3600   /* retry-past's date: an hour ago */
#define RETRY_HUGE_S    100000 /* retry-huge's seconds: more than a day */
#define SILENT_START_MS 2000   /* silentstart's silence before its first event */

static void set_text(struct answer *a, const char *const *text, size_t n) {
  a->text = text;
  a->n_text = n;
}

static void rate_limited(struct answer *a, enum retry_form form, long retry_after_s) {
  a->failure = ANSWER_RATE_LIMITED;
  a->retry_form = form;
  a->retry_after_s = retry_after_s;
}

static void add_tool(struct answer *a, const char *name, const char *const *input,
                     size_t n) {
  a->tools[a->n_tools++] = (struct answer_tool){name, input, n};
  a->stop = STOP_TOOL_USE;
}

/* N of "timed:N" in text, or N_TIMED when there is none or it is out of range. */
static size_t timed_count(const char *text) {
  const char *p = text != NULL ? strstr(text, "timed:") : NULL;
  if (p == NULL || p[6] < '0' || p[6] > '9') return N_TIMED;
  errno = 0;
  char *end;
  unsigned long n = strtoul(p + 6, &end, 10);
  return errno == 0 && n >= 1 && n <= N_TIMED_MAX ? (size_t)n : N_TIMED;
}

void answer_for(struct answer *a, enum scenario sc, const char *text, bool after_tools,
                unsigned attempt) {
  memset(a, 0, sizeof *a);
  a->stop = STOP_END_TURN;
  a->ending = ENDING_NORMAL;
  a->event_ms = EVENT_MS;
  a->delta_ms = EVENT_MS;
  set_text(a, hello, N(hello));
  switch (sc) {
  case SCENARIO_STALL:
    set_text(a, hello, 1);
    a->ending = ENDING_STALL;
    break;
  case SCENARIO_CUT:
    set_text(a, hello, 3);
    a->ending = ENDING_CUT;
    break;
  case SCENARIO_MIDSTREAM:
    set_text(a, hello, 3);
    a->ending = ENDING_ERROR;
    break;
  case SCENARIO_MIDCALL:
    set_text(a, clock_intro, N(clock_intro));
    add_tool(a, "clock", clock_input, N(clock_input));
    add_tool(a, "count_slowly", count_input, N(count_input));
    a->error_in_call = true;
    break;
  case SCENARIO_HTTP500:
    a->failure = ANSWER_SERVER_ERROR;
    break;
  case SCENARIO_KEYLEAK:
    a->failure = ANSWER_KEY_REFUSED;
    a->echo_key = true;
    break;
  case SCENARIO_KEYWRAP:
    a->failure = ANSWER_KEY_REFUSED;
    a->echo_key = true;
    a->wrap_key = true;
    break;
  case SCENARIO_STREAMLEAK:
    set_text(a, hello, 3);
    a->ending = ENDING_ERROR;
    a->echo_key = true;
    break;
  case SCENARIO_RETRY_DATE:
    if (attempt <= 1) rate_limited(a, RETRY_DATE, RETRY_DATE_S);
    break;
  case SCENARIO_RETRY_PAST:
    if (attempt <= 1) rate_limited(a, RETRY_DATE, -RETRY_PAST_S);
    break;
  case SCENARIO_RETRY_HUGE:
    if (attempt <= 1) rate_limited(a, RETRY_SECONDS, RETRY_HUGE_S);
    break;
  case SCENARIO_RETRY_AFTER:
    if (attempt <= 1) rate_limited(a, RETRY_SECONDS, 1);
    break;
  case SCENARIO_BACKOFF:
    if (attempt <= 1) a->failure = ANSWER_RATE_LIMITED;
    break;
  case SCENARIO_OVERLOADED:
    if (attempt <= 1) a->failure = ANSWER_OVERLOADED;
    break;
  case SCENARIO_SILENT_START:
    a->first_ms = SILENT_START_MS;
    break;
  case SCENARIO_QUOTA:
    if (attempt <= 1) a->failure = ANSWER_NO_QUOTA;
    break;
  case SCENARIO_MAXTOKENS:
    set_text(a, truncated, N(truncated));
    a->stop = STOP_MAX_TOKENS;
    break;
  case SCENARIO_REFUSAL:
    set_text(a, declined, N(declined));
    a->stop = STOP_REFUSAL;
    break;
  case SCENARIO_THINK:
    a->thinking = thinking;
    a->n_thinking = N(thinking);
    a->signature = signature;
    set_text(a, thought, N(thought));
    break;
  case SCENARIO_LAMP:
    if (after_tools) {
      set_text(a, lamp_done, N(lamp_done));
    } else {
      set_text(a, lamp_intro, N(lamp_intro));
      add_tool(a, "lamp_set", lamp_input, N(lamp_input));
    }
    break;
  case SCENARIO_TWO_TOOLS:
    if (after_tools) {
      set_text(a, both_done, N(both_done));
    } else {
      set_text(a, NULL, 0); /* the tools come first: no text block at all */
      add_tool(a, "clock", clock_input, N(clock_input));
      add_tool(a, "count_slowly", count_input, N(count_input));
    }
    break;
  case SCENARIO_TOOL:
    if (after_tools) {
      set_text(a, clock_done, N(clock_done));
    } else {
      set_text(a, clock_intro, N(clock_intro));
      add_tool(a, "clock", clock_input, N(clock_input));
    }
    break;
  case SCENARIO_SLOW:
    set_text(a, NULL, N_SLOW);
    a->counted = "tick";
    a->delta_ms = SLOW_MS;
    break;
  case SCENARIO_MANY:
    set_text(a, NULL, N_MANY);
    a->counted = "word";
    a->event_ms = 0;
    a->delta_ms = 0;
    break;
  case SCENARIO_HUGE:
    set_text(a, NULL, N_HUGE);
    a->huge = true;
    a->event_ms = 0;
    a->delta_ms = 0;
    break;
  case SCENARIO_LINGER:
    a->ending = ENDING_LINGER;
    break;
  case SCENARIO_TIMED:
    set_text(a, NULL, timed_count(text));
    a->stamped = true;
    a->delta_ms = TIMED_MS;
    a->paced = true; /* turns started apart stay apart: no bursts of every turn */
    break;
  case SCENARIO_HELLO:
  case SCENARIO_N:
    break;
  }
}

const char *answer_text(const struct answer *a, size_t i, char *buf, size_t cap) {
  if (a->text != NULL) return a->text[i];
  if (a->stamped) return "t=" STREAM_SEND_NS " ";
  if (a->huge) {
    static char piece[HUGE_PIECE + 1];
    if (piece[0] == 0) memset(piece, 'x', HUGE_PIECE);
    return piece;
  }
  snprintf(buf, cap, "%s%s %zu", i == 0 ? "" : " ", a->counted, i + 1);
  return buf;
}

size_t answer_output_tokens(const struct answer *a) {
  size_t n = a->n_thinking + a->n_text;
  for (size_t i = 0; i < a->n_tools; i++)
    n += a->tools[i].n_input;
  return n > 0 ? n : 1;
}
