/* The agent core with an external model (src/agent/agent*.c): what a provider
 * streams (model events) must come out as the protocol's events, in order, with
 * the calls the model asked for run between model calls, throttles retried and
 * failures ended cleanly. The shell's part is played here by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/agent.h"
#include "turn/turn.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T0 1790841600000u /* 2026-10-01T08:00:00Z */

struct rig {
  struct agent a;
  uint64_t now;
  turn_order *order; /* every event goes through it, as in turnd */
  char log[8192];    /* the event types so far, space-separated */
  char last_text[256];
  char messages[8][1024];
  size_t n_messages;
  uint64_t await_ms; /* the wait of the last AGENT_AWAIT_MODEL */
  char ran[256];     /* the last AGENT_RUN_TOOL: the tool and its input */
  char result[64];   /* the last tool_result: "STATUS/APPROVAL" */
  char summary[256]; /* ... and its summary */
  char decided[32];  /* the last approval_decided's decision */
  char guard[64];    /* the last guard event's action */
  char notice[512];  /* the last notice's text */
  size_t text_bytes; /* of every text and reasoning event so far */
  size_t text_max;   /* of the largest one */
  bool text_cut;     /* one ended inside a character */
  bool stop_at_set;  /* pump returns AGENT_EMIT once it emitted stop_at */
  turn_event_type stop_at;
  bool drop_at_set; /* the next drop_at event is not kept, as when turnd's log is
                       full: agent_fail follows (the shell's part) */
  turn_event_type drop_at;
};

static void rig_init(struct rig *r) {
  memset(r, 0, sizeof *r);
  r->now = T0;
  assert_int_equal(agent_init(&r->a, NULL, "hello", "t-1", "s-1", 300), 0);
  agent_use_external_model(&r->a);
  r->order = turn_order_new(NULL);
  assert_non_null(r->order);
}

static void rig_fini(struct rig *r) {
  assert_int_equal(turn_order_finish(r->order, NULL), TURN_OK);
  turn_order_free(r->order);
  agent_fini(&r->a);
}

static void log_word(struct rig *r, const char *word) {
  size_t len = strlen(r->log);
  snprintf(r->log + len, sizeof r->log - len, "%s ", word);
}

static void take_messages(struct rig *r) {
  struct convo_message m;
  while (agent_take_message(&r->a, &m)) {
    assert_true(r->n_messages < 8);
    snprintf(r->messages[r->n_messages++], sizeof r->messages[0], "%s", m.json);
    free(m.json);
  }
}

/* Steps the agent until it waits for the model or the turn ends, logging each
 * event; WAITs pass at once (time moves by their length). Returns the kind that
 * stopped it. */
static enum agent_action_kind pump(struct rig *r) {
  static uint64_t seq;
  for (int guard = 0; guard < 1000; guard++) {
    struct agent_action act;
    agent_next(&r->a, r->now, &act);
    take_messages(r);
    switch (act.kind) {
    case AGENT_EMIT: {
      if (r->drop_at_set && act.ev.type == r->drop_at) {
        r->drop_at_set = false;
        log_word(r, "(dropped)");
        agent_fail(&r->a, "the log is full", true);
        break;
      }
      if (act.ev.type == TURN_EV_TURN) seq = 0;
      act.ev.seq = seq++;
      turn_error err;
      if (turn_order_step(r->order, &act.ev, &err) != TURN_OK) {
        char msg[200];
        turn_error_format(&err, msg, sizeof msg);
        fail_msg("%s: %s seq %llu after \"%s\"", msg, turn_event_type_name(act.ev.type),
                 (unsigned long long)act.ev.seq, r->log);
      }
      log_word(r, turn_event_type_name(act.ev.type));
      if (act.ev.type == TURN_EV_TEXT || act.ev.type == TURN_EV_REASONING) {
        turn_str d = act.ev.text.delta;
        snprintf(r->last_text, sizeof r->last_text, "%.*s", (int)d.len, d.p);
        r->text_bytes += d.len;
        if (d.len > r->text_max) r->text_max = d.len;
        /* the last character's lead byte, 1 to 4 bytes from the end */
        size_t lead = d.len;
        while (lead > 0 && ((unsigned char)d.p[lead - 1] & 0xc0) == 0x80)
          lead--;
        if (lead > 0) {
          unsigned char b = (unsigned char)d.p[lead - 1];
          size_t want = b < 0x80 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
          r->text_cut |= d.len - (lead - 1) != want;
        }
      }
      if (act.ev.type == TURN_EV_TOOL_PROGRESS)
        snprintf(r->last_text, sizeof r->last_text, "%.*s",
                 (int)act.ev.tool_progress.message.len, act.ev.tool_progress.message.p);
      if (act.ev.type == TURN_EV_NOTICE) {
        snprintf(r->last_text, sizeof r->last_text, "%.*s", (int)act.ev.notice.text.len,
                 act.ev.notice.text.p);
        snprintf(r->notice, sizeof r->notice, "%.*s", (int)act.ev.notice.text.len,
                 act.ev.notice.text.p);
      }
      if (act.ev.type == TURN_EV_THROTTLED)
        snprintf(r->last_text, sizeof r->last_text, "%.3f",
                 act.ev.throttled.delay_seconds);
      if (act.ev.type == TURN_EV_END)
        snprintf(r->last_text, sizeof r->last_text, "%s",
                 turn_stop_reason_name(act.ev.end.stop_reason));
      if (act.ev.type == TURN_EV_TOOL_RESULT) {
        const char *approval = turn_approval_name(act.ev.tool_result.approval);
        snprintf(r->result, sizeof r->result, "%s/%s",
                 turn_status_name(act.ev.tool_result.status),
                 approval != NULL ? approval : "null");
        snprintf(r->summary, sizeof r->summary, "%.*s",
                 (int)act.ev.tool_result.summary.len, act.ev.tool_result.summary.p);
      }
      if (act.ev.type == TURN_EV_APPROVAL_DECIDED)
        snprintf(r->decided, sizeof r->decided, "%s",
                 turn_decision_name(act.ev.approval_decided.decision));
      if (act.ev.type == TURN_EV_GUARD)
        snprintf(r->guard, sizeof r->guard, "%.*s", (int)act.ev.guard.action.len,
                 act.ev.guard.action.p);
      if (r->stop_at_set && act.ev.type == r->stop_at) {
        r->stop_at_set = false;
        return AGENT_EMIT;
      }
      break;
    }
    case AGENT_WAIT:
      r->now += act.wait_ms;
      break;
    case AGENT_AWAIT:
      return act.kind;
    case AGENT_MODEL_CALL:
      log_word(r, "[call]");
      break;
    case AGENT_RUN_TOOL:
      log_word(r, "[run]");
      snprintf(r->ran, sizeof r->ran, "%s %s", act.tool->name, act.call->input);
      break;
    case AGENT_AWAIT_TOOL:
      return act.kind;
    case AGENT_AWAIT_MODEL:
      r->await_ms = act.wait_ms;
      return act.kind;
    case AGENT_END:
      return act.kind;
    }
  }
  fail_msg("the agent did not settle");
  return AGENT_END;
}

static void feed(struct rig *r, struct model_event ev) {
  if (agent_model_event(&r->a, &ev) != 0)
    fail_msg("refused after \"%s\" (%s)", r->log, r->last_text);
}

static struct model_event text_ev(enum model_event_kind kind, const char *text) {
  struct model_event ev = {.kind = kind, .text = text, .len = strlen(text)};
  return ev;
}

