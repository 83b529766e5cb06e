/* Unit tests for the order checker (src/proto/order.c): the turn machine and the
 * per-call machine, with events built in C (seq numbered by the fixture) or
 * parsed from the spec's example. Every refusal is followed by the rest of a
 * valid stream, which must still be accepted: a refused event changes nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "spec_example.h"
#include "support.h"
#include "turn/turn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------------- events */

static turn_event mk(turn_event_type t) {
  turn_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = t;
  return ev;
}

static turn_event ev_turn(const char *turn) {
  turn_event ev = mk(TURN_EV_TURN);
  ev.turn.turn = turn_str_c(turn);
  ev.turn.session = TURN_STR("20261001-080000-abcd");
  return ev;
}

static turn_event ev_text(const char *delta) {
  turn_event ev = mk(TURN_EV_TEXT);
  ev.text.delta = turn_str_c(delta);
  return ev;
}

static turn_event ev_reasoning(const char *delta) {
  turn_event ev = mk(TURN_EV_REASONING);
  ev.text.delta = turn_str_c(delta);
  return ev;
}

static turn_event ev_use(const char *id, const char *tool, int tier) {
  turn_event ev = mk(TURN_EV_TOOL_USE);
  ev.tool_use.id = turn_str_c(id);
  ev.tool_use.tool = turn_str_c(tool);
  ev.tool_use.tier = tier;
  return ev;
}

static turn_event ev_input(const char *id, const char *tool) {
  turn_event ev = mk(TURN_EV_TOOL_INPUT);
  ev.tool_input.id = turn_str_c(id);
  ev.tool_input.tool = turn_str_c(tool);
  ev.tool_input.input.json = TURN_STR("{}");
  return ev;
}

static turn_event ev_progress(const char *id, const char *tool) {
  turn_event ev = mk(TURN_EV_TOOL_PROGRESS);
  ev.tool_progress.id = turn_str_c(id);
  ev.tool_progress.tool = turn_str_c(tool);
  ev.tool_progress.message = TURN_STR("working");
  return ev;
}

static turn_event ev_result(const char *id, const char *tool, turn_status status,
                            turn_approval approval) {
  turn_event ev = mk(TURN_EV_TOOL_RESULT);
  ev.tool_result.id = turn_str_c(id);
  ev.tool_result.tool = turn_str_c(tool);
  ev.tool_result.summary = TURN_STR("done");
  ev.tool_result.status = status;
  ev.tool_result.approval = approval;
  return ev;
}

static turn_event ev_approval(const char *request, const char *tool, int tier) {
  turn_event ev = mk(TURN_EV_APPROVAL);
  ev.approval.request = turn_str_c(request);
  ev.approval.tool = turn_str_c(tool);
  ev.approval.tier = tier;
  ev.approval.effect = TURN_STR("physical");
  ev.approval.input.json = TURN_STR("{}");
  return ev;
}

static turn_event ev_decided(const char *request, turn_decision decision) {
  turn_event ev = mk(TURN_EV_APPROVAL_DECIDED);
  ev.approval_decided.request = turn_str_c(request);
  ev.approval_decided.decision = decision;
  return ev;
}

static turn_event ev_widget(const char *id) {
  turn_event ev = mk(TURN_EV_WIDGET);
  ev.widget.id = turn_str_c(id);
  ev.widget.title = TURN_STR("t");
  ev.widget.html = TURN_STR("<p>hi</p>");
  return ev;
}

static turn_event ev_guard(const char *action, const char *request) {
  turn_event ev = mk(TURN_EV_GUARD);
  ev.guard.action = turn_str_c(action);
  ev.guard.request = turn_str_c(request);
  return ev;
}

static turn_event ev_notice(void) {
  turn_event ev = mk(TURN_EV_NOTICE);
  ev.notice.text = TURN_STR("note");
  return ev;
}

static turn_event ev_throttled(void) {
  turn_event ev = mk(TURN_EV_THROTTLED);
  ev.throttled.delay_seconds = 1.5;
  return ev;
}

static turn_event ev_end(turn_stop_reason reason) {
  turn_event ev = mk(TURN_EV_END);
  ev.end.stop_reason = reason;
  return ev;
}

static turn_event ev_error(void) {
  turn_event ev = mk(TURN_EV_ERROR);
  ev.error.message = TURN_STR("backend failed");
  return ev;
}

/* ------------------------------------------------------------- fixture */

struct chk {
  turn_order *o;
  uint64_t seq;   /* seq the next event gets */
  turn_error err; /* of the last step */
  size_t steps;   /* for messages */
};

/* Checkers still open when a test fails (an assert jumps out of it): the
 * teardown frees them, so a failure is not also reported as a leak. */
static turn_order *open_checkers[4];

static void chk_open(struct chk *c) {
  memset(c, 0, sizeof *c);
  c->o = turn_order_new(NULL);
  assert_non_null(c->o);
  for (size_t i = 0; i < sizeof open_checkers / sizeof open_checkers[0]; i++) {
    if (open_checkers[i] == NULL) {
      open_checkers[i] = c->o;
      return;
    }
  }
  fail_msg("too many open checkers");
}

static void chk_close(struct chk *c) {
  for (size_t i = 0; i < sizeof open_checkers / sizeof open_checkers[0]; i++)
    if (open_checkers[i] == c->o) open_checkers[i] = NULL;
  turn_order_free(c->o);
  c->o = NULL;
}

static int free_open_checkers(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof open_checkers / sizeof open_checkers[0]; i++) {
    turn_order_free(open_checkers[i]);
    open_checkers[i] = NULL;
  }
  return 0;
}

/* Steps ev with the given seq; a refusal must fill err with the same code. */
static int step_seq(struct chk *c, turn_event ev, uint64_t seq) {
  ev.seq = seq;
  c->seq = seq + 1;
  c->steps++;
  c->err.code = 12345;
  int rv = turn_order_step(c->o, &ev, &c->err);
  if (rv != TURN_OK && c->err.code != rv) {
    print_error("step %zu (%s): returned %s but err says %s\n", c->steps,
                turn_event_type_name(ev.type), turn_errname(rv),
                turn_errname(c->err.code));
    fail();
  }
  return rv;
}

/* Steps ev with the next seq: 0 for a turn event outside a turn. */
static int step(struct chk *c, turn_event ev) {
  if (ev.type == TURN_EV_TURN && !turn_order_in_turn(c->o)) c->seq = 0;
  return step_seq(c, ev, c->seq);
}

static void expect(struct chk *c, turn_event ev, int want, int line) {
  int rv = step(c, ev);
  if (rv != want) {
    print_error("line %d, step %zu (%s seq %llu): want %s, got %s\n", line, c->steps,
                turn_event_type_name(ev.type), (unsigned long long)c->seq - 1,
                turn_errname(want), turn_errname(rv));
    fail();
  }
}

#define OK(c, ev)            expect((c), (ev), TURN_OK, __LINE__)
#define REFUSED(c, ev, code) expect((c), (ev), (code), __LINE__)
#define FINISH(c, code)      assert_int_equal(turn_order_finish((c)->o, NULL), (code))

/* ------------------------------------------------------ accepted streams */

