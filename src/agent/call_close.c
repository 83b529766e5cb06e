/* Closing the calls a cut-off turn left open (see call_close.h). The calls are
 * followed through the protocol's steps as the order checker follows them; the
 * words of each result are those a live turn's end gives (agent_next.c), with "may
 * have run in part" where only a guess says the call had begun. */
#include "call_close.h"
#include "event_lines.h"
#include "turn/turn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void call_close_init(struct call_close *cc) {
  memset(cc, 0, sizeof *cc);
}

static void call_free(struct call_close_call *c) {
  free(c->id);
  free(c->tool);
  free(c->request);
}

void call_close_fini(struct call_close *cc) {
  for (size_t i = 0; i < cc->n; i++)
    call_free(&cc->calls[i]);
  free(cc->calls);
  memset(cc, 0, sizeof *cc);
}

static char *dup_str(turn_str s) {
  return strndup(s.p, s.len);
}

static bool is(const char *c, turn_str s) {
  return c != NULL && strlen(c) == s.len && memcmp(c, s.p, s.len) == 0;
}

static struct call_close_call *find(struct call_close *cc, turn_str id) {
  for (size_t i = 0; i < cc->n; i++)
    if (is(cc->calls[i].id, id)) return &cc->calls[i];
  return NULL;
}

static int add(struct call_close *cc, const turn_event *ev) {
  struct call_close_call *grown = turn_grow(cc->calls, cc->n, &cc->cap, sizeof *grown, 4);
  if (grown == NULL) return -1;
  cc->calls = grown;
  struct call_close_call *c = &cc->calls[cc->n];
  memset(c, 0, sizeof *c);
  c->id = dup_str(ev->tool_use.id);
  c->tool = dup_str(ev->tool_use.tool);
  c->tier = ev->tool_use.tier;
  if (c->id == NULL || c->tool == NULL) {
    call_free(c);
    return -1;
  }
  cc->n++;
  return 0;
}

/* The call an approval belongs to, by the protocol's rule: the tier-2 call of
 * its tool whose input came first and which has no approval yet. */
static struct call_close_call *asked(struct call_close *cc, turn_str tool) {
  struct call_close_call *best = NULL;
  for (size_t i = 0; i < cc->n; i++) {
    struct call_close_call *c = &cc->calls[i];
    if (c->tier == 2 && c->input_n > 0 && c->request == NULL && is(c->tool, tool) &&
        (best == NULL || c->input_n < best->input_n))
      best = c;
  }
  return best;
}

static int take(struct call_close *cc, const turn_event *ev) {
  struct call_close_call *c;
  switch (ev->type) {
  case TURN_EV_TURN: /* a turn starts: nothing of another is open in it */
    call_close_fini(cc);
    return 0;
  case TURN_EV_TOOL_USE:
    return add(cc, ev);
  case TURN_EV_TOOL_INPUT:
    if ((c = find(cc, ev->tool_input.id)) != NULL) c->input_n = ++cc->inputs;
    return 0;
  case TURN_EV_APPROVAL:
    if ((c = asked(cc, ev->approval.tool)) != NULL &&
        (c->request = dup_str(ev->approval.request)) == NULL)
      return -1;
    return 0;
  case TURN_EV_APPROVAL_DECIDED:
    for (size_t i = 0; i < cc->n; i++) {
      c = &cc->calls[i];
      if (!is(c->request, ev->approval_decided.request)) continue;
      c->decided = true;
      c->decision = ev->approval_decided.decision;
      c->begun = c->decision == TURN_DECISION_APPROVED;
    }
    return 0;
  case TURN_EV_TOOL_PROGRESS:
    if ((c = find(cc, ev->tool_progress.id)) != NULL) c->begun = true;
    return 0;
  case TURN_EV_WIDGET:
    if ((c = find(cc, ev->widget.id)) != NULL) c->begun = true;
    return 0;
  case TURN_EV_TOOL_RESULT:
    if ((c = find(cc, ev->tool_result.id)) != NULL) {
      call_free(c);
      size_t i = (size_t)(c - cc->calls);
      memmove(c, c + 1, (cc->n - i - 1) * sizeof *c);
      cc->n--;
    }
    return 0;
  default:
    return 0;
  }
}

static int take_line(void *ctx, const turn_event *ev) {
  return take(ctx, ev) != 0 ? -1 : 0;
}

int call_close_feed(struct call_close *cc, turn_arena *arena, const char *lines,
                    size_t len) {
  return event_lines_each(arena, lines, len, take_line, cc);
}

static const turn_approval approval_of_decision[] = {
    [TURN_DECISION_APPROVED] = TURN_APPROVAL_APPROVED,
    [TURN_DECISION_REJECTED] = TURN_APPROVAL_REJECTED,
    [TURN_DECISION_TIMEOUT] = TURN_APPROVAL_TIMEOUT,
};

bool call_close_next(struct call_close *cc, const char *why, bool reply_complete,
                     turn_arena *arena, turn_event *ev) {
  if (cc->next >= cc->n) return false;
  struct call_close_call *c = &cc->calls[cc->next];
  memset(ev, 0, sizeof *ev);
  if (c->request != NULL && !c->decided) {
    c->decided = c->cut_waiting = true;
    c->decision = TURN_DECISION_REJECTED;
    ev->type = TURN_EV_APPROVAL_DECIDED;
    ev->approval_decided.request = turn_str_c(c->request);
    ev->approval_decided.decision = c->decision;
    return true;
  }
  /* Calls run one at a time, in order, once their reply has ended: the first
   * still open is the one that ran or was about to. One that needs nobody's
   * yes shows nothing when it starts, so it may have. */
  bool guessed = cc->next == 0 && reply_complete && c->input_n > 0 &&
                 c->request == NULL && c->tier != 2;
  const char *before = "not run: ", *after = "";
  turn_status status = TURN_STATUS_ERROR;
  if (c->begun || guessed) {
    before = "stopped: ";
    after = " while it ran, so it may have run in part";
  } else if (c->input_n == 0) {
    after = " before its input was complete";
  } else if (c->cut_waiting) {
    after = " while its approval waited";
    status = TURN_STATUS_REJECTED;
  } else if (c->decided && c->decision != TURN_DECISION_APPROVED) {
    status = TURN_STATUS_REJECTED;
  }
  size_t len = strlen(before) + strlen(why) + strlen(after);
  char *summary = turn_arena_alloc(arena, len + 1);
  if (summary == NULL) return false;
  snprintf(summary, len + 1, "%s%s%s", before, why, after);
  ev->type = TURN_EV_TOOL_RESULT;
  ev->tool_result.id = turn_str_c(c->id);
  ev->tool_result.tool = turn_str_c(c->tool);
  ev->tool_result.status = status;
  ev->tool_result.summary = (turn_str){summary, len};
  ev->tool_result.approval =
      c->decided ? approval_of_decision[c->decision] : TURN_APPROVAL_NULL;
  cc->next++;
  return true;
}