static struct model_event stop_ev(enum model_stop stop) {
  struct model_event ev = {.kind = MODEL_EV_STOP, .stop = stop};
  return ev;
}

static void text_reply_ends_the_turn(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_string_equal(r.log, "turn [call] ");
  feed(&r, text_ev(MODEL_EV_REASONING, "thinking"));
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  feed(&r, text_ev(MODEL_EV_TEXT, "Hi "));
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_string_equal(r.last_text, "Hi ");
  feed(&r, text_ev(MODEL_EV_TEXT, "there"));
  pump(&r);
  struct model_event usage = {
      .kind = MODEL_EV_USAGE, .input_tokens = 10, .output_tokens = 3};
  feed(&r, usage);
  pump(&r);
  feed(&r, stop_ev(MODEL_STOP_END_TURN));
  assert_int_equal(pump(&r), AGENT_END);
  assert_string_equal(r.log, "turn [call] reasoning text text end ");
  assert_string_equal(r.last_text, "end_turn");
  assert_int_equal(r.a.tokens_in, 10);
  assert_int_equal(r.a.tokens_out, 3);
  assert_int_equal(r.n_messages, 2);
  json_error_t jerr;
  json_t *got = json_loads(r.messages[1], 0, &jerr);
  json_t *want = json_loads("{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\","
                            "\"thinking\":\"thinking\"},{\"type\":\"text\",\"text\":\"Hi "
                            "there\"}]}",
                            0, &jerr);
  assert_true(json_equal(got, want));
  json_decref(got);
  json_decref(want);
  rig_fini(&r);
}

/* Two calls, with ids of the provider's own: both run (demo tools), their
 * results go back in one message, and the model is called again. */
static void tool_calls_run_and_the_model_is_called_again(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  pump(&r);
  struct model_event start = {
      .kind = MODEL_EV_TOOL_START, .index = 0, .id = "toolu_01A", .name = "clock"};
  feed(&r, start);
  pump(&r);
  feed(&r, (struct model_event){
               .kind = MODEL_EV_TOOL_DELTA, .index = 0, .text = "{", .len = 1});
  pump(&r);
  feed(&r, (struct model_event){
               .kind = MODEL_EV_TOOL_END, .index = 0, .text = "{}", .len = 2});
  pump(&r);
  start.index = 1;
  start.id = "toolu_01B";
  start.name = "fail_tool";
  feed(&r, start);
  pump(&r);
  feed(&r,
       (struct model_event){.kind = MODEL_EV_TOOL_END, .index = 1, .text = "", .len = 0});
  pump(&r);
  feed(&r, stop_ev(MODEL_STOP_TOOL_USE));
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_string_equal(r.log, "turn [call] tool_use tool_input tool_use tool_input "
                             "tool_result tool_result [call] ");
  /* user, assistant (two tool_use), user (two tool_result) */
  assert_int_equal(r.n_messages, 3);
  assert_non_null(strstr(r.messages[1], "\"id\":\"toolu_01A\""));
  assert_non_null(strstr(r.messages[1], "\"id\":\"toolu_01B\""));
  assert_non_null(strstr(r.messages[2], "\"tool_use_id\":\"toolu_01B\""));
  assert_non_null(strstr(r.messages[2], "\"is_error\":true"));
  feed(&r, stop_ev(MODEL_STOP_END_TURN));
  assert_int_equal(pump(&r), AGENT_END);
  rig_fini(&r);
}

/* One call of the reply: it starts, and its input is complete. */
static void call_tool(struct rig *r, const char *id, const char *name,
                      const char *input) {
  size_t index = r->a.n_calls;
  feed(r, (struct model_event){
              .kind = MODEL_EV_TOOL_START, .index = index, .id = id, .name = name});
  pump(r);
  feed(r, (struct model_event){.kind = MODEL_EV_TOOL_END,
                               .index = index,
                               .text = input,
                               .len = strlen(input)});
  pump(r);
}

/* Two replies, each calling the clock with this id, then the end: the turn as
 * the rig logs it, and its five messages (the user's, then per reply the call
 * and its result). The rig's order check refuses an id used twice. */
static void two_replies_each_calling(struct rig *r, const char *id) {
  rig_init(r);
  pump(r);
  for (int reply = 0; reply < 2; reply++) {
    call_tool(r, id, "clock", "{}");
    feed(r, stop_ev(MODEL_STOP_TOOL_USE));
    assert_int_equal(pump(r), AGENT_AWAIT_MODEL);
  }
  feed(r, stop_ev(MODEL_STOP_END_TURN));
  assert_int_equal(pump(r), AGENT_END);
  assert_string_equal(r->log, "turn [call] tool_use tool_input tool_result [call] "
                              "tool_use tool_input tool_result [call] end ");
  assert_int_equal(r->n_messages, 5);
}

/* After two_replies_each_calling: the first reply's call and its result have
 * id first, the second's second. */
static void expect_call_ids(const struct rig *r, const char *first, const char *second) {
  const char *const ids[] = {first, second};
  for (int reply = 0; reply < 2; reply++) {
    char call[128], result[128];
    snprintf(call, sizeof call, "\"id\":\"%s\"", ids[reply]);
    snprintf(result, sizeof result, "\"tool_use_id\":\"%s\"", ids[reply]);
    assert_non_null(strstr(r->messages[1 + 2 * reply], call));
    assert_non_null(strstr(r->messages[2 + 2 * reply], result));
  }
}

/* A server that sends no call ids (some OpenAI-compatible ones): each call gets
 * one made up, unique in the turn though every reply numbers its calls from 0,
 * and made of what every provider takes back. */
static void calls_without_ids_get_ids_unique_in_the_turn(void **state) {
  (void)state;
  struct rig r;
  two_replies_each_calling(&r, "");
  expect_call_ids(&r, "call_t-1_1", "call_t-1_2");
  rig_fini(&r);
}

/* A server whose ids repeat from reply to reply (Kimi's "functions.clock:0",
 * numbered per reply): the first use keeps the provider's id, a repeat gets one
 * made up, and each result answers its own call. */
static void repeated_call_ids_get_ids_unique_in_the_turn(void **state) {
  (void)state;
  struct rig r;
  two_replies_each_calling(&r, "functions.clock:0");
  expect_call_ids(&r, "functions.clock:0", "call_t-1_1");
  rig_fini(&r);
}

static void throttle_waits_and_calls_again(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  pump(&r);
  struct model_event busy = {.kind = MODEL_EV_ERROR,
                             .text = "overloaded",
                             .len = 10,
                             .throttled = true,
                             .retry_after_s = 2.5};
  feed(&r, busy);
  uint64_t before = r.now;
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_string_equal(r.log, "turn [call] throttled [call] ");
  assert_string_equal(r.last_text, "2.500");
  assert_int_equal(r.now - before, 2500);
  /* Without retry-after: a backoff that doubles (plus up to a quarter) with
   * each attempt of the call, the first included. */
  busy.retry_after_s = -1;
  feed(&r, busy);
  before = r.now;
  pump(&r);
  assert_true(r.now - before >= 2000 && r.now - before <= 2500);
  feed(&r, busy);
  before = r.now;
  pump(&r);
  assert_true(r.now - before >= 4000 && r.now - before <= 5000);
  feed(&r, text_ev(MODEL_EV_TEXT, "ok"));
  pump(&r);
  feed(&r, stop_ev(MODEL_STOP_END_TURN));
  assert_int_equal(pump(&r), AGENT_END);
  assert_string_equal(r.last_text, "end_turn");
  rig_fini(&r);
}