static void test_order_example_parsed_is_accepted(void **state) {
  (void)state;
  turn_order *o = turn_order_new(NULL);
  assert_non_null(o);
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  assert_false(turn_order_in_turn(o));
  for (int round = 0; round < 2; round++) { /* twice: a log of two equal turns */
    for (size_t i = 0; i < SPEC_EXAMPLE_LINES; i++) {
      turn_event ev;
      turn_error err;
      turn_arena_reset(&arena);
      assert_int_equal(
          turn_event_parse(&ev, &arena, spec_example[i], strlen(spec_example[i]), &err),
          TURN_OK);
      assert_int_equal(turn_order_step(o, &ev, &err), TURN_OK);
      assert_int_equal(turn_order_in_turn(o), i + 1 < SPEC_EXAMPLE_LINES);
    }
  }
  assert_int_equal(turn_order_finish(o, NULL), TURN_OK);
  turn_arena_fini(&arena);
  turn_order_free(o);
}

/* The example built in C; the checker copies what it keeps, so the strings the
 * events point at may change after each step. */
static void test_order_example_built_is_accepted(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  char id[8], tool[16], req[8];
  memcpy(id, "u1", 3);
  memcpy(tool, "lamp_set", 9);
  memcpy(req, "a1", 3);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_use(id, tool, 2));
  memset(id, '?', 2);
  memset(tool, '?', 8);
  OK(&c, ev_input("u1", "lamp_set"));
  memcpy(tool, "lamp_set", 8);
  OK(&c, ev_approval(req, tool, 2));
  memset(req, '?', 2);
  memset(tool, '?', 8);
  OK(&c, ev_decided("a1", TURN_DECISION_APPROVED));
  OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_APPROVED));
  OK(&c, ev_text("The desk lamp is on."));
  assert_true(turn_order_in_turn(c.o));
  OK(&c, ev_end(TURN_STOP_END_TURN));
  assert_false(turn_order_in_turn(c.o));
  FINISH(&c, TURN_OK);
  chk_close(&c);
}

/* Guard events between approval and approval_decided (a step-up) and anywhere
 * else in an open turn. */
static void test_order_guard_events_anywhere_in_turn(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_guard("passed", ""));
  OK(&c, ev_use("u1", "lamp_set", 2));
  OK(&c, ev_guard("passed", ""));
  OK(&c, ev_input("u1", "lamp_set"));
  OK(&c, ev_approval("a1", "lamp_set", 2));
  OK(&c, ev_guard("step_up", "a1"));
  OK(&c, ev_guard("step_up_ok", "a1"));
  OK(&c, ev_decided("a1", TURN_DECISION_APPROVED));
  OK(&c, ev_guard("passed", "a1"));
  OK(&c, ev_progress("u1", "lamp_set"));
  OK(&c, ev_guard("passed", ""));
  OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_APPROVED));
  OK(&c, ev_guard("passed", ""));
  OK(&c, ev_end(TURN_STOP_END_TURN));
  FINISH(&c, TURN_OK);
  chk_close(&c);
}

/* Text and reasoning between the steps of two calls that run in parallel, one a
 * render_ui call with its widget; results in the other order. */
static void test_order_interleaved_parallel_calls(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_reasoning("think"));
  OK(&c, ev_use("u1", "web_get", 1));
  OK(&c, ev_text("a"));
  OK(&c, ev_use("u2", "render_ui", 0));
  OK(&c, ev_reasoning("more"));
  OK(&c, ev_input("u2", "render_ui"));
  OK(&c, ev_input("u1", "web_get"));
  OK(&c, ev_text("b"));
  OK(&c, ev_progress("u1", "web_get"));
  OK(&c, ev_progress("u2", "render_ui"));
  OK(&c, ev_widget("u2"));
  OK(&c, ev_progress("u1", "web_get"));
  OK(&c, ev_throttled());
  OK(&c, ev_notice());
  OK(&c, ev_progress("u2", "render_ui"));
  OK(&c, ev_result("u2", "render_ui", TURN_STATUS_OK, TURN_APPROVAL_NULL));
  OK(&c, ev_reasoning("x"));
  OK(&c, ev_result("u1", "web_get", TURN_STATUS_ERROR, TURN_APPROVAL_NULL));
  OK(&c, ev_text("c"));
  OK(&c, ev_end(TURN_STOP_END_TURN));
  FINISH(&c, TURN_OK);
  chk_close(&c);
}

/* A widget may come straight after the input, and after a decision. */
static void test_order_widget_after_input_or_decision(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_use("w1", "render_ui", 0));
  OK(&c, ev_input("w1", "render_ui"));
  OK(&c, ev_widget("w1"));
  OK(&c, ev_result("w1", "render_ui", TURN_STATUS_OK, TURN_APPROVAL_NULL));
  OK(&c, ev_use("w2", "render_ui", 2));
  OK(&c, ev_input("w2", "render_ui"));
  OK(&c, ev_approval("a1", "render_ui", 2));
  REFUSED(&c, ev_widget("w2"), TURN_E_ORDER); /* still awaiting the decision */
  OK(&c, ev_decided("a1", TURN_DECISION_APPROVED));
  OK(&c, ev_widget("w2"));
  OK(&c, ev_result("w2", "render_ui", TURN_STATUS_OK, TURN_APPROVAL_APPROVED));
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

/* Two tier-2 calls of one tool: approvals attach oldest first, and each result
 * must match its own call's decision. */
static void test_order_two_approvals_same_tool(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_use("u1", "lamp_set", 2));
  OK(&c, ev_use("u2", "lamp_set", 2));
  OK(&c, ev_input("u1", "lamp_set"));
  OK(&c, ev_input("u2", "lamp_set"));
  OK(&c, ev_approval("a1", "lamp_set", 2));
  /* u2 is ready for an approval, but not under a request already used. */
  REFUSED(&c, ev_approval("a1", "lamp_set", 2), TURN_E_DUPLICATE_ID);
  assert_string_equal(c.err.field, "request");
  OK(&c, ev_approval("a2", "lamp_set", 2));
  OK(&c, ev_decided("a2", TURN_DECISION_REJECTED));
  OK(&c, ev_decided("a1", TURN_DECISION_APPROVED));
  REFUSED(&c, ev_result("u2", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_APPROVED),
          TURN_E_MISMATCH);
  OK(&c, ev_result("u2", "lamp_set", TURN_STATUS_REJECTED, TURN_APPROVAL_REJECTED));
  OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_APPROVED));
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

/* A tier-0 and a tier-2 call of the same tool in parallel: the approval can only
 * belong to the tier-2 one (order.c: "the oldest tier-2 call of this tool whose
 * input is complete and that has no approval yet"). */
static void test_order_approval_skips_lower_tier_call_of_same_tool(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_use("u1", "lamp_set", 0));
  OK(&c, ev_input("u1", "lamp_set"));
  OK(&c, ev_use("u2", "lamp_set", 2));
  OK(&c, ev_input("u2", "lamp_set"));
  OK(&c, ev_approval("a1", "lamp_set", 2));
  OK(&c, ev_decided("a1", TURN_DECISION_APPROVED));
  OK(&c, ev_result("u2", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_APPROVED));
  OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_NULL));
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

