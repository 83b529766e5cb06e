/* The order checker: two explicit state machines, one for the turn and one per
 * tool call, each driven by a table indexed by (state, event type).
 *
 * Turn:   IDLE --turn--> OPEN --end--> IDLE        (a log: the next turn may follow)
 *                         |
 *                         +--error--> ERRORED --end--> IDLE
 *   IDLE    -> OPEN    [turn_order_step: turn event; or any event right after a
 *                       lost line, which may have been the turn event]
 *   OPEN    -> ERRORED [turn_order_step: error event]
 *   OPEN    -> IDLE    [turn_order_step: end event; with calls still open it is
 *                       reported (whatever the stop reason), and applied]
 *   ERRORED -> IDLE    [turn_order_step: end event; calls still open: as above.
 *                       Only end follows error, so a backend closes its calls
 *                       before it reports the error]
 *   OPEN, ERRORED -> IDLE -> OPEN [turn_order_step: a turn event inside a turn:
 *                       reported, the old turn abandoned, the new one started]
 *   In OPEN and ERRORED, next_seq is the seq the next event must carry.
 *
 * Call:   USED -> INPUT -> [AWAIT_DECISION -> DECIDED | DENIED] -> PROGRESS* -> DONE
 *   NONE           -> USED           [tool_use]
 *   USED           -> INPUT          [tool_input]
 *   USED           -> DONE           [tool_result "error" or "rejected": the input
 *                                     never came whole (a reply cut off), so the
 *                                     call never ran, but it is closed all the same]
 *   INPUT          -> AWAIT_DECISION [approval, tier 2 calls only]
 *   AWAIT_DECISION -> DECIDED        [approval_decided "approved"]
 *   AWAIT_DECISION -> DENIED         [approval_decided "rejected" or "timeout":
 *                                     the tool never runs, only its result follows]
 *   INPUT, DECIDED, PROGRESS -> PROGRESS [tool_progress]
 *   INPUT, DECIDED, DENIED, PROGRESS -> DONE [tool_result]
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
  CALL_DENIED,
  CALL_PROGRESS,
  CALL_DONE,
  CALL__COUNT
};

/* Turn moves: 0 means refused. */
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
    /* A result here must say the call did not run: step_call refuses "ok". */
    [CALL_USED] = {[TURN_EV_TOOL_INPUT] = CALL_INPUT, [TURN_EV_TOOL_RESULT] = CALL_DONE},
    [CALL_INPUT] = {[TURN_EV_APPROVAL] = CALL_AWAIT_DECISION,
                    [TURN_EV_TOOL_PROGRESS] = CALL_PROGRESS,
                    [TURN_EV_TOOL_RESULT] = CALL_DONE,
                    [TURN_EV_WIDGET] = CALL_INPUT},
    /* DECIDED here; step_call picks DENIED for a decision other than approved. */
    [CALL_AWAIT_DECISION] = {[TURN_EV_APPROVAL_DECIDED] = CALL_DECIDED},
    [CALL_DECIDED] = {[TURN_EV_TOOL_PROGRESS] = CALL_PROGRESS,
                      [TURN_EV_TOOL_RESULT] = CALL_DONE,
                      [TURN_EV_WIDGET] = CALL_DECIDED},
    [CALL_DENIED] = {[TURN_EV_TOOL_RESULT] = CALL_DONE},
    [CALL_PROGRESS] = {[TURN_EV_TOOL_PROGRESS] = CALL_PROGRESS,
                       [TURN_EV_TOOL_RESULT] = CALL_DONE,
                       [TURN_EV_WIDGET] = CALL_PROGRESS},
};

struct call {
  turn_str id, tool; /* copies in the checker's arena */
  int tier;          /* from tool_use */
  enum call_state state;
  size_t queue;      /* index of its tool's entry in tools */
  long next_waiting; /* next tier-2 call of the tool that reached INPUT, or -1 */
  bool has_widget;   /* a widget was shown for this render_ui call */
  bool has_decision; /* approval_decided seen */
  turn_decision decision;
};

/* Per tool name: the tier-2 calls whose input completed, oldest first, for the
 * approvals to come (approval events name a tool, not a call). Calls leave the
 * queue lazily: one that is no longer in INPUT is dropped when it reaches the
 * head, so every call is queued and dropped once. */