/* Throttled past the retries the agent allows: the call fails like any other. */
static void endless_throttling_fails_the_turn(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  pump(&r);
  struct model_event busy = {.kind = MODEL_EV_ERROR,
                             .text = "rate limited",
                             .len = 12,
                             .throttled = true,
                             .retry_after_s = 1};
  for (int i = 0; i < 5; i++) {
    feed(&r, busy);
    assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  }
  feed(&r, busy);
  assert_int_equal(pump(&r), AGENT_END);
  assert_non_null(strstr(r.log, "throttled [call] notice end"));
  assert_null(strstr(r.log, "throttled [call] throttled [call] throttled [call] "
                            "throttled [call] throttled [call] throttled"));
  assert_string_equal(r.last_text, "error");
  rig_fini(&r);
}

static void failure_says_why_and_ends_with_error(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  pump(&r);
  feed(&r, text_ev(MODEL_EV_TEXT, "partial"));
  pump(&r);
  feed(&r, text_ev(MODEL_EV_ERROR, "the stream ended early"));
  pump(&r);
  assert_string_equal(r.log, "turn [call] text notice end ");
  assert_string_equal(r.last_text, "error");
  /* The cut reply is kept as far as it came. */
  assert_int_equal(r.n_messages, 2);
  assert_non_null(strstr(r.messages[1], "partial"));
  rig_fini(&r);
}

/* A long message is cut to 200 bytes between characters, not inside one: the
 * notice is UTF-8 (the order check above refuses any other). */
static void long_failure_is_cut_between_characters(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  pump(&r);
  char why[301];
  for (int i = 0; i < 100; i++)
    memcpy(why + 3 * i, "\xe2\x82\xac", 3); /* € */
  why[300] = '\0';
  feed(&r, text_ev(MODEL_EV_ERROR, why));
  assert_int_equal(pump(&r), AGENT_END);
  /* 198 of the 200 bytes: the 67th character would pass them. */
  char want[256];
  snprintf(want, sizeof want, "The model call failed: %.*s", 66 * 3, why);
  assert_string_equal(r.notice, want);
  rig_fini(&r);
}

/* A reply cut at max_tokens runs none of its calls, but closes each: a call
 * whose input came is told (and the model too) that it did not run, and the
 * one cut off inside its input gets a result straight after its tool_use. */
static void max_tokens_ends_without_running_calls(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  pump(&r);
  call_tool(&r, "c1", "clock", "{}");
  struct model_event start = {
      .kind = MODEL_EV_TOOL_START, .index = 1, .id = "c2", .name = "clock"};
  feed(&r, start);
  pump(&r);
  feed(&r, stop_ev(MODEL_STOP_MAX_TOKENS));
  assert_int_equal(pump(&r), AGENT_END);
  assert_string_equal(r.log, "turn [call] tool_use tool_input tool_use tool_result "
                             "tool_result end ");
  assert_string_equal(r.last_text, "max_tokens");
  assert_string_equal(r.result, "error/null");
  assert_string_equal(r.summary, "not run: the reply was cut at the output limit "
                                 "before its input was complete");
  /* The reply with c1, then c1's result: the model never saw c2. */
  assert_int_equal(r.n_messages, 3);
  assert_non_null(
      strstr(r.messages[2], "\"not run: the reply was cut at the output limit\""));
  assert_null(strstr(r.messages[1], "c2"));
  assert_null(strstr(r.messages[2], "c2"));
  rig_fini(&r);
}

/* A cancel while the model streams ends the turn at once; what comes late from
 * the transfer being torn down is refused. */
static void cancel_ends_and_late_events_are_refused(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  pump(&r);
  feed(&r, text_ev(MODEL_EV_TEXT, "a"));
  pump(&r);
  agent_cancel(&r.a, TURN_STOP_CANCELLED);
  assert_int_equal(pump(&r), AGENT_END);
  assert_string_equal(r.last_text, "cancelled");
  struct model_event late = text_ev(MODEL_EV_TEXT, "b");
  assert_int_equal(agent_model_event(&r.a, &late), -1);
  rig_fini(&r);
}

/* An end for a call never started is a broken stream, not a crash. */
static void tool_end_without_start_fails(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  pump(&r);
  feed(&r, (struct model_event){
               .kind = MODEL_EV_TOOL_END, .index = 3, .text = "{}", .len = 2});
  assert_int_equal(pump(&r), AGENT_END);
  assert_string_equal(r.log, "turn [call] notice end ");
  rig_fini(&r);
}

static void set_limits(struct rig *r, uint32_t calls, uint64_t tokens,
                       uint32_t coalesce) {
  struct agent_limits l = {calls, tokens, coalesce};
  agent_set_limits(&r->a, &l);
}

/* Deltas within the window after the last one sent are held and go out as one,
 * when the window ends or before any other event; the first of a burst goes at
 * once. The conversation has every delta in order either way. */
static void close_deltas_go_out_together(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  set_limits(&r, 0, 0, 15);
  pump(&r);
  feed(&r, text_ev(MODEL_EV_TEXT, "a"));
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_string_equal(r.last_text, "a");
  assert_int_equal(r.await_ms, 0);
  r.now += 5;
  feed(&r, text_ev(MODEL_EV_TEXT, "b"));
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_int_equal(r.await_ms, 10); /* held until the window ends */
  r.now += 4;
  feed(&r, text_ev(MODEL_EV_TEXT, "c"));
  pump(&r);
  assert_string_equal(r.log, "turn [call] text ");
  r.now += r.await_ms;
  pump(&r);
  assert_string_equal(r.log, "turn [call] text text ");
  assert_string_equal(r.last_text, "bc");
  /* A delta that comes after the window ended, before its timer was seen, goes
   * out with the held text, after it. */
  r.now += 20;
  feed(&r, text_ev(MODEL_EV_TEXT, "x"));
  pump(&r);
  assert_string_equal(r.last_text, "x");
  r.now += 1;
  feed(&r, text_ev(MODEL_EV_TEXT, "y"));
  pump(&r);
  r.now += 100;
  feed(&r, text_ev(MODEL_EV_TEXT, "z"));
  pump(&r);
  assert_string_equal(r.log, "turn [call] text text text text ");
  assert_string_equal(r.last_text, "yz");
  /* z came with y: a delta soon after z is of z's burst, and waits. */
  r.now += 3;
  feed(&r, text_ev(MODEL_EV_TEXT, "w"));
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_string_equal(r.log, "turn [call] text text text text ");
  assert_int_equal(r.await_ms, 12);
  r.now += r.await_ms;
  pump(&r);
  assert_string_equal(r.last_text, "w");
  /* Held text goes before a call starts, and a delta long after goes at once. */
  r.now += 30;
  feed(&r, text_ev(MODEL_EV_TEXT, "d"));
  pump(&r);
  feed(&r,
       (struct model_event){.kind = MODEL_EV_TOOL_START, .id = "c1", .name = "clock"});
  pump(&r);
  assert_string_equal(r.log, "turn [call] text text text text text text tool_use ");
  assert_string_equal(r.last_text, "d");
  feed(&r, (struct model_event){.kind = MODEL_EV_TOOL_END, .text = "{}", .len = 2});
  pump(&r);
  feed(&r, stop_ev(MODEL_STOP_TOOL_USE));
  pump(&r);
  r.now += 1000;
  feed(&r, text_ev(MODEL_EV_TEXT, "e"));
  pump(&r);
  assert_string_equal(r.last_text, "e");
  feed(&r, stop_ev(MODEL_STOP_END_TURN));
  assert_int_equal(pump(&r), AGENT_END);
  assert_non_null(strstr(r.messages[1], "\"text\":\"abcxyzwd\""));
  rig_fini(&r);
}

