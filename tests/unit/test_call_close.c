/* Closing the calls a cut-off turn left open (src/agent/call_close.c): fed a
 * turn's recorded events, it gives the events that end each open call, which
 * the order checker must accept before the turn's end, with the status and the
 * words turnd's docs give for where each call stood. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/call_close.h"
#include "turn/turn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USE(seq, id, tool, tier)                                                       \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"tool_use\",\"id\":\"" id "\",\"tool\":\"" tool \
  "\",\"tier\":" #tier "}\n"
#define INPUT(seq, id, tool)                                                             \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"tool_input\",\"id\":\"" id "\",\"tool\":\"" tool \
  "\",\"input\":{},\"truncated\":false}\n"
#define APPROVAL(seq, req, tool)                                            \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"approval\",\"request\":\"" req      \
  "\",\"tool\":\"" tool                                                     \
  "\",\"tier\":2,\"effect\":\"physical\",\"input\":{},\"truncated\":false," \
  "\"expires_at\":null}\n"
#define DECIDED(seq, req, d)                                                   \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"approval_decided\",\"request\":\"" req \
  "\",\"decision\":\"" d "\"}\n"
#define PROGRESS(seq, id, tool)                                       \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"tool_progress\",\"id\":\"" id \
  "\",\"tool\":\"" tool "\",\"message\":\"1 of 5\"}\n"
#define RESULT(seq, id, tool)                                       \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"tool_result\",\"id\":\"" id \
  "\",\"tool\":\"" tool "\",\"status\":\"ok\",\"summary\":\"fine\",\"approval\":null}\n"
#define TURN \
  "{\"v\":1,\"seq\":0,\"type\":\"turn\",\"turn\":\"t-1\",\"session\":\"s-1\"}\n"

struct closed {
  char what[8]
           [160]; /* per closing event: "decided DECISION" or "STATUS/APPROVAL SUMMARY" */
  size_t n;
};

/* Feeds lines (in two chunks, cut at split, a line's end), closes what is open, checks
 * the whole turn with the order checker (the closing events, then the end) and says what
 * each closing event was. */
static void close_turn(const char *lines, size_t split, bool reply_complete,
                       struct closed *out) {
  struct call_close cc;
  call_close_init(&cc);
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  size_t len = strlen(lines);
  assert_true(split <= len);
  assert_int_equal(call_close_feed(&cc, &arena, lines, split), 0);
  assert_int_equal(call_close_feed(&cc, &arena, lines + split, len - split), 0);

  turn_order *o = turn_order_new(NULL);
  assert_non_null(o);
  uint64_t seq = 0;
  for (const char *p = lines; *p != '\0';) {
    const char *nl = strchr(p, '\n');
    turn_event ev;
    turn_arena_reset(&arena);
    assert_int_equal(turn_event_parse(&ev, &arena, p, (size_t)(nl - p), NULL), TURN_OK);
    assert_int_equal(turn_order_step(o, &ev, NULL), TURN_OK);
    seq = ev.seq + 1;
    p = nl + 1;
  }
  memset(out, 0, sizeof *out);
  turn_event ev;
  turn_arena_reset(&arena);
  while (call_close_next(&cc, "turnd stopped", reply_complete, &arena, &ev)) {
    ev.seq = seq++;
    turn_error err;
    if (turn_order_step(o, &ev, &err) != TURN_OK)
      fail_msg("refused: %s", turn_errname(err.code));
    assert_true(out->n < 8);
    if (ev.type == TURN_EV_APPROVAL_DECIDED) {
      snprintf(out->what[out->n++], sizeof out->what[0], "decided %s",
               turn_decision_name(ev.approval_decided.decision));
    } else {
      assert_int_equal(ev.type, TURN_EV_TOOL_RESULT);
      const char *approval = turn_approval_name(ev.tool_result.approval);
      snprintf(out->what[out->n++], sizeof out->what[0], "%s/%s %.*s",
               turn_status_name(ev.tool_result.status),
               approval != NULL ? approval : "null", (int)ev.tool_result.summary.len,
               ev.tool_result.summary.p);
    }
    turn_arena_reset(&arena);
  }
  turn_event end = {.type = TURN_EV_END, .seq = seq};
  end.end.stop_reason = TURN_STOP_INTERRUPT;
  assert_int_equal(turn_order_step(o, &end, NULL), TURN_OK); /* nothing left open */
  assert_int_equal(turn_order_finish(o, NULL), TURN_OK);
  turn_order_free(o);
  turn_arena_fini(&arena);
  call_close_fini(&cc);
}