/* A log: turns one after another, ids and requests reused across turns, a refused
 * turn, a busy turn and a turn that failed. */
static void test_order_log_of_turns(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  for (int round = 0; round < 3; round++) {
    OK(&c, ev_turn("t-1"));
    OK(&c, ev_use("u1", "lamp_set", 2));
    OK(&c, ev_input("u1", "lamp_set"));
    OK(&c, ev_approval("a1", "lamp_set", 2));
    OK(&c, ev_decided("a1", TURN_DECISION_TIMEOUT));
    OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_REJECTED, TURN_APPROVAL_TIMEOUT));
    OK(&c, ev_end(TURN_STOP_END_TURN));
    assert_false(turn_order_in_turn(c.o));

    /* refused by the guard */
    OK(&c, ev_turn("t-2"));
    OK(&c, ev_guard("refused", ""));
    OK(&c, ev_end(TURN_STOP_LOCKED));

    /* busy */
    OK(&c, ev_turn("t-3"));
    assert_true(turn_order_in_turn(c.o));
    OK(&c, ev_end(TURN_STOP_BUSY));

    /* failed */
    OK(&c, ev_turn("t-4"));
    OK(&c, ev_text("partial"));
    OK(&c, ev_error());
    assert_true(turn_order_in_turn(c.o));
    OK(&c, ev_end(TURN_STOP_ERROR));
    assert_false(turn_order_in_turn(c.o));
  }
  FINISH(&c, TURN_OK);
  chk_close(&c);
}

static void test_order_error_then_end(void **state) {
  (void)state;
  static const turn_stop_reason reasons[] = {TURN_STOP_ERROR, TURN_STOP_END_TURN,
                                             TURN_STOP_CANCELLED};
  for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++) {
    struct chk c;
    chk_open(&c);
    OK(&c, ev_turn("t-1"));
    OK(&c, ev_error());
    OK(&c, ev_end(reasons[i]));
    FINISH(&c, TURN_OK);
    chk_close(&c);
  }
}

/* Every call a turn started ends with its result, whatever stops the turn: an
 * end with a call or an approval still open is reported (and applied) for every
 * stop reason, also after an error event (a backend closes its calls before it
 * reports the error). Each call closes as far as it came: a call whose input
 * never came whole gets its result straight after tool_use, and one whose
 * approval waits gets its decision first. */
static void test_order_end_with_open_calls_for_every_reason(void **state) {
  (void)state;
  for (int r = 0; r < TURN_STOP__COUNT; r++) {
    for (int open = 0; open < 3; open++) {
      for (int errored = 0; errored < 2; errored++) {
        struct chk c;
        chk_open(&c);
        OK(&c, ev_turn("t-1"));
        OK(&c, ev_use("u1", "lamp_set", 2));
        if (open >= 1) OK(&c, ev_input("u1", "lamp_set"));
        if (open >= 2) OK(&c, ev_approval("a1", "lamp_set", 2)); /* awaiting */
        if (errored) OK(&c, ev_error());
        REFUSED(&c, ev_end((turn_stop_reason)r), TURN_E_UNFINISHED);
        assert_string_equal(c.err.field, "stop_reason");
        assert_false(turn_order_in_turn(c.o));
        /* The next turn starts clean: the open call of the last one is gone. */
        OK(&c, ev_turn("t-2"));
        REFUSED(&c, ev_input("u1", "lamp_set"), TURN_E_UNKNOWN_ID);
        REFUSED(&c, ev_decided("a1", TURN_DECISION_APPROVED), TURN_E_UNKNOWN_ID);
        OK(&c, ev_end(TURN_STOP_END_TURN));
        FINISH(&c, TURN_OK);

        /* The same turn with its call closed where it stood ends cleanly. */
        OK(&c, ev_turn("t-3"));
        OK(&c, ev_use("u1", "lamp_set", 2));
        if (open >= 1) OK(&c, ev_input("u1", "lamp_set"));
        if (open >= 2) OK(&c, ev_approval("a1", "lamp_set", 2));
        if (open >= 2) OK(&c, ev_decided("a1", TURN_DECISION_REJECTED));
        OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_REJECTED,
                         open >= 2 ? TURN_APPROVAL_REJECTED : TURN_APPROVAL_NULL));
        if (errored) OK(&c, ev_error());
        OK(&c, ev_end((turn_stop_reason)r));
        FINISH(&c, TURN_OK);
        chk_close(&c);
      }
    }
  }
}

/* A call whose input never came whole (the reply was cut off) is closed by a
 * result that says it did not run: error or rejected, never ok. */
static void test_order_call_without_input_closes(void **state) {
  (void)state;
  static const turn_status ok_statuses[] = {TURN_STATUS_ERROR, TURN_STATUS_REJECTED};
  for (size_t i = 0; i < 2; i++) {
    struct chk c;
    chk_open(&c);
    OK(&c, ev_turn("t-1"));
    OK(&c, ev_use("u1", "clock", 0));
    REFUSED(&c, ev_result("u1", "clock", TURN_STATUS_OK, TURN_APPROVAL_NULL),
            TURN_E_ORDER);
    assert_string_equal(c.err.field, "id");
    OK(&c, ev_result("u1", "clock", ok_statuses[i], TURN_APPROVAL_NULL));
    /* Closed: nothing more of it. */
    REFUSED(&c, ev_input("u1", "clock"), TURN_E_ORDER);
    REFUSED(&c, ev_result("u1", "clock", ok_statuses[i], TURN_APPROVAL_NULL),
            TURN_E_ORDER);
    OK(&c, ev_end(TURN_STOP_MAX_TOKENS));
    FINISH(&c, TURN_OK);
    chk_close(&c);
  }
  /* Without its input no approval was asked, so none is named. */
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_use("u1", "lamp_set", 2));
  REFUSED(&c, ev_result("u1", "lamp_set", TURN_STATUS_REJECTED, TURN_APPROVAL_REJECTED),
          TURN_E_MISMATCH);
  OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_REJECTED, TURN_APPROVAL_NULL));
  OK(&c, ev_end(TURN_STOP_CANCELLED));
  FINISH(&c, TURN_OK);
  chk_close(&c);
}

/* --------------------------------------------------------- refused events */

static void test_order_first_event_not_turn(void **state) {
  (void)state;
  turn_event firsts[] = {
      ev_text("a"), ev_use("u1", "x", 0),    ev_end(TURN_STOP_END_TURN),
      ev_error(),   ev_guard("refused", ""), ev_notice()};
  for (size_t i = 0; i < sizeof firsts / sizeof firsts[0]; i++) {
    struct chk c;
    chk_open(&c);
    REFUSED(&c, firsts[i], TURN_E_ORDER);
    assert_false(turn_order_in_turn(c.o));
    FINISH(&c, TURN_OK); /* nothing began */
    REFUSED(&c, firsts[i], TURN_E_ORDER);
    /* Nothing changed: a turn with seq 0 still starts the log. */
    OK(&c, ev_turn("t-1"));
    OK(&c, ev_end(TURN_STOP_END_TURN));
    FINISH(&c, TURN_OK);
    chk_close(&c);
  }
}