/* A delta that comes a whole window after the one before is the first of a new
 * burst and goes at once, though held text went out since and opened a window
 * of its own: a provider that caught up in a rush and then went on at its pace
 * is not held back at every delta after. */
static void a_delta_a_window_after_the_last_goes_at_once(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  set_limits(&r, 0, 0, 15);
  pump(&r);
  feed(&r, text_ev(MODEL_EV_TEXT, "a"));
  pump(&r);
  r.now += 2;
  feed(&r, text_ev(MODEL_EV_TEXT, "b")); /* the rush: held */
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_int_equal(r.await_ms, 13);
  r.now += r.await_ms;
  pump(&r);
  assert_string_equal(r.last_text, "b"); /* out at 15: a window on to 30 */
  r.now += 5;
  feed(&r, text_ev(MODEL_EV_TEXT, "c")); /* 18 ms after b: a burst of its own */
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_string_equal(r.log, "turn [call] text text text ");
  assert_string_equal(r.last_text, "c");
  assert_int_equal(r.await_ms, 0);
  r.now += 3;
  feed(&r, text_ev(MODEL_EV_TEXT, "d")); /* 3 ms after c: held again */
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_int_equal(r.await_ms, 12);
  feed(&r, stop_ev(MODEL_STOP_END_TURN));
  assert_int_equal(pump(&r), AGENT_END);
  assert_non_null(strstr(r.log, "text text text text end"));
  assert_non_null(strstr(r.messages[1], "\"text\":\"abcd\""));
  rig_fini(&r);
}

/* A provider's delta too big for one line of 1 MiB (escaped, a byte can take
 * six) goes out as several events of at most 160 KiB, each cut between
 * characters, with or without coalescing; the reply keeps it whole. */
static void big_deltas_go_out_in_pieces(void **state) {
  (void)state;
  size_t len = 3 * 200000; /* "€" (3 bytes) 200,000 times: cuts land inside one */
  char *big = malloc(len);
  assert_non_null(big);
  for (size_t i = 0; i < len; i += 3)
    memcpy(big + i, "\xe2\x82\xac", 3);
  for (uint32_t coalesce = 0; coalesce <= 15; coalesce += 15) {
    struct rig r;
    rig_init(&r);
    set_limits(&r, 0, 0, coalesce);
    pump(&r);
    feed(&r, (struct model_event){.kind = MODEL_EV_TEXT, .text = "a", .len = 1});
    pump(&r);
    feed(&r, (struct model_event){.kind = MODEL_EV_TEXT, .text = big, .len = len});
    pump(&r);
    feed(&r, stop_ev(MODEL_STOP_END_TURN));
    assert_int_equal(pump(&r), AGENT_END);
    assert_int_equal(r.text_bytes, len + 1);
    assert_true(r.text_max <= 160 * 1024);
    assert_false(r.text_cut);
    assert_int_equal(r.n_messages, 2); /* the user's, then the whole reply */
    rig_fini(&r);
  }
  free(big);
}

/* The clock set back (the wall clock's, as turnd's is) does not hold text for
 * as long as it went back: held text goes out, and the next delta waits one
 * window at most. */
static void a_clock_set_back_holds_nothing(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  set_limits(&r, 0, 0, 15);
  pump(&r);
  feed(&r, text_ev(MODEL_EV_TEXT, "a"));
  pump(&r);
  r.now += 5;
  feed(&r, text_ev(MODEL_EV_TEXT, "b"));
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_int_equal(r.await_ms, 10);
  r.now -= 3600 * 1000; /* an hour back */
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_string_equal(r.last_text, "b");
  feed(&r, text_ev(MODEL_EV_TEXT, "c")); /* held for a window from b, no more */
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_int_equal(r.await_ms, 15);
  r.now += r.await_ms;
  pump(&r);
  assert_string_equal(r.log, "turn [call] text text text ");
  assert_string_equal(r.last_text, "c");
  feed(&r, stop_ev(MODEL_STOP_END_TURN));
  assert_int_equal(pump(&r), AGENT_END);
  rig_fini(&r);
}

/* A delta that comes soon after another kind of event is the first of a new
 * burst: it goes at once, though the window of the text before it is not over. */
static void another_event_ends_the_burst(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  set_limits(&r, 0, 0, 15);
  pump(&r);
  feed(&r, text_ev(MODEL_EV_TEXT, "a"));
  pump(&r);
  r.now += 1;
  call_tool(&r, "c1", "clock", "{}");
  r.now += 1;
  feed(&r, text_ev(MODEL_EV_TEXT, "b"));
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_string_equal(r.log, "turn [call] text tool_use tool_input text ");
  assert_string_equal(r.last_text, "b");
  assert_int_equal(r.await_ms, 0);
  feed(&r, stop_ev(MODEL_STOP_TOOL_USE));
  pump(&r);
  feed(&r, stop_ev(MODEL_STOP_END_TURN));
  assert_int_equal(pump(&r), AGENT_END);
  rig_fini(&r);
}

/* Held text is sent before a cancel ends the turn: readers get what the
 * conversation keeps. */
static void held_text_is_sent_before_a_cancel(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  set_limits(&r, 0, 0, 50);
  pump(&r);
  feed(&r, text_ev(MODEL_EV_REASONING, "x"));
  pump(&r);
  feed(&r, text_ev(MODEL_EV_REASONING, "y"));
  pump(&r);
  agent_cancel(&r.a, TURN_STOP_CANCELLED);
  assert_int_equal(pump(&r), AGENT_END);
  assert_string_equal(r.log, "turn [call] reasoning reasoning end ");
  rig_fini(&r);
}

/* Under a budget of 100 tokens, a reply with one call to clock that says it
 * used in + out tokens and stops for stop; returns what the agent did then. */
static enum agent_action_kind reply_with_usage(struct rig *r, uint64_t in, uint64_t out,
                                               enum model_stop stop) {
  set_limits(r, 0, 100, 0);
  pump(r);
  call_tool(r, "c1", "clock", "{}");
  feed(r, (struct model_event){
              .kind = MODEL_EV_USAGE, .input_tokens = in, .output_tokens = out});
  pump(r);
  feed(r, stop_ev(stop));
  return pump(r);
}

/* Past the token budget the turn ends after the reply that crossed it: its
 * calls do not run, and each gets an error result that says so. */
static void token_budget_ends_the_turn(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  assert_int_equal(reply_with_usage(&r, 60, 40, MODEL_STOP_TOOL_USE), AGENT_END);
  assert_string_equal(r.log, "turn [call] tool_use tool_input tool_result end ");
  assert_string_equal(r.last_text, "limit_total_tokens");
  assert_int_equal(r.n_messages, 3);
  assert_non_null(strstr(r.messages[2], "not run"));
  assert_non_null(strstr(r.messages[2], "\"is_error\":true"));
  rig_fini(&r);
}

/* A server that reports no usage cannot be held to the budget: the owner is
 * told after the first reply it did not count, once in the turn. */