/* The waiting approval is decided first; each call says where it stood. */
static void test_call_close_each_call_as_it_stood(void **state) {
  (void)state;
  static const char lines[] = TURN USE(1, "u1", "clock", 0) INPUT(2, "u1", "clock")
      RESULT(3, "u1", "clock") USE(4, "u2", "lamp_set", 2) INPUT(5, "u2", "lamp_set")
          USE(6, "u3", "clock", 0) INPUT(7, "u3", "clock") USE(8, "u4", "clock", 0)
              APPROVAL(9, "t-1.a1", "lamp_set");
  /* Fed whole, or in two chunks at any line's end (a chunk is whole lines). */
  for (size_t split = 0; split < sizeof lines - 1;
       split = (size_t)(strchr(lines + split, '\n') - lines) + 1) {
    struct closed c;
    close_turn(lines, split, true, &c);
    assert_int_equal(c.n, 4);
    assert_string_equal(c.what[0], "decided rejected");
    assert_string_equal(c.what[1], "rejected/rejected not run: turnd stopped while its "
                                   "approval waited");
    assert_string_equal(c.what[2], "error/null not run: turnd stopped");
    assert_string_equal(
        c.what[3], "error/null not run: turnd stopped before its input was complete");
  }
}

/* A call that had begun, by its own word or by the owner's yes, may have run
 * in part; so may the first call of an ended reply that needs nobody's yes
 * (quiet tools say nothing when they start). Of a reply still streaming,
 * nothing ran. */
static void test_call_close_begun_or_not(void **state) {
  (void)state;
  static const char *const stopped =
      "error/null stopped: turnd stopped while it ran, so it may have run in part";
  struct closed c;
  close_turn(TURN USE(1, "u1", "clock", 0) INPUT(2, "u1", "clock")
                 PROGRESS(3, "u1", "clock"),
             0, false, &c);
  assert_int_equal(c.n, 1);
  assert_string_equal(c.what[0], stopped);

  close_turn(TURN USE(1, "u1", "clock", 0) INPUT(2, "u1", "clock")
                 USE(3, "u2", "clock", 0) INPUT(4, "u2", "clock"),
             0, true, &c);
  assert_int_equal(c.n, 2);
  assert_string_equal(c.what[0], stopped);
  assert_string_equal(c.what[1], "error/null not run: turnd stopped");

  close_turn(TURN USE(1, "u1", "clock", 0) INPUT(2, "u1", "clock"), 0, false, &c);
  assert_string_equal(c.what[0], "error/null not run: turnd stopped");

  close_turn(TURN USE(1, "u1", "lamp_set", 2) INPUT(2, "u1", "lamp_set")
                 APPROVAL(3, "t-1.a1", "lamp_set") DECIDED(4, "t-1.a1", "approved"),
             0, true, &c);
  assert_int_equal(c.n, 1);
  assert_string_equal(
      c.what[0],
      "error/approved stopped: turnd stopped while it ran, so it may have run in part");

  /* Decided no, its result not yet out: it never ran. */
  close_turn(TURN USE(1, "u1", "lamp_set", 2) INPUT(2, "u1", "lamp_set")
                 APPROVAL(3, "t-1.a1", "lamp_set") DECIDED(4, "t-1.a1", "timeout"),
             0, true, &c);
  assert_string_equal(c.what[0], "rejected/timeout not run: turnd stopped");
}

/* A turn with nothing open gets nothing. */
static void test_call_close_nothing_open(void **state) {
  (void)state;
  struct closed c;
  close_turn(TURN USE(1, "u1", "clock", 0) INPUT(2, "u1", "clock")
                 RESULT(3, "u1", "clock"),
             sizeof TURN - 1, true, &c);
  assert_int_equal(c.n, 0);
  close_turn(TURN, 0, true, &c);
  assert_int_equal(c.n, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_call_close_each_call_as_it_stood),
      cmocka_unit_test(test_call_close_begun_or_not),
      cmocka_unit_test(test_call_close_nothing_open),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