static void test_order_turn_seq_not_zero(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  assert_int_equal(step_seq(&c, ev_turn("t-1"), 5), TURN_E_SEQ);
  assert_int_equal(c.err.code, TURN_E_SEQ);
  assert_string_equal(c.err.field, "seq");
  /* Applied all the same, and counting goes on from 5: one report. */
  assert_true(turn_order_in_turn(c.o));
  OK(&c, ev_text("a")); /* seq 6 */
  OK(&c, ev_end(TURN_STOP_END_TURN));
  OK(&c, ev_turn("t-2")); /* seq 0 */
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

static void test_order_seq_gap_reported_once(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));                                                    /* 0 */
  OK(&c, ev_use("u1", "lamp_set", 0));                                       /* 1 */
  assert_int_equal(step_seq(&c, ev_input("u1", "lamp_set"), 4), TURN_E_SEQ); /* gap */
  /* The tool_input was applied: the result is in order. */
  OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_NULL)); /* 5 */
  OK(&c, ev_text("a"));                                                    /* 6 */
  /* A repeated seq is a gap too, reported once. */
  assert_int_equal(step_seq(&c, ev_text("b"), 6), TURN_E_SEQ);
  OK(&c, ev_text("c")); /* 7 */
  /* Going backwards, then on from there. */
  assert_int_equal(step_seq(&c, ev_text("d"), 2), TURN_E_SEQ);
  OK(&c, ev_text("e")); /* 3 */
  OK(&c, ev_end(TURN_STOP_END_TURN));
  FINISH(&c, TURN_OK);
  chk_close(&c);
}

/* turn.h: "after a gap (TURN_E_SEQ, the event otherwise applied)". An event that
 * comes after a gap and is refused as well was not applied, so E_SEQ alone would
 * tell the caller the opposite: the refusal must be the code it gets. */
static void test_order_gap_on_refused_event_reports_refusal(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_use("u1", "lamp_set", 0));
  assert_int_equal(
      step_seq(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_NULL), 5),
      TURN_E_ORDER);
  assert_int_equal(step_seq(&c, ev_input("nope", "lamp_set"), 9), TURN_E_UNKNOWN_ID);
  /* Counting went on from each event's seq all the same. */
  OK(&c, ev_input("u1", "lamp_set")); /* seq 10 */
  OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_NULL));
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

/* A refused event uses up its seq like any other in the turn. */
static void test_order_refused_event_uses_its_seq(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  REFUSED(&c, ev_input("nope", "x"), TURN_E_UNKNOWN_ID); /* seq 1 */
  OK(&c, ev_text("a"));                                  /* seq 2 */
  assert_int_equal(step_seq(&c, ev_text("b"), 2), TURN_E_SEQ);
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

static void test_order_event_after_end(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_end(TURN_STOP_END_TURN));
  turn_event after[] = {ev_text("late"),
                        ev_use("u1", "x", 0),
                        ev_input("u1", "x"),
                        ev_end(TURN_STOP_END_TURN),
                        ev_error(),
                        ev_guard("passed", ""),
                        ev_throttled(),
                        ev_notice(),
                        ev_decided("a1", TURN_DECISION_APPROVED)};
  for (size_t i = 0; i < sizeof after / sizeof after[0]; i++) {
    REFUSED(&c, after[i], TURN_E_ORDER);
    assert_false(turn_order_in_turn(c.o));
  }
  FINISH(&c, TURN_OK);
  OK(&c, ev_turn("t-2"));
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

static void test_order_second_turn_event_inside_turn(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_text("a"));
  REFUSED(&c, ev_turn("t-2"), TURN_E_ORDER); /* seq 2 */
  OK(&c, ev_text("b"));                      /* seq 3 */
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

static void test_order_unknown_call_id(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  REFUSED(&c, ev_input("u1", "lamp_set"), TURN_E_UNKNOWN_ID); /* before tool_use */
  REFUSED(&c, ev_progress("u1", "lamp_set"), TURN_E_UNKNOWN_ID);
  REFUSED(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_NULL),
          TURN_E_UNKNOWN_ID);
  REFUSED(&c, ev_widget("u1"), TURN_E_UNKNOWN_ID);
  assert_string_equal(c.err.field, "id");
  OK(&c, ev_use("u1", "lamp_set", 0));
  REFUSED(&c, ev_input("u2", "lamp_set"), TURN_E_UNKNOWN_ID);
  REFUSED(&c, ev_input("u", "lamp_set"), TURN_E_UNKNOWN_ID);
  REFUSED(&c, ev_input("u10", "lamp_set"), TURN_E_UNKNOWN_ID);
  OK(&c, ev_input("u1", "lamp_set"));
  REFUSED(&c, ev_progress("U1", "lamp_set"), TURN_E_UNKNOWN_ID);
  OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_NULL));
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

static void test_order_duplicate_tool_use_id(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_use("u1", "lamp_set", 2));
  REFUSED(&c, ev_use("u1", "web_get", 0), TURN_E_DUPLICATE_ID);
  assert_string_equal(c.err.field, "id");
  /* The first call is as it was: its tool and tier still hold. */
  OK(&c, ev_input("u1", "lamp_set"));
  OK(&c, ev_approval("a1", "lamp_set", 2));
  OK(&c, ev_decided("a1", TURN_DECISION_APPROVED));
  OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_APPROVED));
  /* Finished calls keep their id for the rest of the turn. */
  REFUSED(&c, ev_use("u1", "lamp_set", 2), TURN_E_DUPLICATE_ID);
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

static void test_order_tool_name_mismatch(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_use("u1", "lamp_set", 0));
  REFUSED(&c, ev_input("u1", "lamp_get"), TURN_E_MISMATCH);
  assert_string_equal(c.err.field, "tool");
  REFUSED(&c, ev_input("u1", "lamp_se"), TURN_E_MISMATCH);
  OK(&c, ev_input("u1", "lamp_set"));
  REFUSED(&c, ev_progress("u1", "other"), TURN_E_MISMATCH);
  OK(&c, ev_progress("u1", "lamp_set"));
  REFUSED(&c, ev_result("u1", "other", TURN_STATUS_OK, TURN_APPROVAL_NULL),
          TURN_E_MISMATCH);
  OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_NULL));
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

static void test_order_approval_for_non_tier2_call(void **state) {
  (void)state;
  static const int tiers[] = {0, 1, TURN_TIER_NULL};
  for (size_t i = 0; i < sizeof tiers / sizeof tiers[0]; i++) {
    struct chk c;
    chk_open(&c);
    OK(&c, ev_turn("t-1"));
    OK(&c, ev_use("u1", "lamp_set", tiers[i]));
    OK(&c, ev_input("u1", "lamp_set"));
    REFUSED(&c, ev_approval("a1", "lamp_set", 2), TURN_E_MISMATCH);
    /* Nothing changed: no approval is open, the call can finish without one. */
    REFUSED(&c, ev_decided("a1", TURN_DECISION_APPROVED), TURN_E_UNKNOWN_ID);
    OK(&c, ev_progress("u1", "lamp_set"));
    OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_NULL));
    OK(&c, ev_end(TURN_STOP_END_TURN));
    chk_close(&c);
  }
}