static void uncounted_replies_are_told_once(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  set_limits(&r, 0, 100, 0);
  pump(&r);
  call_tool(&r, "c1", "clock", "{}");
  feed(&r, stop_ev(MODEL_STOP_TOOL_USE));
  pump(&r);
  feed(&r, text_ev(MODEL_EV_TEXT, "It is late."));
  pump(&r);
  feed(&r, stop_ev(MODEL_STOP_END_TURN));
  assert_int_equal(pump(&r), AGENT_END);
  assert_string_equal(r.log, "turn [call] tool_use tool_input notice tool_result [call] "
                             "text end ");
  assert_non_null(strstr(r.notice, "did not say how many tokens"));
  assert_string_equal(r.last_text, "end_turn");
  rig_fini(&r);
}

/* A cancel while count_slowly counts: the model is told the call was stopped
 * while it ran (it did act: the owner saw its progress), and the call after it
 * that never began is told it did not run. */
static void a_call_cut_while_it_acts_is_said_stopped(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  pump(&r);
  call_tool(&r, "c1", "count_slowly", "{\"to\":5,\"interval_ms\":1000}");
  call_tool(&r, "c2", "clock", "{}");
  r.stop_at_set = true;
  r.stop_at = TURN_EV_TOOL_PROGRESS;
  feed(&r, stop_ev(MODEL_STOP_TOOL_USE));
  assert_int_equal(pump(&r), AGENT_EMIT);
  agent_cancel(&r.a, TURN_STOP_CANCELLED);
  assert_int_equal(pump(&r), AGENT_END);
  assert_string_equal(r.last_text, "cancelled");
  assert_int_equal(r.n_messages, 3);
  assert_non_null(strstr(r.messages[2], "stopped: the turn was cancelled while it ran"));
  assert_non_null(strstr(r.messages[2], "\"not run: the turn was cancelled\""));
  assert_true(strstr(r.messages[2], "stopped") < strstr(r.messages[2], "not run"));
  /* Readers get the same words: the one that ran failed midway, the other was
   * kept from running by the owner's cancel. */
  assert_non_null(strstr(r.log, "tool_progress tool_result tool_result end "));
  assert_string_equal(r.result, "rejected/null");
  assert_string_equal(r.summary, "not run: the turn was cancelled");
  rig_fini(&r);
}

/* An attempt that counted its tokens and was then throttled does not speak for
 * the attempt after it: a retry that reports nothing is told too. */
static void an_uncounted_retry_is_told(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  set_limits(&r, 0, 100, 0);
  pump(&r);
  feed(&r, (struct model_event){
               .kind = MODEL_EV_USAGE, .input_tokens = 10, .output_tokens = 0});
  pump(&r);
  feed(&r, (struct model_event){.kind = MODEL_EV_ERROR,
                                .text = "overloaded",
                                .len = 10,
                                .throttled = true,
                                .retry_after_s = 1});
  pump(&r);
  feed(&r, text_ev(MODEL_EV_TEXT, "Hi."));
  pump(&r);
  feed(&r, stop_ev(MODEL_STOP_END_TURN));
  assert_int_equal(pump(&r), AGENT_END);
  assert_string_equal(r.log, "turn [call] throttled [call] text notice end ");
  assert_non_null(strstr(r.notice, "did not say how many tokens"));
  rig_fini(&r);
}

/* Counts a provider makes up cannot wrap the sum under the budget. */
static void huge_token_counts_still_meet_the_budget(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  assert_int_equal(reply_with_usage(&r, UINT64_MAX - 1, 5, MODEL_STOP_TOOL_USE),
                   AGENT_END);
  assert_string_equal(r.log, "turn [call] tool_use tool_input tool_result end ");
  assert_string_equal(r.last_text, "limit_total_tokens");
  rig_fini(&r);
}

static const char policy_notice[] =
    "The model's provider stopped this reply under its content policy.";

/* A reply the provider's content policy stopped is not the reply the model
 * meant to give: a notice says so after its text, its calls do not run (each
 * gets a result that says so, so none is left open), and the turn ends as
 * end_turn, the protocol having no stop reason for it. */
static void refused_reply_runs_no_calls_and_says_why(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  pump(&r);
  feed(&r, text_ev(MODEL_EV_TEXT, "Sure, "));
  pump(&r);
  call_tool(&r, "c1", "clock", "{}");
  feed(&r, stop_ev(MODEL_STOP_REFUSED));
  assert_int_equal(pump(&r), AGENT_END);
  assert_string_equal(r.log,
                      "turn [call] text tool_use tool_input notice tool_result end ");
  assert_string_equal(r.notice, policy_notice);
  assert_string_equal(r.result, "error/null");
  assert_string_equal(r.last_text, "end_turn");
  assert_int_equal(r.n_messages, 3);
  assert_non_null(strstr(r.messages[1], "Sure, "));
  assert_non_null(strstr(r.messages[2], "not run: the provider stopped the reply"));
  rig_fini(&r);
}

/* The notice comes also when the same reply crossed the token budget. */
static void refused_reply_past_the_budget_still_says_why(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  assert_int_equal(reply_with_usage(&r, 60, 40, MODEL_STOP_REFUSED), AGENT_END);
  assert_string_equal(r.log, "turn [call] tool_use tool_input notice tool_result end ");
  assert_string_equal(r.notice, policy_notice);
  assert_string_equal(r.last_text, "limit_total_tokens");
  rig_fini(&r);
}

/* A throttle after the attempt began a tool call is not retried: the call
 * again would begin it twice. It fails like any other failure. */
static void throttle_after_a_call_began_fails_the_call(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  pump(&r);
  feed(&r,
       (struct model_event){.kind = MODEL_EV_TOOL_START, .id = "c1", .name = "clock"});
  pump(&r);
  feed(&r, (struct model_event){.kind = MODEL_EV_ERROR,
                                .text = "overloaded",
                                .len = 10,
                                .throttled = true,
                                .retry_after_s = 1});
  assert_int_equal(pump(&r), AGENT_END);
  assert_string_equal(r.log, "turn [call] tool_use notice tool_result end ");
  assert_string_equal(r.last_text, "error");
  assert_string_equal(r.result, "error/null");
  assert_string_equal(r.summary,
                      "not run: the model call failed before its input was complete");
  rig_fini(&r);
}

static void model_call_cap_ends_the_turn(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  set_limits(&r, 1, 0, 0);
  pump(&r);
  call_tool(&r, "c1", "clock", "{}");
  feed(&r, stop_ev(MODEL_STOP_TOOL_USE));
  assert_int_equal(pump(&r), AGENT_END);
  assert_string_equal(r.log, "turn [call] tool_use tool_input tool_result end ");
  assert_string_equal(r.last_text, "limit_turns");
  rig_fini(&r);
}

/* A toolset of the demo tools and an owner's tool "weather" ({"city": string},
 * required), which the shell runs. */
static void owner_tools(struct toolset *ts) {
  toolset_init(ts);
  assert_int_equal(toolset_add_demo(ts), 0);
  assert_int_equal(toolset_add(ts, "weather", "The weather in a city.",
                               "{\"type\":\"object\",\"properties\":{\"city\":"
                               "{\"type\":\"string\"}},\"required\":[\"city\"]}",
                               0, "read", TOOL_EXTERNAL, 7),
                   0);
  /* A second tool of the same name is refused. */
  assert_int_equal(toolset_add(ts, "clock", "again", "{}", 0, "read", TOOL_DEMO, 0), -1);
}

/* A rig whose agent has owner_tools (and guard, unless NULL), started: it
 * waits for the model's first reply. */