struct tool_queue {
  long head, tail;      /* indexes in calls, or -1 */
  size_t lower_waiting; /* calls of a lower tier in INPUT: an approval for them is
                           a mismatch, not an order error */
};

struct turn_order {
  turn_mem mem; /* a copy: the caller's struct may go away */
  enum turn_state state;
  uint64_t next_seq;  /* seq the next event of the open turn must carry */
  bool resync;        /* a line was lost: take the next event's seq as given */
  struct call *calls; /* calls of the open turn, in tool_use order */
  size_t n_calls, cap_calls;
  struct tool_queue *tools; /* one per tool name used in the open turn */
  size_t n_tools, cap_tools;
  size_t open_calls;       /* calls not DONE */
  turn__strmap by_id;      /* tool_use id -> index in calls */
  turn__strmap by_request; /* approval request -> index in calls */
  turn__strmap by_tool;    /* tool name -> index in tools */
  turn_arena arena;        /* ids and tool names of the open turn */
};

static void set_turn_state(turn_order *o, enum turn_state next) {
  o->state = next;
}

static void set_call_state(turn_order *o, struct call *c, enum call_state next) {
  struct tool_queue *q = &o->tools[c->queue];
  if (c->state != CALL_DONE && next == CALL_DONE) o->open_calls--;
  if (c->state == CALL_INPUT && next != CALL_INPUT && c->tier != 2) q->lower_waiting--;
  if (c->state != CALL_INPUT && next == CALL_INPUT) {
    if (c->tier != 2) {
      q->lower_waiting++;
    } else {
      long i = (long)(c - o->calls);
      if (q->tail >= 0)
        o->calls[q->tail].next_waiting = i;
      else
        q->head = i;
      q->tail = i;
    }
  }
  c->state = next;
}

static inline bool check_invariants(const turn_order *o) {
  if (o->open_calls > o->n_calls || o->n_tools > o->n_calls) return false;
  if (o->state == TURN_IDLE && (o->n_calls != 0 || o->n_tools != 0)) return false;
  return o->by_id.n == o->n_calls && o->by_tool.n == o->n_tools;
}

turn_order *turn_order_new(const turn_mem *mem) {
  turn_order *o = turn__malloc(mem, sizeof *o);
  if (o == NULL) return NULL;
  memset(o, 0, sizeof *o);
  if (mem != NULL) o->mem = *mem;
  o->state = TURN_IDLE;
  turn__strmap_init(&o->by_id, &o->mem);
  turn__strmap_init(&o->by_request, &o->mem);
  turn__strmap_init(&o->by_tool, &o->mem);
  turn_arena_init(&o->arena, &o->mem);
  return o;
}

