/* A session's history blocks (src/agent/history.c) from recorded event chunks
 * and stored messages, by the spec's History rules. Every output must also pass
 * libturn's history parser, since that is what the app's reader enforces. JSON
 * in this file is written with ' for " (dq() turns it back) to stay readable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/history.h"
#include "turn/turn.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 2026-10-01T08:00:00Z; tests stay within its minute, or write "at" in full. */
#define T0 1790841600000u
/* In expected blocks, @ stands for "2026-10-01T08:00:", so a time at T0 + 250 ms
 * reads '@00.250Z'. */
#define AT_PREFIX "2026-10-01T08:00:"

/* ' -> " and @ -> AT_PREFIX: owned, free(). */
static char *dq(const char *s) {
  size_t n_at = 0;
  for (const char *p = s; *p != '\0'; p++)
    n_at += *p == '@';
  char *out = malloc(strlen(s) + n_at * (sizeof AT_PREFIX - 2) + 1);
  assert_non_null(out);
  char *w = out;
  for (const char *p = s; *p != '\0'; p++) {
    if (*p == '@') {
      memcpy(w, AT_PREFIX, sizeof AT_PREFIX - 1);
      w += sizeof AT_PREFIX - 1;
    } else {
      *w++ = *p == '\'' ? '"' : *p;
    }
  }
  *w = '\0';
  return out;
}

/* seq counts up within a turn as turnd records it; history ignores it, but the
 * lines should be what the store really holds. */
static char seq_turn[32];
static uint64_t seq_next;

/* Each test gets a fresh history in *state, freed by the teardown even when
 * the test fails, so a failing test reports its failure and not a leak. */
static int setup(void **state) {
  seq_turn[0] = '\0';
  seq_next = 0;
  *state = history_new();
  return *state == NULL ? -1 : 0;
}

static int teardown(void **state) {
  history_free(*state);
  return 0;
}

/* Appends one event line: {"v":1,"seq":N, then body without its '{'. The line
 * must parse, so a typo here cannot pass as "a bad line is skipped". */
static void put_line(turn_buf *chunk, const char *turn, const char *body) {
  if (strcmp(seq_turn, turn) != 0) {
    snprintf(seq_turn, sizeof seq_turn, "%s", turn);
    seq_next = 0;
  }
  char *b = dq(body);
  assert_int_equal(b[0], '{');
  char head[48];
  int n = snprintf(head, sizeof head, "{\"v\":1,\"seq\":%llu,",
                   (unsigned long long)seq_next++);
  size_t start = chunk->len;
  assert_int_equal(turn_buf_append(chunk, head, (size_t)n), TURN_OK);
  assert_int_equal(turn_buf_append(chunk, b + 1, strlen(b + 1)), TURN_OK);
  free(b);
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  turn_event ev;
  int rc = turn_event_parse(&ev, &arena, chunk->data + start, chunk->len - start, NULL);
  turn_arena_fini(&arena);
  assert_int_equal(rc, TURN_OK);
  assert_int_equal(turn_buf_append(chunk, "\n", 1), TURN_OK);
}

/* One recorded chunk of a turn's events; all of them have the chunk's time.
 * bodies ends with NULL. */
static void chunk(struct history *h, const char *turn, uint64_t at_ms,
                  const char *const *bodies) {
  turn_buf b;
  turn_buf_init(&b, SIZE_MAX, NULL);
  for (size_t i = 0; bodies[i] != NULL; i++)
    put_line(&b, turn, bodies[i]);
  int rc = history_add_events(h, turn, at_ms, b.data, b.len);
  turn_buf_fini(&b);
  assert_int_equal(rc, 0);
}

#define CHUNK(h, turn, at_ms, ...) \
  chunk(h, turn, at_ms, (const char *const[]){__VA_ARGS__, NULL})

static void message(struct history *h, const char *turn, uint64_t at_ms,
                    const char *json) {
  char *m = dq(json);
  assert_int_equal(history_add_message(h, turn, at_ms, m), 0);
  free(m);
}

struct walk {
  size_t n_blocks, n_bad, n_bad_at;
};

static int on_block(void *ctx, size_t index, const turn_block *b, const turn_error *err) {
  struct walk *w = ctx;
  (void)index;
  if (b == NULL || err != NULL) {
    w->n_bad++;
    return 0;
  }
  if (!turn_iso8601_valid(b->at)) w->n_bad_at++;
  w->n_blocks++;
  return 0;
}

/* The blocks as the route sends them: checked by libturn's document parser
 * (every block valid, every "at" a time), then returned parsed (json_decref). */
