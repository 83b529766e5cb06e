/* Rebuilding a cut-off turn's messages from its recorded events (see convo.h).
 * The agent feeds its convo from the model's and the tools' own words; the
 * events are what readers were shown of those words, which after a crash is all
 * that is left. Each event goes to the convo as the agent fed its source, so
 * the messages come out with the same boundaries: a reply, the results of its
 * calls, the next reply. */
#include "convo.h"
#include "event_lines.h"

#include <stdlib.h>
#include <string.h>

/* A NUL-terminated copy of s, or NULL when out of memory. Event strings hold
 * no NUL (the encoder writes U+FFFD for one). */
static char *dup_str(turn_str s) {
  return strndup(s.p, s.len);
}

/* The words a call that had begun and has no result is given. */
#define STOPPED_WHILE_RUNNING \
  "stopped: turnd stopped while it ran, so it may have run in part"

/* Takes the call with this id off c->unanswered; the first one going means the
 * next call has not begun. */
static void answered(struct convo *c, turn_str id) {
  if (c->unanswered.len == 0) return;
  char *p = c->unanswered.data, *end = p + c->unanswered.len;
  for (bool first = true; p < end; first = false) {
    size_t n = strlen(p) + 1;
    if (n - 1 == id.len && memcmp(p, id.p, id.len) == 0) {
      memmove(p, p + n, (size_t)(end - p) - n);
      c->unanswered.len -= n;
      if (first) c->started = c->asked = false;
      return;
    }
    p += n;
  }
}

/* Whether id is that of the first call still without a result. */
static bool is_first_unanswered(const struct convo *c, turn_str id) {
  return c->unanswered.len > 0 && strlen(c->unanswered.data) == id.len &&
         memcmp(c->unanswered.data, id.p, id.len) == 0;
}

/* The tier tool_use gave the call with this NUL-ended id; 0 when none did. */
static int tier_of(const struct convo *c, const char *id) {
  const char *p = c->tiers.data, *end = p + c->tiers.len;
  for (; p < end; p += strlen(p) + 1)
    if (strcmp(p + 1, id) == 0) return p[0] - '0';
  return 0;
}

/* One event into c. Returns 0, or -1 when out of memory. */
static int feed(struct convo *c, const turn_event *ev, uint64_t at_ms) {
  switch (ev->type) {
  case TURN_EV_TEXT:
    convo_text(c, ev->text.delta, at_ms);
    return 0;
  case TURN_EV_REASONING:
    /* No signature is recorded: a provider that checks them is not sent this
     * thinking again (convo_repair), but the history shows it. */
    convo_thinking(c, ev->text.delta, at_ms);
    return 0;
  case TURN_EV_TOOL_USE: {
    char tier =
        (char)('0' + (ev->tool_use.tier >= 0 && ev->tool_use.tier <= 2 ? ev->tool_use.tier
                                                                       : 2));
    char *id = dup_str(ev->tool_use.id);
    int rc = id != NULL && turn_buf_append(&c->tiers, &tier, 1) == TURN_OK &&
                     turn_buf_append(&c->tiers, id, strlen(id) + 1) == TURN_OK
                 ? 0
                 : -1;
    free(id);
    if (rc != 0) return rc;
  }
    /* fall through */
  case TURN_EV_THROTTLED:
    /* A model call under way: the results before it went to the model as one
     * message, even when this call adds nothing to the conversation (a call
     * whose input never came whole) before its own results. */
    if (c->open == CONVO_RESULTS) convo_finish(c);
    return 0;
  case TURN_EV_TOOL_INPUT: {
    /* The agent puts a call in the reply once its input is complete, which is
     * when tool_input is sent. An input too long to travel whole was sent as a
     * preview only: the call keeps an empty input. */
    char *id = dup_str(ev->tool_input.id);
    char *name = dup_str(ev->tool_input.tool);
    char *input = ev->tool_input.input.truncated ? dup_str(TURN_STR("{}"))
                                                 : dup_str(ev->tool_input.input.json);
    int rc = id != NULL && name != NULL && input != NULL &&
                     turn_buf_append(&c->unanswered, id, strlen(id) + 1) == TURN_OK
                 ? 0
                 : -1;
    if (rc == 0) convo_tool_use(c, id, name, input, at_ms);
    free(id);
    free(name);
    free(input);
    return rc;
  }
  case TURN_EV_TOOL_RESULT: {
    /* The owner's summary is what was recorded; the model was to be told the
     * tool's full result, which died with the process. */
    char *id = dup_str(ev->tool_result.id);
    if (id == NULL) return -1;
    convo_tool_result(c, id, ev->tool_result.summary,
                      ev->tool_result.status != TURN_STATUS_OK, at_ms);
    free(id);
    answered(c, ev->tool_result.id);
    return 0;
  }
  case TURN_EV_TOOL_PROGRESS:
    if (is_first_unanswered(c, ev->tool_progress.id)) c->started = true;
    return 0;
  case TURN_EV_APPROVAL:
    /* Asked for the call about to run, the first without a result. */
    if (c->unanswered.len > 0) c->asked = true;
    return 0;
  case TURN_EV_APPROVAL_DECIDED:
    /* An approval is asked for the call about to run: granted, it runs. */
    if (ev->approval_decided.decision == TURN_DECISION_APPROVED) c->started = true;
    return 0;
  default: /* the rest says nothing the model said or was told */
    return 0;
  }
}

/* One rebuild's walk: where the events go, and where the messages. */
struct recover_walk {
  struct convo *c;
  uint64_t at_ms;
  convo_message_cb *cb;
  void *ctx;
};

static int recover_event(void *arg, const turn_event *ev) {
  struct recover_walk *w = arg;
  if (feed(w->c, ev, w->at_ms) != 0 || w->c->lost) return -1;
  struct convo_message m;
  while (convo_take(w->c, &m))
    if (w->cb(w->ctx, &m) != 0) return -1;
  return 0;
}

int convo_recover(struct convo *c, turn_arena *arena, const char *lines, size_t len,
                  uint64_t at_ms, convo_message_cb *cb, void *ctx) {
  struct recover_walk w = {c, at_ms, cb, ctx};
  return event_lines_each(arena, lines, len, recover_event, &w);
}

void convo_recover_finish(struct convo *c, uint64_t at_ms, bool reply_kept) {
  bool reply_complete = c->open != CONVO_ASSISTANT || reply_kept;
  if (c->unanswered.len > 0) {
    char *id = c->unanswered.data; /* NUL-ended */
    /* A tier-2 call runs only once approved, which started says. */
    bool begun = c->started || (reply_complete && !c->asked && tier_of(c, id) != 2);
    if (begun) convo_tool_result(c, id, TURN_STR(STOPPED_WHILE_RUNNING), true, at_ms);
  }
  c->unanswered.len = 0;
  c->tiers.len = 0;
  c->started = c->asked = false;
  convo_finish(c);
}