void turn_order_free(turn_order *o) {
  if (o == NULL) return;
  turn__free(&o->mem, o->calls);
  turn__free(&o->mem, o->tools);
  turn__strmap_fini(&o->by_id);
  turn__strmap_fini(&o->by_request);
  turn__strmap_fini(&o->by_tool);
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
  o->n_tools = 0;
  o->open_calls = 0;
  turn__strmap_clear(&o->by_id);
  turn__strmap_clear(&o->by_request);
  turn__strmap_clear(&o->by_tool);
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

static int grow(turn_order *o, void **items, size_t *cap, size_t n, size_t size) {
  if (n < *cap) return TURN_OK;
  size_t grown = *cap == 0 ? 8 : *cap * 2;
  void *p = turn__realloc(&o->mem, *items, grown * size);
  if (p == NULL) return TURN_E_NOMEM;
  *items = p;
  *cap = grown;
  return TURN_OK;
}

/* The queue of a tool name, made on its first call. */
static int tool_queue_of(turn_order *o, turn_str tool, size_t *out) {
  long i = turn__strmap_get(&o->by_tool, tool);
  if (i >= 0) {
    *out = (size_t)i;
    return TURN_OK;
  }
  turn_str name;
  if (grow(o, (void **)&o->tools, &o->cap_tools, o->n_tools, sizeof *o->tools) !=
          TURN_OK ||
      copy_str(o, tool, &name) != TURN_OK ||
      turn__strmap_put(&o->by_tool, name, (long)o->n_tools) != TURN_OK)
    return TURN_E_NOMEM;
  o->tools[o->n_tools] = (struct tool_queue){-1, -1, 0};
  *out = o->n_tools++;
  return TURN_OK;
}

static int add_call(turn_order *o, const turn_event *ev, turn_error *err) {
  if (turn__strmap_get(&o->by_id, ev->tool_use.id) >= 0)
    return fail(err, TURN_E_DUPLICATE_ID, "id");
  struct call c;
  memset(&c, 0, sizeof c);
  if (grow(o, (void **)&o->calls, &o->cap_calls, o->n_calls, sizeof *o->calls) !=
          TURN_OK ||
      tool_queue_of(o, ev->tool_use.tool, &c.queue) != TURN_OK ||
      copy_str(o, ev->tool_use.id, &c.id) != TURN_OK ||
      copy_str(o, ev->tool_use.tool, &c.tool) != TURN_OK ||
      turn__strmap_put(&o->by_id, c.id, (long)o->n_calls) != TURN_OK)
    return fail(err, TURN_E_NOMEM, NULL);
  c.tier = ev->tool_use.tier;
  c.state = CALL_NONE;
  c.next_waiting = -1;
  o->calls[o->n_calls++] = c;
  o->open_calls++;
  set_call_state(o, &o->calls[o->n_calls - 1], CALL_USED);
  return TURN_OK;
}

/* The tier-2 call of this tool whose input completed first and that has no
 * approval yet. When there is none, *code says why: a lower-tier call of that
 * tool is waiting (E_MISMATCH), calls of that tool exist but none is waiting
 * (E_ORDER), or the tool was never used (E_UNKNOWN_ID). */
static struct call *call_for_approval(turn_order *o, const turn_event *ev, int *code) {
  long t = turn__strmap_get(&o->by_tool, ev->approval.tool);
  if (t < 0) {
    *code = TURN_E_UNKNOWN_ID;
    return NULL;
  }
  struct tool_queue *q = &o->tools[t];
  while (q->head >= 0 && o->calls[q->head].state != CALL_INPUT) {
    q->head = o->calls[q->head].next_waiting; /* left INPUT: it never comes back */
    if (q->head < 0) q->tail = -1;
  }
  if (q->head >= 0) return &o->calls[q->head];
  *code = q->lower_waiting > 0 ? TURN_E_MISMATCH : TURN_E_ORDER;
  return NULL;
}

static const turn_approval approval_of_decision[TURN_DECISION__COUNT] = {
    [TURN_DECISION_APPROVED] = TURN_APPROVAL_APPROVED,
    [TURN_DECISION_REJECTED] = TURN_APPROVAL_REJECTED,
    [TURN_DECISION_TIMEOUT] = TURN_APPROVAL_TIMEOUT,
};

/* The approval a result may name: the decision when the owner gave one; else
 * null, or for a tier-2 call (or one of unknown tier) exempt or locked, which
 * involve no approval event. Nothing is approved, rejected or timed out without
 * one: nothing approves on its own. */
static bool result_approval_fits(const struct call *c, turn_approval a) {
  if (c->has_decision) return a == approval_of_decision[c->decision];
  if (a == TURN_APPROVAL_NULL) return true;
  if (a != TURN_APPROVAL_EXEMPT && a != TURN_APPROVAL_LOCKED) return false;
  return c->tier == 2 || c->tier == TURN_TIER_NULL;
}

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
    set_call_state(o, c,
                   c->decision == TURN_DECISION_APPROVED ? CALL_DECIDED : CALL_DENIED);
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
    if (ev->type == TURN_EV_TOOL_RESULT && c->state == CALL_USED &&
        ev->tool_result.status == TURN_STATUS_OK)
      return fail(err, TURN_E_ORDER, "id"); /* it cannot have run without its input */
    if (ev->type == TURN_EV_TOOL_RESULT &&
        !result_approval_fits(c, ev->tool_result.approval))
      return fail(err, TURN_E_MISMATCH, "approval");
    set_call_state(o, c, next);
    return TURN_OK;
  }
  default:
    return TURN_OK;
  }
}