static json_t *blocks_of(struct history *h) {
  turn_buf out;
  turn_buf_init(&out, SIZE_MAX, NULL);
  static const char head[] = "{\"session\":{},\"blocks\":";
  assert_int_equal(turn_buf_append(&out, head, sizeof head - 1), TURN_OK);
  int rc = history_blocks(h, &out);
  if (rc != 0) {
    turn_buf_fini(&out);
    fail_msg("history_blocks returned %d", rc);
  }
  json_t *blocks =
      json_loadb(out.data + sizeof head - 1, out.len - (sizeof head - 1), 0, NULL);
  assert_int_equal(turn_buf_append(&out, "}", 1), TURN_OK);
  struct walk w = {0, 0, 0};
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  turn_error err;
  rc = turn_history_parse(out.data, out.len, &arena, on_block, &w, &err);
  turn_arena_fini(&arena);
  turn_buf_fini(&out);
  if (rc != TURN_OK || w.n_bad > 0 || w.n_bad_at > 0 || !json_is_array(blocks) ||
      w.n_blocks != json_array_size(blocks)) {
    json_decref(blocks);
    fail_msg("history rejected: rc %d, %zu bad blocks, %zu bad times", rc, w.n_bad,
             w.n_bad_at);
  }
  return blocks;
}

/* Compares the whole output with expected (a JSON array, ' for "). */
static void expect_blocks(struct history *h, const char *expected) {
  json_t *got = blocks_of(h);
  char *e = dq(expected);
  json_t *want = json_loads(e, 0, NULL);
  free(e);
  if (want == NULL) json_decref(got);
  assert_non_null(want); /* a typo in the test itself */
  if (!json_equal(got, want)) {
    char *g = json_dumps(got, JSON_COMPACT), *x = json_dumps(want, JSON_COMPACT);
    print_error("got:  %s\nwant: %s\n", g, x);
    free(g);
    free(x);
    json_decref(got);
    json_decref(want);
    fail();
  }
  json_decref(got);
  json_decref(want);
}

/* The only block of the history (json_decref), checked before anything leaks. */
static json_t *only_block(struct history *h) {
  json_t *blocks = blocks_of(h);
  size_t n = json_array_size(blocks);
  json_t *b = n == 1 ? json_incref(json_array_get(blocks, 0)) : NULL;
  json_decref(blocks);
  assert_int_equal(n, 1);
  return b;
}

#define USER(text)    "{'role':'user','content':[{'type':'text','text':'" text "'}]}"
#define SAYS(text)    "{'role':'assistant','content':[{'type':'text','text':'" text "'}]}"
#define TURN_EV(turn) "{'type':'turn','turn':'" turn "','session':'s-1'}"
#define USE(id, tool, tier) \
  "{'type':'tool_use','id':'" id "','tool':'" tool "','tier':" tier "}"
#define INPUT(id, tool) \
  "{'type':'tool_input','id':'" id "','tool':'" tool "','input':{},'truncated':false}"
#define RESULT(id, tool, status, summary, approval)                         \
  "{'type':'tool_result','id':'" id "','tool':'" tool "','status':'" status \
  "','summary':'" summary "','approval':" approval "}"
#define ASK(request, tool)                                   \
  "{'type':'approval','request':'" request "','tool':'" tool \
  "','tier':2,'effect':'physical','input':{},'truncated':false,'expires_at':null}"
#define DECIDED(request, decision) \
  "{'type':'approval_decided','request':'" request "','decision':'" decision "'}"
#define NOTICE(text) "{'type':'notice','text':'" text "'}"
#define END(reason)  "{'type':'end','stop_reason':'" reason "'}"

/* ------------------------------------------------------------------ times */