static void test_order_approval_tier_not_2(void **state) {
  (void)state;
  static const int tiers[] = {0, 1, TURN_TIER_NULL};
  for (size_t i = 0; i < sizeof tiers / sizeof tiers[0]; i++) {
    struct chk c;
    chk_open(&c);
    OK(&c, ev_turn("t-1"));
    OK(&c, ev_use("u1", "lamp_set", 2));
    OK(&c, ev_input("u1", "lamp_set"));
    REFUSED(&c, ev_approval("a1", "lamp_set", tiers[i]), TURN_E_ORDER);
    assert_string_equal(c.err.field, "tier");
    /* The request was not recorded: the same request is new to the checker. */
    REFUSED(&c, ev_decided("a1", TURN_DECISION_APPROVED), TURN_E_UNKNOWN_ID);
    OK(&c, ev_approval("a1", "lamp_set", 2));
    OK(&c, ev_decided("a1", TURN_DECISION_REJECTED));
    OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_REJECTED, TURN_APPROVAL_REJECTED));
    OK(&c, ev_end(TURN_STOP_END_TURN));
    chk_close(&c);
  }
}

static void test_order_approval_wrong_moment(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  /* No call of that tool at all. */
  REFUSED(&c, ev_approval("a1", "lamp_set", 2), TURN_E_UNKNOWN_ID);
  OK(&c, ev_use("u1", "lamp_set", 2));
  /* Input not complete yet. */
  REFUSED(&c, ev_approval("a1", "lamp_set", 2), TURN_E_ORDER);
  OK(&c, ev_input("u1", "lamp_set"));
  OK(&c, ev_approval("a1", "lamp_set", 2));
  /* A second approval for the same call, or the same request again. */
  REFUSED(&c, ev_approval("a2", "lamp_set", 2), TURN_E_ORDER);
  REFUSED(&c, ev_approval("a1", "lamp_set", 2), TURN_E_DUPLICATE_ID);
  OK(&c, ev_decided("a1", TURN_DECISION_APPROVED));
  REFUSED(&c, ev_decided("a2", TURN_DECISION_APPROVED), TURN_E_UNKNOWN_ID);
  OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_APPROVED));
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

static void test_order_approval_decided_unknown_or_twice(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  REFUSED(&c, ev_decided("a1", TURN_DECISION_APPROVED), TURN_E_UNKNOWN_ID);
  assert_string_equal(c.err.field, "request");
  OK(&c, ev_use("u1", "lamp_set", 2));
  OK(&c, ev_input("u1", "lamp_set"));
  OK(&c, ev_approval("a1", "lamp_set", 2));
  REFUSED(&c, ev_decided("a9", TURN_DECISION_APPROVED), TURN_E_UNKNOWN_ID);
  OK(&c, ev_decided("a1", TURN_DECISION_REJECTED));
  REFUSED(&c, ev_decided("a1", TURN_DECISION_APPROVED), TURN_E_ORDER);
  /* The first decision stands. */
  REFUSED(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_APPROVED),
          TURN_E_MISMATCH);
  OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_REJECTED, TURN_APPROVAL_REJECTED));
  REFUSED(&c, ev_decided("a1", TURN_DECISION_REJECTED), TURN_E_ORDER);
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

static void test_order_progress_while_awaiting_decision(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_use("u1", "lamp_set", 2));
  OK(&c, ev_input("u1", "lamp_set"));
  OK(&c, ev_approval("a1", "lamp_set", 2));
  REFUSED(&c, ev_progress("u1", "lamp_set"), TURN_E_ORDER);
  REFUSED(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_APPROVED),
          TURN_E_ORDER);
  REFUSED(&c, ev_input("u1", "lamp_set"), TURN_E_ORDER);
  OK(&c, ev_guard("step_up", "a1"));
  OK(&c, ev_decided("a1", TURN_DECISION_APPROVED));
  OK(&c, ev_progress("u1", "lamp_set"));
  OK(&c, ev_progress("u1", "lamp_set"));
  OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_APPROVED));
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

static void test_order_call_steps_out_of_order(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_use("u1", "lamp_set", 0));
  /* Before the input: no progress, result or second tool_use. */
  REFUSED(&c, ev_progress("u1", "lamp_set"), TURN_E_ORDER);
  REFUSED(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_NULL),
          TURN_E_ORDER);
  OK(&c, ev_input("u1", "lamp_set"));
  REFUSED(&c, ev_input("u1", "lamp_set"), TURN_E_ORDER);
  OK(&c, ev_progress("u1", "lamp_set"));
  REFUSED(&c, ev_input("u1", "lamp_set"), TURN_E_ORDER);
  OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_NULL));
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

static void test_order_result_after_result(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_use("u1", "lamp_set", 0));
  OK(&c, ev_input("u1", "lamp_set"));
  OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_NULL));
  REFUSED(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_NULL),
          TURN_E_ORDER);
  REFUSED(&c, ev_result("u1", "lamp_set", TURN_STATUS_ERROR, TURN_APPROVAL_NULL),
          TURN_E_ORDER);
  REFUSED(&c, ev_progress("u1", "lamp_set"), TURN_E_ORDER);
  REFUSED(&c, ev_input("u1", "lamp_set"), TURN_E_ORDER);
  /* The call is still done: an end_turn is fine. */
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

static void test_order_widget_rules(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_use("u1", "lamp_set", 0));
  OK(&c, ev_input("u1", "lamp_set"));
  REFUSED(&c, ev_widget("u1"), TURN_E_MISMATCH); /* not a render_ui call */
  OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_NULL));
  OK(&c, ev_use("w1", "render_ui", 0));
  REFUSED(&c, ev_widget("w1"), TURN_E_ORDER); /* before its input */
  OK(&c, ev_input("w1", "render_ui"));
  OK(&c, ev_progress("w1", "render_ui"));
  OK(&c, ev_widget("w1"));
  REFUSED(&c, ev_widget("w1"), TURN_E_ORDER); /* twice */
  OK(&c, ev_progress("w1", "render_ui"));
  REFUSED(&c, ev_widget("w1"), TURN_E_ORDER); /* still twice */
  OK(&c, ev_result("w1", "render_ui", TURN_STATUS_OK, TURN_APPROVAL_NULL));
  OK(&c, ev_use("w2", "render_ui", 0));
  OK(&c, ev_input("w2", "render_ui"));
  OK(&c, ev_result("w2", "render_ui", TURN_STATUS_ERROR, TURN_APPROVAL_NULL));
  REFUSED(&c, ev_widget("w2"), TURN_E_ORDER); /* after its result */
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