static bool tier_ok(int tier) {
  return tier == TURN_TIER_NULL || (tier >= 0 && tier <= 2);
}

/* The enumerations the rules read: an event built in C may hold any value. */
static const char *value_out_of_range(const turn_event *ev) {
  switch (ev->type) {
  case TURN_EV_TOOL_USE:
    return tier_ok(ev->tool_use.tier) ? NULL : "tier";
  case TURN_EV_APPROVAL:
    return tier_ok(ev->approval.tier) ? NULL : "tier";
  case TURN_EV_APPROVAL_DECIDED:
    return (unsigned)ev->approval_decided.decision < TURN_DECISION__COUNT ? NULL
                                                                          : "decision";
  case TURN_EV_TOOL_RESULT:
    if (ev->tool_result.status == TURN_STATUS_NULL ||
        (unsigned)ev->tool_result.status >= TURN_STATUS__COUNT)
      return "status";
    return (unsigned)ev->tool_result.approval < TURN_APPROVAL__COUNT ? NULL : "approval";
  case TURN_EV_END:
    return (unsigned)ev->end.stop_reason < TURN_STOP__COUNT ? NULL : "stop_reason";
  default:
    return NULL;
  }
}

int turn_order_step(turn_order *o, const turn_event *ev, turn_error *err) {
  if ((unsigned)ev->type >= TURN_EV__COUNT) return fail(err, TURN_E_INVALID, "type");
  const char *bad = value_out_of_range(ev);
  if (bad != NULL) return fail(err, TURN_E_INVALID, bad);

  /* After a lost line nothing is reported twice: the lost line may have been the
   * turn event (so what follows is that turn's rest) or the end (so a new turn
   * event simply starts the next turn). */
  bool lost = o->resync;
  o->resync = false;
  if (lost && o->state == TURN_IDLE && ev->type != TURN_EV_TURN) {
    set_turn_state(o, TURN_OPEN);
    o->next_seq = ev->seq;
  }
  bool abandoned = ev->type == TURN_EV_TURN && o->state != TURN_IDLE;
  if (abandoned) {
    clear_turn(o);
    set_turn_state(o, TURN_IDLE);
  }

  unsigned char move = turn_next[o->state][ev->type];
  bool counts = o->state != TURN_IDLE || move == T_OPEN; /* inside a turn */
  uint64_t expected = o->state == TURN_IDLE ? 0 : o->next_seq;
  bool seq_wrong = counts && ev->seq != expected && !(lost && o->state != TURN_IDLE);

  int rv;
  bool apply = true; /* whether the move happens despite rv */
  if (move == T_NO) {
    rv = fail(err, TURN_E_ORDER, "type");
    apply = false;
  } else if (ev->type == TURN_EV_END && o->open_calls > 0) {
    /* Every call a turn started ends with its result, however the turn ends: a
     * client would otherwise show it running for ever. Reported, and the turn
     * ends. */
    rv = fail(err, TURN_E_UNFINISHED, "stop_reason");
  } else {
    rv = step_call(o, ev, err);
    if (rv == TURN_E_NOMEM) return rv;
    apply = rv == TURN_OK;
  }

  /* Every event inside a turn uses up its seq, refused or not, and a gap moves the
   * count to the event's seq: one lost or bad line gives one report, not one for
   * every line after it. */
  if (counts) o->next_seq = ev->seq + 1;
  if (apply) {
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
  if (rv != TURN_OK) return rv;
  if (abandoned && !lost) return fail(err, TURN_E_ORDER, "type"); /* applied */
  if (seq_wrong) return fail(err, TURN_E_SEQ, "seq");             /* applied */
  return TURN_OK;
}

void turn_order_resync(turn_order *o) {
  o->resync = true;
}

int turn_order_finish(turn_order *o, turn_error *err) {
  bool lost = o->resync; /* the last line was lost: it may have been the end */
  o->resync = false;
  if (o->state == TURN_IDLE) return TURN_OK;
  clear_turn(o);
  set_turn_state(o, TURN_IDLE);
  return lost ? TURN_OK : fail(err, TURN_E_INCOMPLETE, NULL);
}