static void start_with_owner_tools(struct rig *r, struct toolset *ts,
                                   const struct agent_guard *guard) {
  owner_tools(ts);
  rig_init(r);
  agent_set_tools(&r->a, ts);
  if (guard != NULL) agent_set_guard(&r->a, guard);
  pump(r);
}

/* The owner's tool is run by the shell: its progress lines and its result come
 * back as events; the model is told the summary and the result's data. */
static void owner_tool_runs_in_the_shell(void **state) {
  (void)state;
  struct toolset ts;
  struct rig r;
  start_with_owner_tools(&r, &ts, NULL);
  call_tool(&r, "w1", "weather", "{\"city\":\"Oslo\"}");
  feed(&r, stop_ev(MODEL_STOP_TOOL_USE));
  assert_int_equal(pump(&r), AGENT_AWAIT_TOOL);
  assert_string_equal(r.ran, "weather {\"city\":\"Oslo\"}");
  assert_int_equal(agent_tool_progress(&r.a, "asking the sky"), 0);
  assert_int_equal(agent_tool_progress(&r.a, "too early"), -1); /* one at a time */
  assert_int_equal(pump(&r), AGENT_AWAIT_TOOL);
  assert_string_equal(r.last_text, "asking the sky");
  assert_int_equal(agent_tool_done(&r.a, true, "sunny", "{\"temp\":21}"), 0);
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_string_equal(r.log, "turn [call] tool_use tool_input [run] tool_progress "
                             "tool_result [call] ");
  assert_non_null(strstr(r.messages[2], "sunny\\n{\\\"temp\\\":21}"));
  assert_int_equal(agent_tool_done(&r.a, true, "late", NULL), -1);
  feed(&r, stop_ev(MODEL_STOP_END_TURN));
  assert_int_equal(pump(&r), AGENT_END);
  rig_fini(&r);
  toolset_fini(&ts);
}

/* An input the tool's schema refuses goes back to the model as an error result:
 * nothing runs, and a tier-2 tool does not even ask the owner. So does an
 * unknown tool. */
static void invalid_input_is_refused_before_anything_runs(void **state) {
  (void)state;
  struct toolset ts;
  struct rig r;
  start_with_owner_tools(&r, &ts, NULL);
  call_tool(&r, "l1", "lamp_set", "{\"name\":5,\"on\":true}");
  call_tool(&r, "w1", "weather", "{}");
  call_tool(&r, "x1", "teleport", "{}");
  feed(&r, stop_ev(MODEL_STOP_TOOL_USE));
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_null(strstr(r.log, "approval"));
  assert_null(strstr(r.log, "[run]"));
  assert_non_null(strstr(r.messages[2], "invalid input at /name: must be a string"));
  assert_non_null(strstr(r.messages[2], "no such tool: teleport"));
  assert_null(strstr(r.messages[2], "5")); /* the value is never quoted */
  feed(&r, stop_ev(MODEL_STOP_END_TURN));
  assert_int_equal(pump(&r), AGENT_END);
  rig_fini(&r);
  toolset_fini(&ts);
}

/* Numbers reach the tool as the values the model wrote, in the fewest digits
 * that keep them: 0.1 as 0.1, not as the 17 digits of its nearest double.
 * Whole numbers stay as written (100.0 a real, 7 an integer). The digits are
 * chosen per input: one value that needs all 17 gets them, and so do the
 * others beside it. */
static void tools_get_numbers_in_their_shortest_form(void **state) {
  (void)state;
  struct toolset ts;
  struct rig r;
  start_with_owner_tools(&r, &ts, NULL);
  call_tool(&r, "w1", "weather",
            "{\"city\": \"Oslo\", \"p\": 0.1, \"lat\": 59.9139, \"n\": 100.0, \"i\": 7,"
            " \"e\": 1.5e-9}");
  feed(&r, stop_ev(MODEL_STOP_TOOL_USE));
  assert_int_equal(pump(&r), AGENT_AWAIT_TOOL);
  assert_string_equal(r.ran, "weather {\"city\":\"Oslo\",\"p\":0.1,\"lat\":59.9139,"
                             "\"n\":100.0,\"i\":7,\"e\":1.5e-9}");
  assert_int_equal(agent_tool_done(&r.a, true, "mild", NULL), 0);
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_non_null(strstr(r.messages[1], "\"p\":0.1,\"lat\":59.9139,"));
  call_tool(&r, "w2", "weather",
            "{\"city\": \"Oslo\", \"p\": 0.1, \"s\": 0.30000000000000004}");
  feed(&r, stop_ev(MODEL_STOP_TOOL_USE));
  assert_int_equal(pump(&r), AGENT_AWAIT_TOOL);
  assert_string_equal(r.ran, "weather {\"city\":\"Oslo\",\"p\":0.10000000000000001,"
                             "\"s\":0.30000000000000004}");
  assert_int_equal(agent_tool_done(&r.a, true, "mild", NULL), 0);
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  feed(&r, stop_ev(MODEL_STOP_END_TURN));
  assert_int_equal(pump(&r), AGENT_END);
  rig_fini(&r);
  toolset_fini(&ts);
}

/* The tool reads the input as one compact line of JSON, whatever layout the
 * model chose; an input that repeats a key is refused, since the check and the
 * tool could each read a different one of its values. */
static void tools_get_the_checked_input_compact(void **state) {
  (void)state;
  struct toolset ts;
  struct rig r;
  start_with_owner_tools(&r, &ts, NULL);
  call_tool(&r, "w1", "weather", "{\"city\":5,\"city\":\"Oslo\"}");
  call_tool(&r, "w2", "weather", "{\n  \"city\": \"Oslo\"\n}");
  feed(&r, stop_ev(MODEL_STOP_TOOL_USE));
  assert_int_equal(pump(&r), AGENT_AWAIT_TOOL);
  assert_string_equal(r.ran, "weather {\"city\":\"Oslo\"}");
  assert_string_equal(r.result, "error/null"); /* w1, refused */
  assert_int_equal(agent_tool_done(&r.a, true, "sunny", NULL), 0);
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_non_null(strstr(r.messages[2], "the input repeats a key"));
  assert_non_null(strstr(r.messages[1], "\"input\":{\"city\":\"Oslo\"}"));
  feed(&r, stop_ev(MODEL_STOP_END_TURN));
  assert_int_equal(pump(&r), AGENT_END);
  rig_fini(&r);
  toolset_fini(&ts);
}

/* Inputs jansson reads but the protocol cannot show are refused, each saying
 * why: shown as {}, they would be approved as {} and run as they are. An
 * integer past 64 bits, which jansson cannot hold exactly, is refused as such. */
static void inputs_that_cannot_be_shown_are_refused(void **state) {
  (void)state;
  struct toolset ts;
  struct rig r;
  start_with_owner_tools(&r, &ts, NULL);
  call_tool(&r, "w1", "weather", "{\"city\": \"Oslo\", \"n\": 18446744073709551616}");
  call_tool(&r, "w2", "weather", "{\"city\": \"O\\u0000slo\"}");
  /* deeper than libturn nests (2045 levels), within jansson's 2048 */
  static char deep[2 * 2046 + 64];
  int n = snprintf(deep, sizeof deep, "{\"city\": \"Oslo\", \"x\": ");
  for (int i = 0; i < 2045; i++)
    deep[n++] = '[';
  for (int i = 0; i < 2045; i++)
    deep[n++] = ']';
  memcpy(deep + n, "}", 2);
  call_tool(&r, "w3", "weather", deep);
  feed(&r, stop_ev(MODEL_STOP_TOOL_USE));
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_null(strstr(r.log, "[run]"));
  assert_non_null(
      strstr(r.messages[2], "the input has a number too big to read exactly"));
  assert_non_null(strstr(r.messages[2], "the input has a NUL character"));
  assert_non_null(strstr(r.messages[2], "the input is one turnd cannot show"));
  feed(&r, stop_ev(MODEL_STOP_END_TURN));
  assert_int_equal(pump(&r), AGENT_END);
  rig_fini(&r);
  toolset_fini(&ts);
}