static void test_order_result_approval_must_match_decision(void **state) {
  (void)state;
  static const struct {
    turn_decision decision;
    turn_approval right;
  } cases[] = {{TURN_DECISION_APPROVED, TURN_APPROVAL_APPROVED},
               {TURN_DECISION_REJECTED, TURN_APPROVAL_REJECTED},
               {TURN_DECISION_TIMEOUT, TURN_APPROVAL_TIMEOUT}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct chk c;
    chk_open(&c);
    OK(&c, ev_turn("t-1"));
    OK(&c, ev_use("u1", "lamp_set", 2));
    OK(&c, ev_input("u1", "lamp_set"));
    OK(&c, ev_approval("a1", "lamp_set", 2));
    OK(&c, ev_decided("a1", cases[i].decision));
    for (int a = 0; a < TURN_APPROVAL__COUNT; a++) {
      if ((turn_approval)a == cases[i].right) continue;
      REFUSED(&c, ev_result("u1", "lamp_set", TURN_STATUS_REJECTED, (turn_approval)a),
              TURN_E_MISMATCH);
      assert_string_equal(c.err.field, "approval");
    }
    OK(&c, ev_result("u1", "lamp_set",
                     cases[i].right == TURN_APPROVAL_APPROVED ? TURN_STATUS_OK
                                                              : TURN_STATUS_REJECTED,
                     cases[i].right));
    OK(&c, ev_end(TURN_STOP_END_TURN));
    chk_close(&c);
  }
}

static void test_order_tier0_result_with_approval(void **state) {
  (void)state;
  for (int tier = 0; tier <= 1; tier++) {
    struct chk c;
    chk_open(&c);
    OK(&c, ev_turn("t-1"));
    OK(&c, ev_use("u1", "web_get", tier));
    OK(&c, ev_input("u1", "web_get"));
    for (int a = TURN_APPROVAL_APPROVED; a < TURN_APPROVAL__COUNT; a++)
      REFUSED(&c, ev_result("u1", "web_get", TURN_STATUS_OK, (turn_approval)a),
              TURN_E_MISMATCH);
    OK(&c, ev_result("u1", "web_get", TURN_STATUS_OK, TURN_APPROVAL_NULL));
    OK(&c, ev_end(TURN_STOP_END_TURN));
    chk_close(&c);
  }
}

/* A tier-2 call that never asked (a routine) may say "exempt". */
static void test_order_tier2_result_without_approval(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_use("u1", "lamp_set", 2));
  OK(&c, ev_input("u1", "lamp_set"));
  OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_EXEMPT));
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

static void test_order_error_then_only_end(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_use("u1", "lamp_set", 0));
  OK(&c, ev_input("u1", "lamp_set"));
  OK(&c, ev_use("u2", "lamp_set", 0));
  OK(&c, ev_input("u2", "lamp_set"));
  OK(&c, ev_result("u2", "lamp_set", TURN_STATUS_ERROR, TURN_APPROVAL_NULL));
  OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_ERROR, TURN_APPROVAL_NULL));
  OK(&c, ev_error());
  REFUSED(&c, ev_text("a"), TURN_E_ORDER);
  REFUSED(&c, ev_progress("u1", "lamp_set"), TURN_E_ORDER);
  REFUSED(&c, ev_use("u3", "x", 0), TURN_E_ORDER);
  REFUSED(&c, ev_error(), TURN_E_ORDER);
  REFUSED(&c, ev_guard("passed", ""), TURN_E_ORDER);
  REFUSED(&c, ev_notice(), TURN_E_ORDER);
  REFUSED(&c, ev_turn("t-2"), TURN_E_ORDER);
  assert_true(turn_order_in_turn(c.o));
  OK(&c, ev_end(TURN_STOP_ERROR));
  assert_false(turn_order_in_turn(c.o));
  FINISH(&c, TURN_OK);
  chk_close(&c);
}

static void test_order_end_with_open_call_end_turn(void **state) {
  (void)state;
  static const turn_stop_reason reasons[] = {TURN_STOP_END_TURN};
  for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++) {
    for (int open = 0; open < 4; open++) {
      struct chk c;
      chk_open(&c);
      OK(&c, ev_turn("t-1"));
      OK(&c, ev_use("u1", "lamp_set", 2));
      if (open >= 1) OK(&c, ev_input("u1", "lamp_set"));
      if (open >= 2) OK(&c, ev_approval("a1", "lamp_set", 2));
      if (open >= 3) OK(&c, ev_decided("a1", TURN_DECISION_APPROVED));
      REFUSED(&c, ev_end(reasons[i]), TURN_E_UNFINISHED);
      assert_string_equal(c.err.field, "stop_reason");
      /* Reported, and applied: the turn is over, so one bad end gives one report
       * and the next turn of a log is checked afresh. */
      assert_false(turn_order_in_turn(c.o));
      FINISH(&c, TURN_OK);
      OK(&c, ev_turn("t-2"));
      OK(&c, ev_use("u1", "lamp_set", 2)); /* the old turn's ids are forgotten */
      OK(&c, ev_input("u1", "lamp_set"));
      OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_NULL));
      OK(&c, ev_end(reasons[i]));
      FINISH(&c, TURN_OK);
      chk_close(&c);
    }
  }
}

static void test_order_finish_inside_turn(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  FINISH(&c, TURN_OK); /* empty log */
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_text("a"));
  turn_error err;
  memset(&err, 0, sizeof err);
  assert_int_equal(turn_order_finish(c.o, &err), TURN_E_INCOMPLETE);
  assert_int_equal(err.code, TURN_E_INCOMPLETE);
  chk_close(&c);

  /* An end reported as unfinished still ends the turn: complete. */
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_use("u1", "x", 0));
  REFUSED(&c, ev_end(TURN_STOP_END_TURN), TURN_E_UNFINISHED);
  FINISH(&c, TURN_OK);
  chk_close(&c);

  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_error());
  FINISH(&c, TURN_E_INCOMPLETE);
  chk_close(&c);

  /* A finished turn then a new one that does not end. */
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_end(TURN_STOP_END_TURN));
  FINISH(&c, TURN_OK);
  OK(&c, ev_turn("t-2"));
  FINISH(&c, TURN_E_INCOMPLETE);
  chk_close(&c);
}

static void test_order_null_err_and_bad_type(void **state) {
  (void)state;
  turn_order *o = turn_order_new(NULL);
  assert_non_null(o);
  turn_event ev = ev_text("a");
  assert_int_equal(turn_order_step(o, &ev, NULL), TURN_E_ORDER);
  ev = mk(TURN_EV__COUNT);
  turn_error err;
  memset(&err, 0, sizeof err);
  assert_int_equal(turn_order_step(o, &ev, &err), TURN_E_INVALID);
  ev = ev_turn("t-1");
  assert_int_equal(turn_order_step(o, &ev, NULL), TURN_OK);
  ev = ev_end(TURN_STOP_END_TURN);
  ev.seq = 1;
  assert_int_equal(turn_order_step(o, &ev, NULL), TURN_OK);
  turn_order_free(o);
  turn_order_free(NULL);
}

/* --------------------------------------- a refused event changes nothing */

