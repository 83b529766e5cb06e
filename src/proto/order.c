/* The order checker: two explicit state machines, one for the turn and one per
 * tool call, each driven by a table indexed by (state, event type).
 *
 * Turn:   IDLE --turn--> OPEN --end--> IDLE        (a log: the next turn may follow)
 *                         |
 *                         +--error--> ERRORED --end--> IDLE
 *   IDLE    -> OPEN    [turn_order_step: turn event]
 *   OPEN    -> ERRORED [turn_order_step: error event]
 *   OPEN    -> IDLE    [turn_order_step: end event, open calls allowed only when
 *                       the turn stopped abnormally]
 *   ERRORED -> IDLE    [turn_order_step: end event]
 *   In OPEN and ERRORED, next_seq is the seq the next event must carry.
 *
 * Call:   USED -> INPUT -> [AWAIT_DECISION -> DECIDED] -> PROGRESS* -> DONE
 *   NONE           -> USED           [tool_use]
 *   USED           -> INPUT          [tool_input]
 *   INPUT          -> AWAIT_DECISION [approval, tier 2 calls only]
 *   AWAIT_DECISION -> DECIDED        [approval_decided]
 *   INPUT, DECIDED, PROGRESS -> PROGRESS [tool_progress]
 *   INPUT, DECIDED, PROGRESS -> DONE     [tool_result]
 *   INPUT, DECIDED, PROGRESS -> same     [widget, render_ui calls only, once]
 *   guard events belong to the turn, not to a call: they may come anywhere in an
 *   open turn, in particular between approval and approval_decided (a step-up). */
#include "mem.h"
#include "strmap.h"

#include <assert.h>
#include <string.h>

enum turn_state { TURN_IDLE, TURN_OPEN, TURN_ERRORED };

enum call_state {
  CALL_NONE, /* 0, so a missing table entry means "refused" */
  CALL_USED,
  CALL_INPUT,
  CALL_AWAIT_DECISION,
  CALL_DECIDED,
  CALL_PROGRESS,
  CALL_DONE,
  CALL__COUNT
};

/* Turn moves: 0 means refused (TURN_IDLE is never a target except through end). */
enum { T_NO, T_OPEN, T_ERRORED, T_IDLE, T_STAY };
static const unsigned char turn_next[3][TURN_EV__COUNT] = {
    [TURN_IDLE] = {[TURN_EV_TURN] = T_OPEN},
    [TURN_OPEN] =
        {
            [TURN_EV_TEXT] = T_STAY,
            [TURN_EV_REASONING] = T_STAY,
            [TURN_EV_TOOL_USE] = T_STAY,
            [TURN_EV_TOOL_INPUT] = T_STAY,
            [TURN_EV_TOOL_PROGRESS] = T_STAY,
            [TURN_EV_TOOL_RESULT] = T_STAY,
            [TURN_EV_APPROVAL] = T_STAY,
            [TURN_EV_APPROVAL_DECIDED] = T_STAY,
            [TURN_EV_WIDGET] = T_STAY,
            [TURN_EV_THROTTLED] = T_STAY,
            [TURN_EV_NOTICE] = T_STAY,
            [TURN_EV_GUARD] = T_STAY,
            [TURN_EV_END] = T_IDLE,
            [TURN_EV_ERROR] = T_ERRORED,
        },
    [TURN_ERRORED] = {[TURN_EV_END] = T_IDLE},
};

static const unsigned char call_next[CALL__COUNT][TURN_EV__COUNT] = {
    [CALL_NONE] = {[TURN_EV_TOOL_USE] = CALL_USED},
    [CALL_USED] = {[TURN_EV_TOOL_INPUT] = CALL_INPUT},
    [CALL_INPUT] = {[TURN_EV_APPROVAL] = CALL_AWAIT_DECISION,
                    [TURN_EV_TOOL_PROGRESS] = CALL_PROGRESS,
                    [TURN_EV_TOOL_RESULT] = CALL_DONE,
                    [TURN_EV_WIDGET] = CALL_INPUT},
    [CALL_AWAIT_DECISION] = {[TURN_EV_APPROVAL_DECIDED] = CALL_DECIDED},
    [CALL_DECIDED] = {[TURN_EV_TOOL_PROGRESS] = CALL_PROGRESS,
                      [TURN_EV_TOOL_RESULT] = CALL_DONE,
                      [TURN_EV_WIDGET] = CALL_DECIDED},
    [CALL_PROGRESS] = {[TURN_EV_TOOL_PROGRESS] = CALL_PROGRESS,
                       [TURN_EV_TOOL_RESULT] = CALL_DONE,
                       [TURN_EV_WIDGET] = CALL_PROGRESS},
};