static const char *const physical[] = {"physical"};

/* While the backend is locked, a tier-2 call does not run and nobody is asked:
 * its result is rejected, with approval "locked", and the model is told. */
static void locked_guard_refuses_tier_two_calls(void **state) {
  (void)state;
  struct toolset ts;
  struct agent_guard guard = {true, physical, 1, true};
  struct rig r;
  start_with_owner_tools(&r, &ts, &guard);
  call_tool(&r, "c1", "clock", "{}");
  call_tool(&r, "l1", "lamp_set", "{\"name\":\"desk\",\"on\":true}");
  feed(&r, stop_ev(MODEL_STOP_TOOL_USE));
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_null(strstr(r.log, "approval"));
  assert_string_equal(r.result, "rejected/locked");
  assert_non_null(strstr(r.messages[2], "not run: the backend is locked"));
  assert_non_null(strstr(r.log, "tool_result tool_result")); /* the clock ran */
  feed(&r, stop_ev(MODEL_STOP_END_TURN));
  assert_int_equal(pump(&r), AGENT_END);
  rig_fini(&r);
  toolset_fini(&ts);
}

/* A turn whose model asks for the lamp (tier 2, physical) under guard, up to
 * the approval that waits for the owner. */
static void lamp_waits_for_the_owner(struct rig *r, struct toolset *ts,
                                     const struct agent_guard *guard) {
  start_with_owner_tools(r, ts, guard);
  call_tool(r, "l1", "lamp_set", "{\"name\":\"desk\",\"on\":true}");
  feed(r, stop_ev(MODEL_STOP_TOOL_USE));
  assert_int_equal(pump(r), AGENT_AWAIT);
}

/* A call whose effect needs the step-up: the guard asks right after the
 * approval, a plain approve is refused, a failed step-up leaves it waiting, and
 * the one that passes approves it. */
static void step_up_comes_between_approval_and_decision(void **state) {
  (void)state;
  struct toolset ts;
  struct agent_guard guard = {false, physical, 1, true};
  struct rig r;
  lamp_waits_for_the_owner(&r, &ts, &guard);
  assert_string_equal(r.guard, "step_up");
  const char *req = "t-1.a1";
  assert_int_equal(agent_approval_of(&r.a, req, r.now), AGENT_APPROVAL_STEP_UP);
  assert_int_equal(agent_approval_of(&r.a, "t-1.a2", r.now), AGENT_APPROVAL_UNKNOWN);
  assert_int_equal(agent_decide(&r.a, req, TURN_DECISION_APPROVED, r.now), -1);
  assert_int_equal(agent_step_up(&r.a, req, false, r.now), 0);
  assert_int_equal(pump(&r), AGENT_AWAIT);
  assert_string_equal(r.guard, "failed");
  assert_int_equal(agent_step_up(&r.a, req, true, r.now), 0);
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_string_equal(r.guard, "passed");
  assert_string_equal(r.result, "ok/approved");
  assert_non_null(
      strstr(r.log, "approval guard guard guard approval_decided tool_result"));
  assert_int_equal(agent_step_up(&r.a, req, true, r.now), -1); /* over */
  feed(&r, stop_ev(MODEL_STOP_END_TURN));
  assert_int_equal(pump(&r), AGENT_END);
  rig_fini(&r);
  toolset_fini(&ts);
}

/* Rejecting never needs the step-up. */
static void rejecting_needs_no_step_up(void **state) {
  (void)state;
  struct toolset ts;
  struct agent_guard guard = {false, physical, 1, true};
  struct rig r;
  lamp_waits_for_the_owner(&r, &ts, &guard);
  assert_int_equal(agent_decide(&r.a, "t-1.a1", TURN_DECISION_REJECTED, r.now), 0);
  assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
  assert_string_equal(r.result, "rejected/rejected");
  feed(&r, stop_ev(MODEL_STOP_END_TURN));
  assert_int_equal(pump(&r), AGENT_END);
  rig_fini(&r);
  toolset_fini(&ts);
}

/* Regression: a cancel while an approval waited left the call without a
 * result (and the history showed it with status null). The approval is decided
 * (rejected: nothing approves on its own), the call gets its result, and the
 * calls after it that never began get theirs; the owner's late answer finds
 * nothing waiting. */
static void cancel_while_approval_waits_closes_every_call(void **state) {
  (void)state;
  struct toolset ts;
  struct agent_guard guard = {.locked = false};
  struct rig r;
  start_with_owner_tools(&r, &ts, &guard);
  call_tool(&r, "l1", "lamp_set", "{\"name\":\"desk\",\"on\":true}");
  call_tool(&r, "c1", "clock", "{}");
  feed(&r, stop_ev(MODEL_STOP_TOOL_USE));
  assert_int_equal(pump(&r), AGENT_AWAIT);
  agent_cancel(&r.a, TURN_STOP_CANCELLED);
  assert_int_equal(agent_decide(&r.a, "t-1.a1", TURN_DECISION_APPROVED, r.now), -1);
  assert_int_equal(agent_approval_of(&r.a, "t-1.a1", r.now), AGENT_APPROVAL_UNKNOWN);
  r.stop_at_set = true;
  r.stop_at = TURN_EV_TOOL_RESULT;
  assert_int_equal(pump(&r), AGENT_EMIT);
  assert_string_equal(r.decided, "rejected");
  assert_string_equal(r.result, "rejected/rejected");
  assert_string_equal(r.summary,
                      "not run: the turn was cancelled while its approval waited");
  assert_int_equal(pump(&r), AGENT_END);
  assert_string_equal(r.log, "turn [call] tool_use tool_input tool_use tool_input "
                             "approval approval_decided tool_result tool_result end ");
  assert_string_equal(r.result, "rejected/null");
  assert_string_equal(r.summary, "not run: the turn was cancelled");
  assert_string_equal(r.last_text, "cancelled");
  /* The model is told the same, for both calls. */
  assert_int_equal(r.n_messages, 3);
  assert_non_null(strstr(r.messages[2], "while its approval waited"));
  assert_non_null(strstr(r.messages[2], "\"not run: the turn was cancelled\""));
  rig_fini(&r);
  toolset_fini(&ts);
}

/* A cancel during the step-up (the PIN asked for, or being checked): the same,
 * and the check's late verdict approves nothing. */
static void cancel_during_step_up_closes_the_approval(void **state) {
  (void)state;
  struct toolset ts;
  struct agent_guard guard = {.step_up_effects = physical, .n_step_up_effects = 1};
  struct rig r;
  lamp_waits_for_the_owner(&r, &ts, &guard);
  assert_string_equal(r.guard, "step_up");
  agent_cancel(&r.a, TURN_STOP_CANCELLED);
  assert_int_equal(pump(&r), AGENT_END);
  assert_int_equal(agent_step_up(&r.a, "t-1.a1", true, r.now), -1);
  assert_non_null(strstr(r.log, "approval guard approval_decided tool_result end "));
  assert_string_equal(r.result, "rejected/rejected");
  rig_fini(&r);
  toolset_fini(&ts);
}