/* A rich valid turn; the events at positions 1..n-1 are inside it. */
static void rich_turn(turn_event *evs, size_t *n) {
  size_t i = 0;
  evs[i++] = ev_turn("t-1");
  evs[i++] = ev_reasoning("r");
  evs[i++] = ev_use("u1", "lamp_set", 2);
  evs[i++] = ev_text("a");
  evs[i++] = ev_use("u2", "render_ui", 0);
  evs[i++] = ev_input("u1", "lamp_set");
  evs[i++] = ev_guard("passed", "");
  evs[i++] = ev_input("u2", "render_ui");
  evs[i++] = ev_approval("a1", "lamp_set", 2);
  evs[i++] = ev_guard("step_up", "a1");
  evs[i++] = ev_progress("u2", "render_ui");
  evs[i++] = ev_widget("u2");
  evs[i++] = ev_decided("a1", TURN_DECISION_APPROVED);
  evs[i++] = ev_progress("u1", "lamp_set");
  evs[i++] = ev_result("u2", "render_ui", TURN_STATUS_OK, TURN_APPROVAL_NULL);
  evs[i++] = ev_notice();
  evs[i++] = ev_throttled();
  evs[i++] = ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_APPROVED);
  evs[i++] = ev_text("b");
  evs[i++] = ev_end(TURN_STOP_END_TURN);
  *n = i;
}

static void test_order_refused_event_changes_nothing(void **state) {
  (void)state;
  turn_event evs[32];
  size_t n;
  rich_turn(evs, &n);
  /* Events refused wherever they come in this turn, with the code inside it. */
  const struct {
    turn_event ev;
    int code;
  } bad[] = {
      {ev_input("nope", "lamp_set"), TURN_E_UNKNOWN_ID},
      {ev_progress("nope", "lamp_set"), TURN_E_UNKNOWN_ID},
      {ev_result("nope", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_NULL),
       TURN_E_UNKNOWN_ID},
      {ev_widget("nope"), TURN_E_UNKNOWN_ID},
      {ev_decided("nope", TURN_DECISION_REJECTED), TURN_E_UNKNOWN_ID},
      {ev_approval("a9", "lamp_set", 1), TURN_E_ORDER},
      {ev_approval("a9", "no_such_tool", 2), TURN_E_UNKNOWN_ID},
      {ev_widget("u1"), TURN_E_MISMATCH},
  };
  const size_t n_bad = sizeof bad / sizeof bad[0];
  for (size_t b = 0; b < n_bad; b++) {
    for (size_t at = 1; at <= n; at++) {
      struct chk c;
      chk_open(&c);
      for (size_t i = 0; i < at; i++)
        OK(&c, evs[i]);
      int want = at < n ? bad[b].code : TURN_E_ORDER; /* after the end: order */
      /* widget for u1 before u1's tool_use is an unknown id */
      if (at < n && bad[b].ev.type == TURN_EV_WIDGET && at <= 2 &&
          bad[b].code == TURN_E_MISMATCH)
        want = TURN_E_UNKNOWN_ID;
      int rv = step(&c, bad[b].ev);
      if (rv != want) {
        print_error("bad event %zu at %zu: want %s, got %s\n", b, at, turn_errname(want),
                    turn_errname(rv));
        fail();
      }
      for (size_t i = at; i < n; i++) {
        rv = step(&c, evs[i]);
        if (rv != TURN_OK) {
          print_error("bad event %zu at %zu: event %zu then refused with %s\n", b, at, i,
                      turn_errname(rv));
          fail();
        }
      }
      FINISH(&c, TURN_OK);
      OK(&c, ev_turn("t-2")); /* the log goes on */
      OK(&c, ev_end(TURN_STOP_END_TURN));
      chk_close(&c);
    }
  }
}

/* Review finding: a turn event inside a turn (its end was lost) gave a report for
 * every event of the new turn. Now it is reported once and starts the new turn. */
static void test_order_turn_inside_turn_starts_the_next(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_use("u1", "clock", 0));
  assert_int_equal(step_seq(&c, ev_turn("t-2"), 0), TURN_E_ORDER);
  assert_true(turn_order_in_turn(c.o));
  OK(&c, ev_use("u1", "clock", 0)); /* u1 of the abandoned turn is forgotten */
  OK(&c, ev_input("u1", "clock"));
  OK(&c, ev_result("u1", "clock", TURN_STATUS_OK, TURN_APPROVAL_NULL));
  OK(&c, ev_end(TURN_STOP_END_TURN));
  FINISH(&c, TURN_OK);
  chk_close(&c);
}

/* After a lost line nothing is reported a second time: not the seq gap, not the
 * turn event it may have been, not the end it may have been. */
static void test_order_resync_after_lost_turn_or_end(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  turn_order_resync(c.o); /* the turn line was lost */
  assert_int_equal(step_seq(&c, ev_text("a"), 1), TURN_OK);
  OK(&c, ev_use("u1", "clock", 0));
  turn_order_resync(c.o); /* its input line was lost */
  assert_int_equal(step_seq(&c, ev_text("b"), 4), TURN_OK);
  turn_order_resync(c.o); /* the end line was lost */
  assert_int_equal(step_seq(&c, ev_turn("t-2"), 0), TURN_OK);
  OK(&c, ev_end(TURN_STOP_END_TURN));
  FINISH(&c, TURN_OK);
  chk_close(&c);
}

/* A tool refused by the owner or by the clock never runs: after a rejected or
 * timed-out decision only its result may follow. */
static void test_order_denied_call_only_gets_its_result(void **state) {
  (void)state;
  static const turn_decision denials[] = {TURN_DECISION_REJECTED, TURN_DECISION_TIMEOUT};
  static const turn_approval named[] = {TURN_APPROVAL_REJECTED, TURN_APPROVAL_TIMEOUT};
  for (size_t i = 0; i < 2; i++) {
    struct chk c;
    chk_open(&c);
    OK(&c, ev_turn("t-1"));
    OK(&c, ev_use("u1", "render_ui", 2));
    OK(&c, ev_input("u1", "render_ui"));
    OK(&c, ev_approval("a1", "render_ui", 2));
    OK(&c, ev_decided("a1", denials[i]));
    REFUSED(&c, ev_progress("u1", "render_ui"), TURN_E_ORDER);
    REFUSED(&c, ev_widget("u1"), TURN_E_ORDER);
    OK(&c, ev_result("u1", "render_ui", TURN_STATUS_REJECTED, named[i]));
    OK(&c, ev_end(TURN_STOP_END_TURN));
    chk_close(&c);
  }
}

/* Nothing approves on its own: "approved", "rejected" and "timeout" need an
 * approval_decided; "exempt" and "locked" need none, and only on tier 2. */
static void test_order_result_approval_needs_its_decision(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_use("u1", "lamp_set", 2));
  OK(&c, ev_input("u1", "lamp_set"));
  REFUSED(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_APPROVED),
          TURN_E_MISMATCH);
  REFUSED(&c, ev_result("u1", "lamp_set", TURN_STATUS_REJECTED, TURN_APPROVAL_TIMEOUT),
          TURN_E_MISMATCH);
  OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_EXEMPT));
  OK(&c, ev_use("u2", "clock", 0));
  OK(&c, ev_input("u2", "clock"));
  REFUSED(&c, ev_result("u2", "clock", TURN_STATUS_OK, TURN_APPROVAL_LOCKED),
          TURN_E_MISMATCH);
  OK(&c, ev_result("u2", "clock", TURN_STATUS_OK, TURN_APPROVAL_NULL));
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