struct call {
  turn_str id, tool; /* copies in the checker's arena */
  int tier;          /* from tool_use */
  enum call_state state;
  bool has_widget;   /* a widget was shown for this render_ui call */
  bool has_decision; /* approval_decided seen */
  turn_decision decision;
};

struct turn_order {
  turn_mem mem; /* a copy: the caller's struct may go away */
  enum turn_state state;
  uint64_t next_seq;  /* seq the next event of the open turn must carry */
  bool resync;        /* a line was lost: take the next event's seq as given */
  struct call *calls; /* calls of the open turn, in tool_use order */
  size_t n_calls, cap_calls;
  size_t open_calls;       /* calls not DONE */
  size_t open_approvals;   /* approvals not decided */
  turn__strmap by_id;      /* tool_use id -> index in calls */
  turn__strmap by_request; /* approval request -> index in calls */
  turn_arena arena;        /* ids and tool names of the open turn */
};

static void set_turn_state(turn_order *o, enum turn_state next) {
  o->state = next;
}

static void set_call_state(turn_order *o, struct call *c, enum call_state next) {
  if (c->state != CALL_DONE && next == CALL_DONE) o->open_calls--;
  if (c->state == CALL_AWAIT_DECISION && next != CALL_AWAIT_DECISION) o->open_approvals--;
  if (next == CALL_AWAIT_DECISION && c->state != CALL_AWAIT_DECISION) o->open_approvals++;
  c->state = next;
}

static inline bool check_invariants(const turn_order *o) {
  if (o->open_calls > o->n_calls || o->open_approvals > o->open_calls) return false;
  if (o->state == TURN_IDLE && o->n_calls != 0) return false;
  return o->by_id.n == o->n_calls;
}

turn_order *turn_order_new(const turn_mem *mem) {
  turn_order *o = turn__malloc(mem, sizeof *o);
  if (o == NULL) return NULL;
  memset(o, 0, sizeof *o);
  if (mem != NULL) o->mem = *mem;
  o->state = TURN_IDLE;
  turn__strmap_init(&o->by_id, &o->mem);
  turn__strmap_init(&o->by_request, &o->mem);
  turn_arena_init(&o->arena, &o->mem);
  return o;
}

void turn_order_free(turn_order *o) {
  if (o == NULL) return;
  turn__free(&o->mem, o->calls);
  turn__strmap_fini(&o->by_id);
  turn__strmap_fini(&o->by_request);
  turn_arena_fini(&o->arena);
  turn_mem mem = o->mem;
  turn__free(&mem, o);
}

bool turn_order_in_turn(const turn_order *o) {
  return o->state != TURN_IDLE;
}

/* Forget the calls of the turn that just ended. */
static void clear_turn(turn_order *o) {
  o->n_calls = 0;
  o->open_calls = 0;
  o->open_approvals = 0;
  turn__strmap_clear(&o->by_id);
  turn__strmap_clear(&o->by_request);
  turn_arena_reset(&o->arena);
}

static int fail(turn_error *err, int code, const char *field) {
  if (err != NULL) {
    err->code = code;
    err->field = field;
    err->offset = 0;
    err->line = 0;
  }
  return code;
}

static int copy_str(turn_order *o, turn_str s, turn_str *out) {
  char *p = turn_arena_alloc(&o->arena, s.len + 1);
  if (p == NULL) return TURN_E_NOMEM;
  if (s.len > 0) memcpy(p, s.p, s.len);
  p[s.len] = '\0';
  out->p = p;
  out->len = s.len;
  return TURN_OK;
}