/* turnd stops while an owner's tool runs: the call is said stopped while it
 * ran (it may have done part of its work), an error; the tool's late result is
 * refused. */
static void interrupt_while_a_tool_runs_says_it_was_stopped(void **state) {
  (void)state;
  struct toolset ts;
  struct rig r;
  start_with_owner_tools(&r, &ts, NULL);
  call_tool(&r, "w1", "weather", "{\"city\":\"Oslo\"}");
  feed(&r, stop_ev(MODEL_STOP_TOOL_USE));
  assert_int_equal(pump(&r), AGENT_AWAIT_TOOL);
  agent_cancel(&r.a, TURN_STOP_INTERRUPT);
  assert_int_equal(pump(&r), AGENT_END);
  assert_string_equal(r.log, "turn [call] tool_use tool_input [run] tool_result end ");
  assert_string_equal(r.result, "error/null");
  assert_string_equal(r.summary, "stopped: turnd stopped while it ran");
  assert_string_equal(r.last_text, "interrupt");
  assert_int_equal(agent_tool_done(&r.a, true, "late", NULL), -1);
  assert_non_null(strstr(r.messages[2], "stopped: turnd stopped while it ran"));
  rig_fini(&r);
  toolset_fini(&ts);
}

/* turnd could not keep an event (its log is full): the calls are closed as
 * readers saw them, then the error, then the end. A result readers never got
 * is given again (the model had it already, and is not told twice). */
static void fail_closes_calls_as_readers_saw_them(void **state) {
  (void)state;
  struct rig r;
  rig_init(&r);
  pump(&r);
  call_tool(&r, "c1", "clock", "{}");
  call_tool(&r, "c2", "clock", "{}");
  r.drop_at_set = true;
  r.drop_at = TURN_EV_TOOL_RESULT;
  feed(&r, stop_ev(MODEL_STOP_TOOL_USE));
  assert_int_equal(pump(&r), AGENT_END);
  assert_true(agent_failed(&r.a));
  assert_string_equal(r.log, "turn [call] tool_use tool_input tool_use tool_input "
                             "(dropped) tool_result tool_result error end ");
  assert_string_equal(r.result, "error/null");
  assert_string_equal(r.summary, "not run: the log is full");
  assert_string_equal(r.last_text, "error");
  assert_int_equal(r.n_messages, 3);
  const char *c1 = strstr(r.messages[2], "\"tool_use_id\":\"c1\"");
  assert_non_null(c1);
  assert_null(strstr(c1 + 1, "\"tool_use_id\":\"c1\"")); /* told once */
  assert_non_null(strstr(r.messages[2], "\"not run: the log is full\""));
  rig_fini(&r);
}

/* The same when what was not kept started a call, asked its approval or
 * decided it: readers never saw that, so the end does not build on it. */
static void fail_after_a_dropped_call_event(void **state) {
  (void)state;
  static const turn_event_type dropped[] = {TURN_EV_TOOL_USE, TURN_EV_APPROVAL,
                                            TURN_EV_APPROVAL_DECIDED};
  static const char *const want[] = {
      "turn [call] (dropped) error end ",
      "turn [call] tool_use tool_input (dropped) tool_result error end ",
      ("turn [call] tool_use tool_input approval (dropped) approval_decided "
       "tool_result error end ")};
  static const char *const result[] = {"", "error/null", "rejected/rejected"};
  for (size_t i = 0; i < 3; i++) {
    struct toolset ts;
    struct agent_guard guard = {.locked = false};
    struct rig r;
    start_with_owner_tools(&r, &ts, &guard);
    r.drop_at_set = true;
    r.drop_at = dropped[i];
    feed(&r, (struct model_event){
                 .kind = MODEL_EV_TOOL_START, .id = "l1", .name = "lamp_set"});
    if (i == 0) {
      assert_int_equal(pump(&r), AGENT_END);
    } else {
      assert_int_equal(pump(&r), AGENT_AWAIT_MODEL);
      feed(&r, (struct model_event){.kind = MODEL_EV_TOOL_END,
                                    .index = 0,
                                    .text = "{\"name\":\"desk\",\"on\":true}",
                                    .len = 25});
      pump(&r);
      feed(&r, stop_ev(MODEL_STOP_TOOL_USE));
      if (i == 2) {
        assert_int_equal(pump(&r), AGENT_AWAIT);
        assert_int_equal(agent_decide(&r.a, "t-1.a1", TURN_DECISION_REJECTED, r.now), 0);
      }
      assert_int_equal(pump(&r), AGENT_END);
    }
    assert_string_equal(r.log, want[i]);
    assert_string_equal(r.result, result[i]);
    rig_fini(&r);
    toolset_fini(&ts);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(text_reply_ends_the_turn),
      cmocka_unit_test(tool_calls_run_and_the_model_is_called_again),
      cmocka_unit_test(calls_without_ids_get_ids_unique_in_the_turn),
      cmocka_unit_test(repeated_call_ids_get_ids_unique_in_the_turn),
      cmocka_unit_test(throttle_waits_and_calls_again),
      cmocka_unit_test(endless_throttling_fails_the_turn),
      cmocka_unit_test(failure_says_why_and_ends_with_error),
      cmocka_unit_test(long_failure_is_cut_between_characters),
      cmocka_unit_test(max_tokens_ends_without_running_calls),
      cmocka_unit_test(cancel_ends_and_late_events_are_refused),
      cmocka_unit_test(tool_end_without_start_fails),
      cmocka_unit_test(close_deltas_go_out_together),
      cmocka_unit_test(a_clock_set_back_holds_nothing),
      cmocka_unit_test(big_deltas_go_out_in_pieces),
      cmocka_unit_test(held_text_is_sent_before_a_cancel),
      cmocka_unit_test(a_delta_a_window_after_the_last_goes_at_once),
      cmocka_unit_test(another_event_ends_the_burst),
      cmocka_unit_test(uncounted_replies_are_told_once),
      cmocka_unit_test(an_uncounted_retry_is_told),
      cmocka_unit_test(a_call_cut_while_it_acts_is_said_stopped),
      cmocka_unit_test(token_budget_ends_the_turn),
      cmocka_unit_test(huge_token_counts_still_meet_the_budget),
      cmocka_unit_test(model_call_cap_ends_the_turn),
      cmocka_unit_test(refused_reply_runs_no_calls_and_says_why),
      cmocka_unit_test(refused_reply_past_the_budget_still_says_why),
      cmocka_unit_test(throttle_after_a_call_began_fails_the_call),
      cmocka_unit_test(owner_tool_runs_in_the_shell),
      cmocka_unit_test(invalid_input_is_refused_before_anything_runs),
      cmocka_unit_test(tools_get_the_checked_input_compact),
      cmocka_unit_test(inputs_that_cannot_be_shown_are_refused),
      cmocka_unit_test(tools_get_numbers_in_their_shortest_form),
      cmocka_unit_test(locked_guard_refuses_tier_two_calls),
      cmocka_unit_test(step_up_comes_between_approval_and_decision),
      cmocka_unit_test(rejecting_needs_no_step_up),
      cmocka_unit_test(cancel_while_approval_waits_closes_every_call),
      cmocka_unit_test(cancel_during_step_up_closes_the_approval),
      cmocka_unit_test(interrupt_while_a_tool_runs_says_it_was_stopped),
      cmocka_unit_test(fail_closes_calls_as_readers_saw_them),
      cmocka_unit_test(fail_after_a_dropped_call_event),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