/* Review finding: an event built in C with an enumeration out of range was read
 * as an index (decision) or skipped a rule (stop_reason). */
static void test_order_values_out_of_range_are_invalid(void **state) {
  (void)state;
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  OK(&c, ev_use("u1", "lamp_set", 2));
  OK(&c, ev_input("u1", "lamp_set"));
  OK(&c, ev_approval("a1", "lamp_set", 2));
  const uint64_t next = c.seq; /* an invalid event does not even use up its seq */
  turn_event bad = ev_decided("a1", TURN_DECISION_APPROVED);
  bad.approval_decided.decision = (turn_decision)100000;
  REFUSED(&c, bad, TURN_E_INVALID);
  c.seq = next;
  assert_string_equal(c.err.field, "decision");
  bad = ev_end(TURN_STOP_END_TURN);
  bad.end.stop_reason = (turn_stop_reason)42;
  REFUSED(&c, bad, TURN_E_INVALID);
  c.seq = next;
  bad = ev_use("u2", "x", 0);
  bad.tool_use.tier = 3;
  REFUSED(&c, bad, TURN_E_INVALID);
  c.seq = next;
  bad = ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_APPROVED);
  bad.tool_result.status = TURN_STATUS_NULL;
  REFUSED(&c, bad, TURN_E_INVALID);
  c.seq = next;
  OK(&c, ev_decided("a1", TURN_DECISION_APPROVED));
  OK(&c, ev_result("u1", "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_APPROVED));
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

/* Approvals go to a tool's tier-2 calls in the order their inputs completed,
 * however many calls of that tool are waiting. */
static void test_order_approvals_follow_input_order(void **state) {
  (void)state;
  enum { N = 2000 };
  static char ids[N][16], requests[N][16];
  struct chk c;
  chk_open(&c);
  OK(&c, ev_turn("t-1"));
  for (int i = 0; i < N; i++) {
    snprintf(ids[i], sizeof ids[i], "u%d", i);
    snprintf(requests[i], sizeof requests[i], "a%d", i);
    OK(&c, ev_use(ids[i], "lamp_set", 2));
  }
  for (int i = N - 1; i >= 0; i--) /* inputs complete newest first */
    OK(&c, ev_input(ids[i], "lamp_set"));
  for (int i = N - 1; i >= 0; i--) {
    OK(&c, ev_approval(requests[i], "lamp_set", 2));
    /* The approval went to ids[i]: its call now awaits the decision. */
    REFUSED(&c, ev_progress(ids[i], "lamp_set"), TURN_E_ORDER);
  }
  for (int i = 0; i < N; i++) {
    OK(&c, ev_decided(requests[i], TURN_DECISION_APPROVED));
    OK(&c, ev_result(ids[i], "lamp_set", TURN_STATUS_OK, TURN_APPROVAL_APPROVED));
  }
  REFUSED(&c, ev_approval("late", "lamp_set", 2), TURN_E_ORDER);
  OK(&c, ev_end(TURN_STOP_END_TURN));
  chk_close(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_order_example_parsed_is_accepted,
                                free_open_checkers),
      cmocka_unit_test_teardown(test_order_example_built_is_accepted, free_open_checkers),
      cmocka_unit_test_teardown(test_order_guard_events_anywhere_in_turn,
                                free_open_checkers),
      cmocka_unit_test_teardown(test_order_interleaved_parallel_calls,
                                free_open_checkers),
      cmocka_unit_test_teardown(test_order_widget_after_input_or_decision,
                                free_open_checkers),
      cmocka_unit_test_teardown(test_order_two_approvals_same_tool, free_open_checkers),
      cmocka_unit_test_teardown(test_order_approval_skips_lower_tier_call_of_same_tool,
                                free_open_checkers),
      cmocka_unit_test_teardown(test_order_log_of_turns, free_open_checkers),
      cmocka_unit_test_teardown(test_order_error_then_end, free_open_checkers),
      cmocka_unit_test_teardown(test_order_end_with_open_calls_for_every_reason,
                                free_open_checkers),
      cmocka_unit_test_teardown(test_order_call_without_input_closes, free_open_checkers),
      cmocka_unit_test_teardown(test_order_first_event_not_turn, free_open_checkers),
      cmocka_unit_test_teardown(test_order_turn_seq_not_zero, free_open_checkers),
      cmocka_unit_test_teardown(test_order_seq_gap_reported_once, free_open_checkers),
      cmocka_unit_test_teardown(test_order_gap_on_refused_event_reports_refusal,
                                free_open_checkers),
      cmocka_unit_test_teardown(test_order_refused_event_uses_its_seq,
                                free_open_checkers),
      cmocka_unit_test_teardown(test_order_event_after_end, free_open_checkers),
      cmocka_unit_test_teardown(test_order_second_turn_event_inside_turn,
                                free_open_checkers),
      cmocka_unit_test_teardown(test_order_unknown_call_id, free_open_checkers),
      cmocka_unit_test_teardown(test_order_duplicate_tool_use_id, free_open_checkers),
      cmocka_unit_test_teardown(test_order_tool_name_mismatch, free_open_checkers),
      cmocka_unit_test_teardown(test_order_approval_for_non_tier2_call,
                                free_open_checkers),
      cmocka_unit_test_teardown(test_order_approval_tier_not_2, free_open_checkers),
      cmocka_unit_test_teardown(test_order_approval_wrong_moment, free_open_checkers),
      cmocka_unit_test_teardown(test_order_approval_decided_unknown_or_twice,
                                free_open_checkers),
      cmocka_unit_test_teardown(test_order_progress_while_awaiting_decision,
                                free_open_checkers),
      cmocka_unit_test_teardown(test_order_call_steps_out_of_order, free_open_checkers),
      cmocka_unit_test_teardown(test_order_result_after_result, free_open_checkers),
      cmocka_unit_test_teardown(test_order_widget_rules, free_open_checkers),
      cmocka_unit_test_teardown(test_order_result_approval_must_match_decision,
                                free_open_checkers),
      cmocka_unit_test_teardown(test_order_tier0_result_with_approval,
                                free_open_checkers),
      cmocka_unit_test_teardown(test_order_tier2_result_without_approval,
                                free_open_checkers),
      cmocka_unit_test_teardown(test_order_error_then_only_end, free_open_checkers),
      cmocka_unit_test_teardown(test_order_end_with_open_call_end_turn,
                                free_open_checkers),
      cmocka_unit_test_teardown(test_order_finish_inside_turn, free_open_checkers),
      cmocka_unit_test_teardown(test_order_null_err_and_bad_type, free_open_checkers),
      cmocka_unit_test_teardown(test_order_refused_event_changes_nothing,
                                free_open_checkers),
      cmocka_unit_test(test_order_turn_inside_turn_starts_the_next),
      cmocka_unit_test(test_order_resync_after_lost_turn_or_end),
      cmocka_unit_test(test_order_denied_call_only_gets_its_result),
      cmocka_unit_test(test_order_result_approval_needs_its_decision),
      cmocka_unit_test(test_order_values_out_of_range_are_invalid),
      cmocka_unit_test(test_order_approvals_follow_input_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