static int add_call(turn_order *o, const turn_event *ev, turn_error *err) {
  if (turn__strmap_get(&o->by_id, ev->tool_use.id) >= 0)
    return fail(err, TURN_E_DUPLICATE_ID, "id");
  if (o->n_calls == o->cap_calls) {
    size_t cap = o->cap_calls == 0 ? 8 : o->cap_calls * 2;
    struct call *calls = turn__realloc(&o->mem, o->calls, cap * sizeof *calls);
    if (calls == NULL) return fail(err, TURN_E_NOMEM, NULL);
    o->calls = calls;
    o->cap_calls = cap;
  }
  struct call c;
  memset(&c, 0, sizeof c);
  if (copy_str(o, ev->tool_use.id, &c.id) != TURN_OK ||
      copy_str(o, ev->tool_use.tool, &c.tool) != TURN_OK ||
      turn__strmap_put(&o->by_id, c.id, (long)o->n_calls) != TURN_OK)
    return fail(err, TURN_E_NOMEM, NULL);
  c.tier = ev->tool_use.tier;
  c.state = CALL_NONE;
  o->calls[o->n_calls++] = c;
  o->open_calls++;
  set_call_state(o, &o->calls[o->n_calls - 1], CALL_USED);
  return TURN_OK;
}

/* The oldest tier-2 call of this tool whose input is complete and that has no
 * approval yet: approval events name the tool and a request, not the call. When
 * there is none, *code says why: a lower-tier call of that tool was waiting
 * (E_MISMATCH), calls of that tool exist but none is waiting (E_ORDER), or the
 * tool was never used (E_UNKNOWN_ID). */
static struct call *call_for_approval(turn_order *o, const turn_event *ev, int *code) {
  *code = TURN_E_UNKNOWN_ID;
  for (size_t i = 0; i < o->n_calls; i++) {
    struct call *c = &o->calls[i];
    if (!turn_str_eq(c->tool, ev->approval.tool)) continue;
    if (c->state == CALL_INPUT && c->tier == 2) return c;
    if (c->state == CALL_INPUT)
      *code = TURN_E_MISMATCH;
    else if (*code == TURN_E_UNKNOWN_ID)
      *code = TURN_E_ORDER;
  }
  return NULL;
}

static const turn_approval approval_of_decision[TURN_DECISION__COUNT] = {
    [TURN_DECISION_APPROVED] = TURN_APPROVAL_APPROVED,
    [TURN_DECISION_REJECTED] = TURN_APPROVAL_REJECTED,
    [TURN_DECISION_TIMEOUT] = TURN_APPROVAL_TIMEOUT,
};

/* The id and tool an event of an existing call names. */
static void call_ref(const turn_event *ev, turn_str *id, turn_str *tool) {
  switch (ev->type) {
  case TURN_EV_TOOL_INPUT:
    *id = ev->tool_input.id;
    *tool = ev->tool_input.tool;
    break;
  case TURN_EV_TOOL_PROGRESS:
    *id = ev->tool_progress.id;
    *tool = ev->tool_progress.tool;
    break;
  case TURN_EV_TOOL_RESULT:
    *id = ev->tool_result.id;
    *tool = ev->tool_result.tool;
    break;
  default:
    *id = ev->widget.id;
    *tool = TURN_STR("render_ui");
    break;
  }
}