static void test_history_iso8601_has_milliseconds_and_z(void **state) {
  (void)state;
  static const struct {
    uint64_t ms;
    const char *iso;
  } cases[] = {
      {0, "1970-01-01T00:00:00.000Z"},
      {T0, "2026-10-01T08:00:00.000Z"},
      {T0 + 7, "2026-10-01T08:00:00.007Z"},
      {T0 + 61999, "2026-10-01T08:01:01.999Z"},
      {951782400999u, "2000-02-29T00:00:00.999Z"},
      {253402300799999u, "9999-12-31T23:59:59.999Z"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char out[25];
    memset(out, 'x', sizeof out);
    history_iso8601(cases[i].ms, out);
    assert_string_equal(out, cases[i].iso);
    assert_true(turn_iso8601_valid(turn_str_c(out)));
  }
}

/* ------------------------------------------------------------ text blocks */

static void test_history_empty_session_is_an_empty_array(void **state) {
  struct history *h = *state;
  expect_blocks(h, "[]");
  history_free(NULL);
}

static void test_history_user_assistant_reasoning_in_message_order(void **state) {
  struct history *h = *state;
  CHUNK(h, "t-1", T0, TURN_EV("t-1"));
  CHUNK(h, "t-1", T0 + 300, END("end_turn"));
  message(h, "t-1", T0, USER("what time is it?"));
  message(h, "t-1", T0 + 100,
          "{'role':'assistant','content':[{'type':'thinking','thinking':'the clock'},"
          "{'type':'text','text':'It is late.'}]}");
  message(h, "t-1", T0 + 200, USER("really?"));
  message(h, "t-1", T0 + 250, "{'role':'assistant','content':'Yes.'}");
  expect_blocks(h, "[{'type':'user','text':'what time is it?','at':'@00.000Z'},"
                   "{'type':'reasoning','text':'the clock','at':'@00.100Z'},"
                   "{'type':'assistant','text':'It is late.','at':'@00.100Z'},"
                   "{'type':'user','text':'really?','at':'@00.200Z'},"
                   "{'type':'assistant','text':'Yes.','at':'@00.250Z'}]");
}

static void test_history_text_of_one_message_joined_not_across_tool_use(void **state) {
  struct history *h = *state;
  message(h, "t-1", T0, USER("go"));
  message(h, "t-1", T0 + 10,
          "{'role':'assistant','content':[{'type':'text','text':'Hello, '},"
          "{'type':'text','text':'world.'},"
          "{'type':'tool_use','id':'u1','name':'clock','input':{}},"
          "{'type':'text','text':'After'},{'type':'text','text':' it.'},"
          "{'type':'thinking','thinking':'hm'},{'type':'text','text':'Last.'}]}");
  /* Two messages are two blocks even when both are only text. */
  message(h, "t-1", T0 + 20, SAYS("One"));
  message(h, "t-1", T0 + 30, SAYS("Two"));
  expect_blocks(h, "[{'type':'user','text':'go','at':'@00.000Z'},"
                   "{'type':'assistant','text':'Hello, world.','at':'@00.010Z'},"
                   "{'type':'tool','id':'u1','tool':'clock','tier':null,'input':{},"
                   "'truncated':false,'status':null,'summary':null,'approval':null,"
                   "'duration_ms':null,'at':'@00.010Z'},"
                   "{'type':'assistant','text':'After it.','at':'@00.010Z'},"
                   "{'type':'reasoning','text':'hm','at':'@00.010Z'},"
                   "{'type':'assistant','text':'Last.','at':'@00.010Z'},"
                   "{'type':'assistant','text':'One','at':'@00.020Z'},"
                   "{'type':'assistant','text':'Two','at':'@00.030Z'}]");
}

/* ------------------------------------------------------------ tool blocks */

static void test_history_tool_details_come_from_events(void **state) {
  struct history *h = *state;
  CHUNK(h, "t-1", T0, TURN_EV("t-1"));
  CHUNK(h, "t-1", T0 + 100, USE("u1", "lamp_set", "2"), INPUT("u1", "lamp_set"));
  CHUNK(h, "t-1", T0 + 110, USE("u2", "clock", "0"), INPUT("u2", "clock"));
  CHUNK(h, "t-1", T0 + 200, ASK("t-1.a1", "lamp_set"));
  CHUNK(h, "t-1", T0 + 5000, DECIDED("t-1.a1", "approved"));
  CHUNK(h, "t-1", T0 + 5250,
        RESULT("u1", "lamp_set", "ok", "desk lamp is on (simulated)", "'approved'"));
  /* Chunk times, not seq, are the clock: both events of a chunk share one. */
  CHUNK(h, "t-1", T0 + 6000, END("end_turn"));
  message(h, "t-1", T0, USER("lamp on"));
  message(h, "t-1", T0 + 100,
          "{'role':'assistant','content':[{'type':'tool_use','id':'u1','name':'lamp_set',"
          "'input':{'name':'desk','on':true}}]}");
  message(h, "t-1", T0 + 5250,
          "{'role':'user','content':[{'type':'tool_result','tool_use_id':'u1',"
          "'content':'desk lamp is on (simulated)','is_error':false}]}");
  message(h, "t-1", T0 + 6000, SAYS("Done."));
  expect_blocks(h, "[{'type':'user','text':'lamp on','at':'@00.000Z'},"
                   "{'type':'tool','id':'u1','tool':'lamp_set','tier':2,"
                   "'input':{'name':'desk','on':true},'truncated':false,'status':'ok',"
                   "'summary':'desk lamp is on (simulated)','approval':'approved',"
                   "'duration_ms':250,'at':'@00.100Z'},"
                   "{'type':'assistant','text':'Done.','at':'@06.000Z'}]");
}

static void test_history_tool_duration_from_input_without_approval(void **state) {
  struct history *h = *state;
  CHUNK(h, "t-1", T0, TURN_EV("t-1"));
  CHUNK(h, "t-1", T0 + 100, USE("u1", "clock", "0"));
  CHUNK(h, "t-1", T0 + 120, INPUT("u1", "clock"));
  CHUNK(h, "t-1", T0 + 200, RESULT("u1", "clock", "error", "broken", "null"),
        END("end_turn"));
  message(h, "t-1", T0 + 100,
          "{'role':'assistant','content':[{'type':'tool_use','id':'u1','name':'clock',"
          "'input':{}}]}");
  expect_blocks(h, "[{'type':'tool','id':'u1','tool':'clock','tier':0,'input':{},"
                   "'truncated':false,'status':'error','summary':'broken',"
                   "'approval':null,'duration_ms':80,'at':'@00.100Z'}]");
}

/* A tool block's input shows its numbers as the model wrote them: 0.1, not the
 * 17 digits of its nearest double (the text is checked, not the parsed JSON). */
static void test_history_tool_input_numbers_are_shortest(void **state) {
  struct history *h = *state;
  CHUNK(h, "t-1", T0, TURN_EV("t-1"), USE("u1", "clock", "0"), INPUT("u1", "clock"));
  message(h, "t-1", T0,
          "{'role':'assistant','content':[{'type':'tool_use','id':'u1','name':'clock',"
          "'input':{'x':0.1,'n':100.0}}]}");
  turn_buf out;
  turn_buf_init(&out, SIZE_MAX, NULL);
  assert_int_equal(history_blocks(h, &out), 0);
  assert_int_equal(turn_buf_append(&out, "", 1), TURN_OK);
  bool shortest =
      strstr((const char *)out.data, "\"input\":{\"x\":0.1,\"n\":100.0}") != NULL;
  if (!shortest) print_error("got: %s\n", (const char *)out.data);
  turn_buf_fini(&out);
  assert_true(shortest);
}

/* A rejected call never runs; its result follows the decision at once. */
static void test_history_tool_rejected_by_the_owner(void **state) {
  struct history *h = *state;
  CHUNK(h, "t-1", T0, TURN_EV("t-1"), USE("u1", "lamp_set", "2"), INPUT("u1", "lamp_set"),
        ASK("t-1.a1", "lamp_set"));
  CHUNK(h, "t-1", T0 + 900, DECIDED("t-1.a1", "rejected"),
        RESULT("u1", "lamp_set", "rejected", "the owner said no", "'rejected'"));
  message(h, "t-1", T0,
          "{'role':'assistant','content':[{'type':'tool_use','id':'u1','name':'lamp_set',"
          "'input':{}}]}");
  expect_blocks(h, "[{'type':'tool','id':'u1','tool':'lamp_set','tier':2,'input':{},"
                   "'truncated':false,'status':'rejected',"
                   "'summary':'the owner said no','approval':'rejected',"
                   "'duration_ms':0,'at':'@00.000Z'}]");
}

/* Bug: the approval_decided time is kept per turn, not per call, so a tier-0
 * call that ran after another call's approval is timed from that approval.
 * history.h promises "from its input being complete (or its approval being
 * decided, when later)": u2 had no approval, so 5020 - 100. The agent runs the
 * calls of one reply in order, so a clock call after a lamp call hits this. */
static void test_history_bug_duration_uses_another_calls_approval(void **state) {
  struct history *h = *state;
  CHUNK(h, "t-1", T0, TURN_EV("t-1"));
  CHUNK(h, "t-1", T0 + 100, USE("u1", "lamp_set", "2"), INPUT("u1", "lamp_set"),
        USE("u2", "clock", "0"), INPUT("u2", "clock"));
  CHUNK(h, "t-1", T0 + 200, ASK("t-1.a1", "lamp_set"));
  CHUNK(h, "t-1", T0 + 5000, DECIDED("t-1.a1", "approved"));
  CHUNK(h, "t-1", T0 + 5010, RESULT("u1", "lamp_set", "ok", "on", "'approved'"));
  CHUNK(h, "t-1", T0 + 5020, RESULT("u2", "clock", "ok", "it is 08:00", "null"),
        END("end_turn"));
  message(h, "t-1", T0 + 100,
          "{'role':'assistant','content':[{'type':'tool_use','id':'u1','name':'lamp_set',"
          "'input':{}},{'type':'tool_use','id':'u2','name':'clock','input':{}}]}");
  expect_blocks(h, "[{'type':'tool','id':'u1','tool':'lamp_set','tier':2,'input':{},"
                   "'truncated':false,'status':'ok','summary':'on',"
                   "'approval':'approved','duration_ms':10,'at':'@00.100Z'},"
                   "{'type':'tool','id':'u2','tool':'clock','tier':0,'input':{},"
                   "'truncated':false,'status':'ok','summary':'it is 08:00',"
                   "'approval':null,'duration_ms':4920,'at':'@00.100Z'}]");
}

/* The model's first call of a tier-2 tool was refused (its input failed the
 * schema) before anyone was asked; its retry is the call the approval is for,
 * and is timed from its decision. (Review finding: the approval went to the
 * refused call, which had completed its input first.) */
static void test_history_approval_skips_a_call_already_ended(void **state) {
  struct history *h = *state;
  CHUNK(h, "t-1", T0, TURN_EV("t-1"));
  CHUNK(h, "t-1", T0 + 100, USE("u1", "door", "2"), INPUT("u1", "door"),
        RESULT("u1", "door", "rejected", "the input is wrong", "null"));
  CHUNK(h, "t-1", T0 + 200, USE("u2", "door", "2"), INPUT("u2", "door"));
  CHUNK(h, "t-1", T0 + 300, ASK("t-1.a1", "door"));
  CHUNK(h, "t-1", T0 + 3300, DECIDED("t-1.a1", "approved"));
  CHUNK(h, "t-1", T0 + 3345, RESULT("u2", "door", "ok", "opened", "'approved'"),
        END("end_turn"));
  message(h, "t-1", T0 + 100,
          "{'role':'assistant','content':[{'type':'tool_use','id':'u1','name':'door',"
          "'input':{'which':5}}]}");
  message(h, "t-1", T0 + 200,
          "{'role':'assistant','content':[{'type':'tool_use','id':'u2','name':'door',"
          "'input':{'which':'front'}}]}");
  expect_blocks(h, "[{'type':'tool','id':'u1','tool':'door','tier':2,'input':{'which':5},"
                   "'truncated':false,'status':'rejected','summary':'the input is wrong',"
                   "'approval':null,'duration_ms':0,'at':'@00.100Z'},"
                   "{'type':'tool','id':'u2','tool':'door','tier':2,"
                   "'input':{'which':'front'},'truncated':false,'status':'ok',"
                   "'summary':'opened','approval':'approved','duration_ms':45,"
                   "'at':'@00.200Z'}]");
}

/* A cancelled turn leaves a call the messages show but no result recorded. */
static void test_history_tool_without_result_has_null_details(void **state) {
  struct history *h = *state;
  CHUNK(h, "t-1", T0, TURN_EV("t-1"), USE("u1", "count_slowly", "0"),
        INPUT("u1", "count_slowly"));
  CHUNK(h, "t-1", T0 + 300, END("cancelled"));
  message(h, "t-1", T0,
          "{'role':'assistant','content':[{'type':'tool_use','id':'u1',"
          "'name':'count_slowly','input':{'to':3}},"
          "{'type':'tool_use','id':'u2','name':'clock','input':{}}]}");
  /* u2 has no events at all: not even its tier is known. */
  expect_blocks(
      h, "[{'type':'tool','id':'u1','tool':'count_slowly','tier':0,'input':{'to':3},"
         "'truncated':false,'status':null,'summary':null,'approval':null,'duration_ms':"
         "null,'at':'@00.000Z'},"
         "{'type':'tool','id':'u2','tool':'clock','tier':null,'input':{},"
         "'truncated':false,'status':null,'summary':null,'approval':null,'duration_ms':"
         "null,'at':'@00.000Z'}]");
}

static void test_history_orphaned_result_is_tool_question_mark(void **state) {
  struct history *h = *state;
  /* u1's call is in t-1; t-2's result for u1 is still an orphan, since the
   * rule is "an earlier message of the same turn". u9 never had a call. */
  message(h, "t-1", T0,
          "{'role':'assistant','content':[{'type':'tool_use','id':'u1','name':'clock',"
          "'input':{}}]}");
  message(h, "t-2", T0 + 100,
          "{'role':'user','content':[{'type':'tool_result','tool_use_id':'u1',"
          "'content':'late','is_error':false},{'type':'tool_result','tool_use_id':'u9',"
          "'content':'lost call','is_error':true}]}");
  expect_blocks(
      h,
      "[{'type':'tool','id':'u1','tool':'clock','tier':null,'input':{},"
      "'truncated':false,'status':null,'summary':null,'approval':null,'duration_ms':null,"
      "'at':'@00.000Z'},"
      "{'type':'tool','id':'u1','tool':'?','tier':null,'input':null,'truncated':false,'"
      "status':'ok','summary':'late','approval':null,'duration_ms':null,'at':'@00.100Z'},"
      "{'type':'tool','id':'u9','tool':'?','tier':null,'input':null,'truncated':false,'"
      "status':'error','summary':'lost "
      "call','approval':null,'duration_ms':null,'at':'@00.100Z'}]");
}

/* The result of a shown call makes no second block. */
static void test_history_result_of_a_shown_call_adds_no_block(void **state) {
  struct history *h = *state;
  message(h, "t-1", T0,
          "{'role':'assistant','content':[{'type':'tool_use','id':'u1','name':'clock',"
          "'input':{}}]}");
  message(h, "t-1", T0 + 100,
          "{'role':'user','content':[{'type':'tool_result','tool_use_id':'u1',"
          "'content':'it is 08:00','is_error':false}]}");
  json_t *b = only_block(h);
  const char *tool = json_string_value(json_object_get(b, "tool"));
  bool is_clock = tool != NULL && strcmp(tool, "clock") == 0;
  json_decref(b);
  assert_true(is_clock);
}

/* Call ids restart in every turn (u1 in both), so details are per turn. */
static void test_history_repeated_call_ids_get_their_own_turns_details(void **state) {
  struct history *h = *state;
  CHUNK(h, "t-1", T0, TURN_EV("t-1"), USE("u1", "clock", "0"), INPUT("u1", "clock"));
  CHUNK(h, "t-1", T0 + 40, RESULT("u1", "clock", "ok", "it is 08:00", "null"),
        END("end_turn"));
  CHUNK(h, "t-2", T0 + 1000, TURN_EV("t-2"), USE("u1", "lamp_set", "2"),
        INPUT("u1", "lamp_set"), ASK("t-2.a1", "lamp_set"));
  CHUNK(h, "t-2", T0 + 2000, DECIDED("t-2.a1", "timeout"));
  CHUNK(h, "t-2", T0 + 2001,
        RESULT("u1", "lamp_set", "rejected", "the owner did not answer in time",
               "'timeout'"),
        END("end_turn"));
  message(h, "t-1", T0,
          "{'role':'assistant','content':[{'type':'tool_use','id':'u1','name':'clock',"
          "'input':{}}]}");
  message(h, "t-2", T0 + 1000,
          "{'role':'assistant','content':[{'type':'tool_use','id':'u1','name':'lamp_set',"
          "'input':{'on':true}}]}");
  expect_blocks(h, "[{'type':'tool','id':'u1','tool':'clock','tier':0,'input':{},"
                   "'truncated':false,'status':'ok','summary':'it is 08:00',"
                   "'approval':null,'duration_ms':40,'at':'@00.000Z'},"
                   "{'type':'tool','id':'u1','tool':'lamp_set','tier':2,"
                   "'input':{'on':true},'truncated':false,'status':'rejected',"
                   "'summary':'the owner did not answer in time','approval':'timeout',"
                   "'duration_ms':1,'at':'@01.000Z'}]");
}

/* An approval decided in t-1 must not stretch t-2's timing either. */
static void test_history_decision_time_does_not_leak_into_the_next_turn(void **state) {
  struct history *h = *state;
  CHUNK(h, "t-1", T0, TURN_EV("t-1"), USE("u1", "lamp_set", "2"), INPUT("u1", "lamp_set"),
        ASK("t-1.a1", "lamp_set"));
  CHUNK(h, "t-1", T0 + 9000, DECIDED("t-1.a1", "approved"),
        RESULT("u1", "lamp_set", "ok", "on", "'approved'"), END("end_turn"));
  CHUNK(h, "t-2", T0 + 100, TURN_EV("t-2"), USE("u1", "clock", "0"),
        INPUT("u1", "clock"));
  CHUNK(h, "t-2", T0 + 130, RESULT("u1", "clock", "ok", "now", "null"), END("end_turn"));
  message(h, "t-2", T0 + 100,
          "{'role':'assistant','content':[{'type':'tool_use','id':'u1','name':'clock',"
          "'input':{}}]}");
  json_t *b = only_block(h);
  json_int_t duration_ms = json_integer_value(json_object_get(b, "duration_ms"));
  json_decref(b);
  assert_int_equal(duration_ms, 30);
}

/* ----------------------------------------------------------------- inputs */

static void test_history_render_ui_gives_tool_then_widget(void **state) {
  struct history *h = *state;
  CHUNK(h, "t-1", T0, TURN_EV("t-1"), USE("u1", "render_ui", "0"),
        INPUT("u1", "render_ui"), USE("u4", "render_ui", "0"), INPUT("u4", "render_ui"),
        RESULT("u4", "render_ui", "rejected", "the input is wrong", "null"));
  CHUNK(h, "t-1", T0 + 5,
        "{'type':'widget','id':'u1','title':'Lamps','html':'<b>on</b>'}",
        RESULT("u1", "render_ui", "ok", "widget shown", "null"));
  message(
      h, "t-1", T0,
      "{'role':'assistant','content':[{'type':'tool_use','id':'u1','name':'render_ui',"
      "'input':{'title':'Lamps','html':'<b>on</b>','size':2}},"
      "{'type':'tool_use','id':'u2','name':'render_ui','input':{'title':'No html'}},"
      "{'type':'tool_use','id':'u3','name':'render_ui',"
      "'input':{'title':7,'html':'<i>x</i>'}},"
      "{'type':'tool_use','id':'u4','name':'render_ui',"
      "'input':{'title':'Refused','html':'<i>y</i>','size':'big'}}]}");
  /* The tool block's input is what tool_input carried: without the html, which
   * travels in the widget only. Without a string title and html, no widget;
   * nor for a call whose events show none (u4 was refused before it ran). */
  expect_blocks(
      h,
      "[{'type':'tool','id':'u1','tool':'render_ui','tier':0,'input':{'title':'Lamps',"
      "'size':2},"
      "'truncated':false,'status':'ok','summary':'widget "
      "shown','approval':null,'duration_ms':5,'at':'@00.000Z'},"
      "{'type':'widget','id':'u1','title':'Lamps','html':'<b>on</b>','at':'@00.000Z'},"
      "{'type':'tool','id':'u2','tool':'render_ui','tier':null,'input':{'title':'No "
      "html'},"
      "'truncated':false,'status':null,'summary':null,'approval':null,'duration_ms':"
      "null,'at':'@00.000Z'},"
      "{'type':'tool','id':'u3','tool':'render_ui','tier':null,'input':{'title':7},"
      "'truncated':false,'status':null,'summary':null,'approval':null,'duration_ms':"
      "null,'at':'@00.000Z'},"
      "{'type':'tool','id':'u4','tool':'render_ui','tier':0,'input':{'title':'Refused',"
      "'size':'big'},'truncated':false,'status':'rejected','summary':'the input is "
      "wrong','approval':null,'duration_ms':0,'at':'@00.000Z'}]");
}

/* Adds a message holding one tool_use whose input is {"data": n_units copies of
 * unit}: "x" to count bytes, "é" (2 bytes, 1 code point) to count code points. */
static void add_message_with_input(struct history *h, const char *unit, size_t n_units) {
  size_t unit_len = strlen(unit);
  char *data = malloc(n_units * unit_len + 1);
  assert_non_null(data);
  for (size_t i = 0; i < n_units; i++)
    memcpy(data + i * unit_len, unit, unit_len);
  data[n_units * unit_len] = '\0';
  json_t *m =
      json_pack("{s:s, s:[{s:s, s:s, s:s, s:{s:s}}]}", "role", "assistant", "content",
                "type", "tool_use", "id", "u1", "name", "clock", "input", "data", data);
  free(data);
  char *text = m != NULL ? json_dumps(m, JSON_COMPACT) : NULL;
  json_decref(m);
  int rc = text != NULL ? history_add_message(h, "t-1", T0, text) : -1;
  free(text);
  assert_int_equal(rc, 0);
}

/* {"data":"..."}: 9 bytes before the data and 2 after, so this is exactly the
 * limit and must travel whole. */
static void test_history_input_of_8192_bytes_is_kept(void **state) {
  struct history *h = *state;
  add_message_with_input(h, "x", TURN_INPUT_LIMIT - 11);
  json_t *b = only_block(h);
  bool truncated = json_is_true(json_object_get(b, "truncated"));
  size_t input_len = json_dumpb(json_object_get(b, "input"), NULL, 0, JSON_COMPACT);
  bool has_preview = json_object_get(b, "preview") != NULL;
  json_decref(b);
  assert_false(truncated);
  assert_int_equal(input_len, TURN_INPUT_LIMIT);
  assert_false(has_preview);
}

static void test_history_input_over_8192_bytes_is_truncated_with_preview(void **state) {
  struct history *h = *state;
  add_message_with_input(h, "\xc3\xa9", 9000);
  json_t *b = only_block(h);
  bool truncated = json_is_true(json_object_get(b, "truncated"));
  bool input_null = json_is_null(json_object_get(b, "input"));
  /* The preview counts code points, not bytes: 9 of {"data":" and 8183 é. */
  json_t *preview = json_object_get(b, "preview");
  size_t len = json_string_length(preview);
  const char *p = json_string_value(preview);
  bool head_ok = p != NULL && len >= 9 && memcmp(p, "{\"data\":\"", 9) == 0;
  size_t n_not_e = 0;
  for (size_t i = 9; head_ok && i + 1 < len; i += 2)
    n_not_e += memcmp(p + i, "\xc3\xa9", 2) != 0;
  json_decref(b);
  assert_true(truncated);
  assert_true(input_null);
  assert_int_equal(len, 9 + 2 * (TURN_INPUT_LIMIT - 9));
  assert_true(head_ok);
  assert_int_equal(n_not_e, 0);
}

/* ---------------------------------------------------------------- notices */

static void test_history_notices_are_placed_by_time(void **state) {
  struct history *h = *state;
  CHUNK(h, "t-1", T0 - 10, TURN_EV("t-1"), NOTICE("before all"));
  CHUNK(h, "t-1", T0 + 50, NOTICE("between"));
  CHUNK(h, "t-1", T0 + 100, NOTICE("same ms as the reply"));
  CHUNK(h, "t-1", T0 + 100, USE("u1", "clock", "0"), INPUT("u1", "clock"));
  CHUNK(h, "t-1", T0 + 150, RESULT("u1", "clock", "ok", "now", "null"));
  CHUNK(h, "t-1", T0 + 2000, NOTICE("after all"), END("error"));
  message(h, "t-1", T0, USER("hi"));
  message(h, "t-1", T0 + 100,
          "{'role':'assistant','content':[{'type':'text','text':'Checking.'},"
          "{'type':'tool_use','id':'u1','name':'clock','input':{}}]}");
  message(h, "t-1", T0 + 300, SAYS("Now."));
  expect_blocks(h, "[{'type':'notice','text':'before all',"
                   "'at':'2026-10-01T07:59:59.990Z'},"
                   "{'type':'user','text':'hi','at':'@00.000Z'},"
                   "{'type':'notice','text':'between','at':'@00.050Z'},"
                   "{'type':'assistant','text':'Checking.','at':'@00.100Z'},"
                   "{'type':'tool','id':'u1','tool':'clock','tier':0,'input':{},"
                   "'truncated':false,'status':'ok','summary':'now','approval':null,"
                   "'duration_ms':50,'at':'@00.100Z'},"
                   "{'type':'notice','text':'same ms as the reply','at':'@00.100Z'},"
                   "{'type':'assistant','text':'Now.','at':'@00.300Z'},"
                   "{'type':'notice','text':'after all','at':'@02.000Z'}]");
}

/* A turn that failed before the model said anything has notices only. */
static void test_history_notices_without_messages_come_last(void **state) {
  struct history *h = *state;
  CHUNK(h, "t-1", T0, TURN_EV("t-1"), NOTICE("The model call failed: x"), END("error"));
  message(h, "t-1", T0 - 5000, USER("earlier"));
  expect_blocks(h, "[{'type':'user','text':'earlier','at':'2026-10-01T07:59:55.000Z'},"
                   "{'type':'notice','text':'The model call failed: x',"
                   "'at':'@00.000Z'}]");
}

/* ------------------------------------------------------------ bad records */

static void test_history_message_not_json_is_skipped(void **state) {
  struct history *h = *state;
  message(h, "t-1", T0, USER("kept"));
  assert_int_equal(history_add_message(h, "t-1", T0 + 1, "{\"role\":\"user\",\"con"), 0);
  assert_int_equal(history_add_message(h, "t-1", T0 + 2, ""), 0);
  assert_int_equal(history_add_message(h, "t-1", T0 + 3, "[1,2]"), 0);
  assert_int_equal(history_add_message(h, "t-1", T0 + 4, "{\"content\":\"no role\"}"), 0);
  message(h, "t-1", T0 + 5, SAYS("also kept"));
  expect_blocks(h, "[{'type':'user','text':'kept','at':'@00.000Z'},"
                   "{'type':'assistant','text':'also kept','at':'@00.005Z'}]");
}

static void test_history_event_lines_that_do_not_parse_are_skipped(void **state) {
  struct history *h = *state;
  /* Bad JSON, an unknown type, a result missing its status, a blank line, a
   * wrong version, then the real result as the last line without its newline.
   * A skipped line applies nothing, not even the event parsed before it. */
  static const char lines[] =
      "{\"v\":1,\"seq\":0,\"type\":\"turn\",\"turn\":\"t-1\",\"session\":\"s\"}\n"
      "{\"v\":1,\"seq\":1,\"type\":\"tool_use\",\"id\":\"u1\",\"tool\":\"clock\","
      "\"tier\":0}\n"
      "{\"v\":1,\"seq\":2,\"type\":\"notice\",\"text\":\"once\"}\n"
      "not json at all\n"
      "{\"v\":1,\"seq\":3,\"type\":\"teleport\"}\n"
      "{\"v\":1,\"seq\":4,\"type\":\"tool_result\",\"id\":\"u1\",\"tool\":\"clock\","
      "\"summary\":\"no status\",\"approval\":null}\n"
      "\n"
      "{\"v\":2,\"seq\":5,\"type\":\"notice\",\"text\":\"wrong version\"}\n"
      "{\"v\":1,\"seq\":6,\"type\":\"tool_result\",\"id\":\"u1\",\"tool\":\"clock\","
      "\"status\":\"ok\",\"summary\":\"it is 08:00\",\"approval\":null}";
  assert_int_equal(history_add_events(h, "t-1", T0, lines, sizeof lines - 1), 0);
  message(h, "t-1", T0,
          "{'role':'assistant','content':[{'type':'tool_use','id':'u1','name':'clock',"
          "'input':{}}]}");
  expect_blocks(h, "[{'type':'tool','id':'u1','tool':'clock','tier':0,'input':{},"
                   "'truncated':false,'status':'ok','summary':'it is 08:00',"
                   "'approval':null,'duration_ms':null,'at':'@00.000Z'},"
                   "{'type':'notice','text':'once','at':'@00.000Z'}]");
}

/* Strings in blocks are escaped for JSON and survive the round trip intact. */
static void test_history_text_needing_escapes_round_trips(void **state) {
  struct history *h = *state;
  assert_int_equal(
      history_add_message(h, "t-1", T0,
                          "{\"role\":\"user\",\"content\":[{\"type\":\"text\","
                          "\"text\":\"a \\\"q\\\" \\\\ \\n\\t\\u00e9 \\u2028\"}]}"),
      0);
  json_t *b = only_block(h);
  static const char want[] = "a \"q\" \\ \n\t\xc3\xa9 \xe2\x80\xa8";
  json_t *text = json_object_get(b, "text");
  bool same = json_string_length(text) == sizeof want - 1 &&
              memcmp(json_string_value(text), want, sizeof want - 1) == 0;
  json_decref(b);
  assert_true(same);
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      TEST(test_history_iso8601_has_milliseconds_and_z),
      TEST(test_history_empty_session_is_an_empty_array),
      TEST(test_history_user_assistant_reasoning_in_message_order),
      TEST(test_history_text_of_one_message_joined_not_across_tool_use),
      TEST(test_history_tool_details_come_from_events),
      TEST(test_history_approval_skips_a_call_already_ended),
      TEST(test_history_tool_duration_from_input_without_approval),
      TEST(test_history_tool_input_numbers_are_shortest),
      TEST(test_history_tool_rejected_by_the_owner),
      TEST(test_history_bug_duration_uses_another_calls_approval),
      TEST(test_history_tool_without_result_has_null_details),
      TEST(test_history_orphaned_result_is_tool_question_mark),
      TEST(test_history_result_of_a_shown_call_adds_no_block),
      TEST(test_history_repeated_call_ids_get_their_own_turns_details),
      TEST(test_history_decision_time_does_not_leak_into_the_next_turn),
      TEST(test_history_render_ui_gives_tool_then_widget),
      TEST(test_history_input_of_8192_bytes_is_kept),
      TEST(test_history_input_over_8192_bytes_is_truncated_with_preview),
      TEST(test_history_notices_are_placed_by_time),
      TEST(test_history_notices_without_messages_come_last),
      TEST(test_history_message_not_json_is_skipped),
      TEST(test_history_event_lines_that_do_not_parse_are_skipped),
      TEST(test_history_text_needing_escapes_round_trips),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