/* The call-level rules of one event; changes nothing when it refuses. */
static int step_call(turn_order *o, const turn_event *ev, turn_error *err) {
  struct call *c;
  int code = TURN_OK;
  switch (ev->type) {
  case TURN_EV_TOOL_USE:
    return add_call(o, ev, err);
  case TURN_EV_APPROVAL:
    if (ev->approval.tier != 2) return fail(err, TURN_E_ORDER, "tier");
    if (turn__strmap_get(&o->by_request, ev->approval.request) >= 0)
      return fail(err, TURN_E_DUPLICATE_ID, "request");
    c = call_for_approval(o, ev, &code);
    if (c == NULL) return fail(err, code, code == TURN_E_MISMATCH ? "tier" : "tool");
    {
      turn_str request;
      if (copy_str(o, ev->approval.request, &request) != TURN_OK ||
          turn__strmap_put(&o->by_request, request, (long)(c - o->calls)) != TURN_OK)
        return fail(err, TURN_E_NOMEM, NULL);
    }
    set_call_state(o, c, CALL_AWAIT_DECISION);
    return TURN_OK;
  case TURN_EV_APPROVAL_DECIDED: {
    long i = turn__strmap_get(&o->by_request, ev->approval_decided.request);
    if (i < 0) return fail(err, TURN_E_UNKNOWN_ID, "request");
    c = &o->calls[i];
    if (call_next[c->state][ev->type] == CALL_NONE)
      return fail(err, TURN_E_ORDER, "request");
    c->has_decision = true;
    c->decision = ev->approval_decided.decision;
    set_call_state(o, c, CALL_DECIDED);
    return TURN_OK;
  }
  case TURN_EV_TOOL_INPUT:
  case TURN_EV_TOOL_PROGRESS:
  case TURN_EV_TOOL_RESULT:
  case TURN_EV_WIDGET: {
    turn_str id, tool;
    call_ref(ev, &id, &tool);
    long i = turn__strmap_get(&o->by_id, id);
    if (i < 0) return fail(err, TURN_E_UNKNOWN_ID, "id");
    c = &o->calls[i];
    if (!turn_str_eq(c->tool, tool)) return fail(err, TURN_E_MISMATCH, "tool");
    enum call_state next = (enum call_state)call_next[c->state][ev->type];
    if (next == CALL_NONE) return fail(err, TURN_E_ORDER, "id");
    if (ev->type == TURN_EV_WIDGET) {
      if (c->has_widget) return fail(err, TURN_E_ORDER, "id");
      c->has_widget = true;
    }
    if (ev->type == TURN_EV_TOOL_RESULT) {
      turn_approval a = ev->tool_result.approval;
      if (c->has_decision && a != approval_of_decision[c->decision])
        return fail(err, TURN_E_MISMATCH, "approval");
      if (c->tier != 2 && c->tier != TURN_TIER_NULL && a != TURN_APPROVAL_NULL)
        return fail(err, TURN_E_MISMATCH, "approval");
    }
    set_call_state(o, c, next);
    return TURN_OK;
  }
  default:
    return TURN_OK;
  }
}

/* A turn may end with calls still open only when it was cut short. */
static bool cut_short(turn_stop_reason r) {
  return r == TURN_STOP_CANCELLED || r == TURN_STOP_INTERRUPT || r == TURN_STOP_ERROR ||
         r == TURN_STOP_MAX_TOKENS;
}

int turn_order_step(turn_order *o, const turn_event *ev, turn_error *err) {
  if ((unsigned)ev->type >= TURN_EV__COUNT) return fail(err, TURN_E_INVALID, "type");
  unsigned char move = turn_next[o->state][ev->type];
  bool counts = o->state != TURN_IDLE || move == T_OPEN; /* inside a turn */
  bool seq_wrong = counts && ev->seq != (o->state == TURN_IDLE ? 0 : o->next_seq) &&
                   !(o->resync && o->state != TURN_IDLE);
  if (counts) o->resync = false;

  int rv;
  if (move == T_NO)
    rv = fail(err, TURN_E_ORDER, "type");
  else if (ev->type == TURN_EV_END && ev->end.stop_reason < TURN_STOP__COUNT &&
           !cut_short(ev->end.stop_reason) && o->open_calls > 0)
    rv = fail(err, TURN_E_UNFINISHED, "stop_reason");
  else
    rv = step_call(o, ev, err);
  if (rv == TURN_E_NOMEM) return rv;

  /* Every event inside a turn uses up its seq, refused or not, and a gap moves the
   * count to the event's seq: one lost or bad line gives one report, not one for
   * every line after it. */
  if (counts) o->next_seq = ev->seq + 1;
  if (rv == TURN_OK) {
    switch (move) {
    case T_OPEN:
      set_turn_state(o, TURN_OPEN);
      break;
    case T_ERRORED:
      set_turn_state(o, TURN_ERRORED);
      break;
    case T_IDLE:
      clear_turn(o);
      set_turn_state(o, TURN_IDLE);
      break;
    default:
      break;
    }
  }
  assert(check_invariants(o));
  /* E_SEQ means "applied despite the gap": a refused event reports its refusal. */
  if (rv == TURN_OK && seq_wrong) return fail(err, TURN_E_SEQ, "seq");
  return rv;
}

void turn_order_resync(turn_order *o) {
  o->resync = true;
}

int turn_order_finish(turn_order *o, turn_error *err) {
  if (o->state == TURN_IDLE) return TURN_OK;
  clear_turn(o);
  set_turn_state(o, TURN_IDLE);
  return fail(err, TURN_E_INCOMPLETE, NULL);
}
