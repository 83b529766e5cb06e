/* The conversation in the model's message format (src/agent/convo.c): what the
 * store keeps and a provider is sent must be exactly the JSON a provider expects,
 * so every message is compared as parsed JSON (json_equal), never as bytes, and
 * its time must be the time of its first piece. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/convo.h"
#include "turn/turn.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 2026-10-01T08:00:00Z: a realistic clock, so no time is mistaken for "unset". */
#define T0 1790841600000u

/* Takes the oldest message and checks it against expected (JSON text) and its
 * time. Failing here names the message, so a wrong order shows as a mismatch. */
static void expect_message(struct convo *c, const char *expected, uint64_t at_ms) {
  struct convo_message m;
  assert_true(convo_take(c, &m));
  json_error_t jerr;
  json_t *got = json_loads(m.json, 0, &jerr);
  json_t *want = json_loads(expected, 0, &jerr);
  if (got == NULL || want == NULL || !json_equal(got, want)) {
    print_error("got:  %s\nwant: %s\n", m.json, expected);
    json_decref(got);
    json_decref(want);
    free(m.json);
    fail();
  }
  json_decref(got);
  json_decref(want);
  free(m.json);
  assert_int_equal(m.at_ms, at_ms);
}

static void expect_no_message(struct convo *c) {
  struct convo_message m = {NULL, 0, 0};
  bool took = convo_take(c, &m);
  if (took) free(m.json);
  assert_false(took);
  assert_null(m.json); /* *out is untouched when none waits */
}

/* Each test gets an initialised convo in *state; the teardown finishes it even
 * when the test fails, so a failure is reported as itself and not as a leak. */
static int setup(void **state) {
  struct convo *c = malloc(sizeof *c);
  if (c == NULL) return -1;
  convo_init(c);
  *state = c;
  return 0;
}

static int teardown(void **state) {
  convo_fini(*state);
  free(*state);
  return 0;
}

static turn_str s(const char *text) {
  return turn_str_c(text);
}

static void test_convo_user_message(void **state) {
  struct convo *c = *state;
  convo_user_text(c, "what time is it? \"now\"\n", T0);
  expect_message(c,
                 "{\"role\":\"user\",\"content\":[{\"type\":\"text\","
                 "\"text\":\"what time is it? \\\"now\\\"\\n\"}]}",
                 T0);
  expect_no_message(c);
  assert_false(c->lost);
}

static void test_convo_text_deltas_become_one_block(void **state) {
  struct convo *c = *state;
  /* Deltas may split anywhere, also inside a UTF-8 sequence ("é" is C3 A9). */
  convo_text(c, s("Hel"), T0 + 10);
  convo_text(c, s("lo, caf\xc3"), T0 + 20);
  convo_text(c, s("\xa9"), T0 + 30);
  convo_text(c, s(""), T0 + 35);
  convo_text(c, s("!"), T0 + 40);
  expect_no_message(c); /* the reply is still open */
  convo_finish(c);
  expect_message(c,
                 "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\","
                 "\"text\":\"Hello, caf\xc3\xa9!\"}]}",
                 T0 + 10);
  expect_no_message(c);
  assert_false(c->lost);
}

/* A four-byte character held back whole takes four bytes: its first three came in
 * one delta, then the last, and another one byte at a time. The held bytes lived
 * in three, so the last byte was written past them (UBSan: index 3 out of bounds;
 * gcc -O2: stringop-overflow, which broke the Release build). */
static void test_convo_bug_four_byte_character_cut_after_three(void **state) {
  struct convo *c = *state;
  /* U+1F600 is F0 9F 98 80 */
  convo_text(c, s("hi \xf0\x9f\x98"), T0);
  convo_text(c, s("\x80 and \xf0"), T0 + 1);
  convo_text(c, s("\x9f"), T0 + 2);
  convo_text(c, s("\x98"), T0 + 3);
  convo_text(c, s("\x80!"), T0 + 4);
  convo_finish(c);
  expect_message(c,
                 "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\","
                 "\"text\":\"hi \xf0\x9f\x98\x80 and \xf0\x9f\x98\x80!\"}]}",
                 T0);
  expect_no_message(c);
  assert_false(c->lost);
}

static void test_convo_reasoning_then_text_are_separate_blocks_in_order(void **state) {
  struct convo *c = *state;
  convo_thinking(c, s("the user "), T0);
  convo_thinking(c, s("wants the time"), T0 + 1);
  convo_text(c, s("Let me "), T0 + 2);
  convo_text(c, s("look."), T0 + 3);
  convo_thinking(c, s("and then?"), T0 + 4);
  convo_text(c, s("Done."), T0 + 5);
  convo_finish(c);
  expect_message(c,
                 "{\"role\":\"assistant\",\"content\":["
                 "{\"type\":\"thinking\",\"thinking\":\"the user wants the time\"},"
                 "{\"type\":\"text\",\"text\":\"Let me look.\"},"
                 "{\"type\":\"thinking\",\"thinking\":\"and then?\"},"
                 "{\"type\":\"text\",\"text\":\"Done.\"}]}",
                 T0);
  expect_no_message(c);
}

/* Two thinking blocks in a row, each signed: the signature ends its block, so
 * they stay two, each with its own signature (joined, the API refuses both). */
static void test_convo_signed_thinking_blocks_stay_apart(void **state) {
  struct convo *c = *state;
  convo_thinking(c, s("first "), T0);
  convo_thinking(c, s("thought"), T0 + 1);
  convo_signature(c, s("SIG"));
  convo_signature(c, s("A"));
  convo_thinking(c, s("second thought"), T0 + 2);
  convo_signature(c, s("SIGB"));
  convo_text(c, s("Done."), T0 + 3);
  convo_finish(c);
  expect_message(c,
                 "{\"role\":\"assistant\",\"content\":["
                 "{\"type\":\"thinking\",\"thinking\":\"first thought\","
                 "\"signature\":\"SIGA\"},"
                 "{\"type\":\"thinking\",\"thinking\":\"second thought\","
                 "\"signature\":\"SIGB\"},"
                 "{\"type\":\"text\",\"text\":\"Done.\"}]}",
                 T0);
  expect_no_message(c);
}

static void test_convo_tool_use_carries_its_input_object(void **state) {
  struct convo *c = *state;
  convo_text(c, s("Switching it on."), T0);
  convo_tool_use(c, "u1", "lamp_set",
                 "{\"name\": \"desk\", \"on\": true, \"n\": [1, 2.5]}", T0 + 5);
  convo_tool_use(c, "u2", "clock", "{}", T0 + 6);
  convo_finish(c);
  expect_message(
      c,
      "{\"role\":\"assistant\",\"content\":["
      "{\"type\":\"text\",\"text\":\"Switching it on.\"},"
      "{\"type\":\"tool_use\",\"id\":\"u1\",\"name\":\"lamp_set\","
      "\"input\":{\"name\":\"desk\",\"on\":true,\"n\":[1,2.5]}},"
      "{\"type\":\"tool_use\",\"id\":\"u2\",\"name\":\"clock\",\"input\":{}}]}",
      T0);
  expect_no_message(c);
}

/* The script's input is always an object; text that is not JSON must still give
 * a message a provider accepts, so it becomes {}. */
static void test_convo_tool_use_input_not_json_becomes_empty_object(void **state) {
  struct convo *c = *state;
  convo_tool_use(c, "u1", "clock", "{not json", T0);
  convo_finish(c);
  expect_message(c,
                 "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\","
                 "\"id\":\"u1\",\"name\":\"clock\",\"input\":{}}]}",
                 T0);
}

static void test_convo_tool_results_batch_into_one_user_message(void **state) {
  struct convo *c = *state;
  convo_tool_use(c, "u1", "clock", "{}", T0);
  convo_tool_use(c, "u2", "fail_tool", "{}", T0 + 1);
  convo_finish(c);
  convo_tool_result(c, "u1", s("it is 08:00 UTC"), false, T0 + 100);
  convo_tool_result(c, "u2", s("fail_tool always fails"), true, T0 + 200);
  expect_message(c,
                 "{\"role\":\"assistant\",\"content\":["
                 "{\"type\":\"tool_use\",\"id\":\"u1\",\"name\":\"clock\",\"input\":{}},"
                 "{\"type\":\"tool_use\",\"id\":\"u2\",\"name\":\"fail_tool\","
                 "\"input\":{}}]}",
                 T0);
  expect_no_message(c); /* the results wait until the batch is complete */
  convo_finish(c);
  expect_message(c,
                 "{\"role\":\"user\",\"content\":["
                 "{\"type\":\"tool_result\",\"tool_use_id\":\"u1\","
                 "\"content\":\"it is 08:00 UTC\",\"is_error\":false},"
                 "{\"type\":\"tool_result\",\"tool_use_id\":\"u2\","
                 "\"content\":\"fail_tool always fails\",\"is_error\":true}]}",
                 T0 + 100);
  expect_no_message(c);
}

/* The agent does not call convo_finish between the results and the next reply
 * in every path: the first piece of another kind must close the open message.
 * Messages are taken as they finish, as the shell does after every step. */
static void test_convo_message_switch_finishes_the_open_message(void **state) {
  struct convo *c = *state;
  convo_user_text(c, "hi", T0);
  convo_tool_use(c, "u1", "clock", "{}", T0 + 10);
  expect_message(
      c, "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}", T0);
  expect_no_message(c);
  convo_tool_result(c, "u1", s("it is 08:00 UTC"), false, T0 + 20);
  expect_message(c,
                 "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\","
                 "\"id\":\"u1\",\"name\":\"clock\",\"input\":{}}]}",
                 T0 + 10);
  expect_no_message(c);
  convo_text(c, s("It is eight."), T0 + 30);
  expect_message(c,
                 "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
                 "\"tool_use_id\":\"u1\",\"content\":\"it is 08:00 UTC\","
                 "\"is_error\":false}]}",
                 T0 + 20);
  expect_no_message(c);
  convo_user_text(c, "thanks", T0 + 40);
  expect_message(c,
                 "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\","
                 "\"text\":\"It is eight.\"}]}",
                 T0 + 30);
  expect_message(
      c, "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"thanks\"}]}",
      T0 + 40);
  expect_no_message(c);
  assert_false(c->lost);
}

static void test_convo_finish_with_nothing_open_leaves_none(void **state) {
  struct convo *c = *state;
  convo_finish(c);
  expect_no_message(c);
  convo_text(c, s("x"), T0);
  convo_finish(c);
  convo_finish(c); /* a second finish must not repeat or empty the message */
  expect_message(
      c, "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"x\"}]}", T0);
  expect_no_message(c);
  assert_false(c->lost);
}

/* Bug: an empty delta (the script's {"text": ""}, a provider's empty delta)
 * after an earlier block of the reply leaves {"type":"text","text":""} in the
 * message, and providers refuse empty text blocks, so the stored session could
 * no longer be sent. The text buffer keeps its memory after the first block, so
 * json_stringn gets a non-NULL pointer and length 0; on the first block the
 * pointer is NULL, json_stringn fails and the block is dropped by luck while
 * `lost` reports an out-of-memory that did not happen. */
static void test_convo_bug_empty_delta_leaves_an_empty_text_block(void **state) {
  struct convo *c = *state;
  convo_text(c, s(""), T0);
  convo_finish(c);
  expect_no_message(c); /* a reply that said nothing leaves no message */
  convo_text(c, s("Looking."), T0 + 1);
  convo_tool_use(c, "u1", "clock", "{}", T0 + 2);
  convo_thinking(c, s(""), T0 + 3);
  convo_text(c, s(""), T0 + 4);
  convo_finish(c);
  expect_message(c,
                 "{\"role\":\"assistant\",\"content\":["
                 "{\"type\":\"text\",\"text\":\"Looking.\"},"
                 "{\"type\":\"tool_use\",\"id\":\"u1\",\"name\":\"clock\","
                 "\"input\":{}}]}",
                 T0 + 1);
  expect_no_message(c);
  assert_false(c->lost); /* nothing ran out of memory */
}

static void test_convo_at_ms_is_the_time_of_the_first_piece(void **state) {
  struct convo *c = *state;
  convo_thinking(c, s("hmm"), T0 + 7);
  convo_text(c, s("a"), T0 + 900);
  convo_tool_use(c, "u1", "clock", "{}", T0 + 1000);
  convo_finish(c);
  convo_tool_result(c, "u1", s("ok"), false, T0 + 2000);
  convo_tool_result(c, "u2", s("ok"), false, T0 + 1500); /* times need not grow */
  convo_finish(c);
  struct convo_message reply, results;
  assert_true(convo_take(c, &reply));
  free(reply.json);
  assert_true(convo_take(c, &results));
  free(results.json);
  assert_int_equal(reply.at_ms, T0 + 7);
  assert_int_equal(results.at_ms, T0 + 2000);
  expect_no_message(c);
}

static void test_convo_take_is_oldest_first_then_empty(void **state) {
  struct convo *c = *state;
  expect_no_message(c);
  convo_user_text(c, "one", T0 + 1);
  convo_user_text(c, "two", T0 + 2);
  expect_message(c,
                 "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"one\"}]}",
                 T0 + 1);
  convo_user_text(c, "three", T0 + 3);
  expect_message(c,
                 "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"two\"}]}",
                 T0 + 2);
  expect_message(
      c, "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"three\"}]}",
      T0 + 3);
  expect_no_message(c);
  expect_no_message(c);
}

/* The queue is small by design; a message past it is lost and says so, and the
 * ones kept stay intact and in order. */
static void test_convo_queue_full_marks_lost_and_keeps_the_rest(void **state) {
  struct convo *c = *state;
  char text[16];
  for (unsigned i = 0; i <= CONVO_QUEUE; i++) {
    snprintf(text, sizeof text, "m%u", i);
    convo_user_text(c, text, T0 + i);
  }
  assert_true(c->lost);
  for (unsigned i = 0; i < CONVO_QUEUE; i++) {
    char want[96];
    snprintf(want, sizeof want,
             "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"m%u\"}]}", i);
    expect_message(c, want, T0 + i);
  }
  expect_no_message(c);
}

/* convo_fini frees what is still open and queued (ASan checks it leaks nothing)
 * and leaves a struct that can be initialised again. */
static void test_convo_fini_frees_open_and_queued(void **state) {
  struct convo *c = *state;
  convo_user_text(c, "hi", T0);
  convo_thinking(c, s("still thinking"), T0 + 1);
  convo_fini(c);
  convo_init(c);
  convo_tool_result(c, "u1", s("open results"), false, T0);
}

/* ------------------------------------------------------------- convo_repair */

#define USER(text) \
  "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"" text "\"}]}"
#define CALL(id) \
  "{\"type\":\"tool_use\",\"id\":\"" id "\",\"name\":\"lamp\",\"input\":{}}"
#define RESULT(id, text, err)                                                \
  "{\"type\":\"tool_result\",\"tool_use_id\":\"" id "\",\"content\":\"" text \
  "\",\"is_error\":" err "}"
#define MISSING(id) \
  RESULT(id, "not run: the turn ended before this call finished", "true")

/* Repairs the n messages given (copied) and checks the result against want, a
 * JSON array of messages. */
static void expect_repair(const char *const *given, size_t n, const char *want) {
  char **messages = calloc(n, sizeof *messages);
  assert_non_null(messages);
  for (size_t i = 0; i < n; i++)
    assert_non_null(messages[i] = strdup(given[i]));
  size_t count = n;
  assert_int_equal(convo_repair(&messages, &count), 0);
  json_t *got = json_array();
  for (size_t i = 0; i < count; i++) {
    json_error_t jerr;
    json_array_append_new(got, json_loads(messages[i], JSON_ALLOW_NUL, &jerr));
    free(messages[i]);
  }
  free(messages);
  json_error_t jerr;
  json_t *expected = json_loads(want, 0, &jerr);
  assert_non_null(expected);
  if (!json_equal(got, expected)) {
    char *text = json_dumps(got, JSON_COMPACT);
    print_error("got:  %s\nwant: %s\n", text, want);
    free(text);
    fail();
  }
  json_decref(got);
  json_decref(expected);
}

/* A whole conversation keeps its messages (a text content becomes a block). */
static void test_convo_repair_leaves_a_whole_conversation(void **state) {
  (void)state;
  const char *given[] = {
      USER("hi"), "{\"role\":\"assistant\",\"content\":[" CALL("u1") "]}",
      "{\"role\":\"user\",\"content\":[" RESULT("u1", "on", "false") "]}",
      "{\"role\":\"assistant\",\"content\":\"done\"}"};
  expect_repair(given, 4,
                "[" USER("hi") ",{\"role\":\"assistant\",\"content\":[" CALL(
                    "u1") "]},"
                          "{\"role\":\"user\",\"content\":[" RESULT(
                              "u1", "on", "false") "]},"
                                                   "{\"role\":\"assistant\",\"content\":["
                                                   "{\"type\":\"text\",\"text\":"
                                                   "\"done\"}]}]");
}

/* A turn cancelled or limited after its tool results: the next question joins
 * the results message. */
static void test_convo_repair_joins_neighbouring_user_messages(void **state) {
  (void)state;
  const char *given[] = {
      USER("hi"), "{\"role\":\"assistant\",\"content\":[" CALL("u1") "]}",
      "{\"role\":\"user\",\"content\":[" RESULT("u1", "on", "false") "]}", USER("again")};
  expect_repair(
      given, 4,
      "[" USER("hi") ",{\"role\":\"assistant\",\"content\":[" CALL(
          "u1") "]},"
                "{\"role\":\"user\",\"content\":[" RESULT(
                    "u1", "on", "false") ","
                                         "{\"type\":\"text\",\"text\":\"again\"}]}]");
}

/* A turn killed while its calls waited: each call without a result gets an
 * error result, first in the next user message, in a message of its own before
 * an assistant message, and at the end. */
static void test_convo_repair_answers_calls_left_open(void **state) {
  (void)state;
  const char *next_user[] = {
      USER("hi"), "{\"role\":\"assistant\",\"content\":[" CALL("u1") "," CALL("u2") "]}",
      "{\"role\":\"user\",\"content\":[" RESULT("u2", "on", "false") "]}", USER("again")};
  expect_repair(
      next_user, 4,
      "[" USER("hi") ",{\"role\":\"assistant\",\"content\":[" CALL("u1") "," CALL("u2") "]},{\"role\":\"user\",\"content\":[" MISSING(
          "u1") "," RESULT("u2", "on",
                           "false") ",{\"type\":\"text\",\"text\":\"again\"}]}]");
  const char *next_reply[] = {USER("hi"),
                              "{\"role\":\"assistant\",\"content\":[" CALL("u1") "]}",
                              "{\"role\":\"assistant\",\"content\":[" CALL("u3") "]}"};
  expect_repair(next_reply, 3,
                "[" USER("hi") ",{\"role\":\"assistant\",\"content\":[" CALL(
                    "u1") "]},"
                          "{\"role\":\"user\",\"content\":[" MISSING(
                              "u1") "]},"
                                    "{\"role\":\"assistant\",\"content\":[" CALL(
                                        "u3") "]},"
                                              "{\"role\":\"user\",\"content\":[" MISSING(
                                                  "u3") "]}]");
}

/* A reply's blocks that a provider refuses are left out: thinking with no
 * signature (or an empty one) and text of white space only; a user's text is
 * kept as it is. */
static void test_convo_repair_drops_blocks_a_provider_refuses(void **state) {
  (void)state;
  const char *given[] = {"{\"role\":\"user\",\"content\":["
                         "{\"type\":\"text\",\"text\":\" \"},"
                         "{\"type\":\"text\",\"text\":\"hi\"}]}",
                         "{\"role\":\"assistant\",\"content\":["
                         "{\"type\":\"thinking\",\"thinking\":\"a\"},"
                         "{\"type\":\"text\",\"text\":\"\\n\\n\"},"
                         "{\"type\":\"thinking\",\"thinking\":\"b\",\"signature\":\"S\"},"
                         "{\"type\":\"text\",\"text\":\"Hello.\"},"
                         "{\"type\":\"thinking\",\"thinking\":\"c\",\"signature\":\"\"},"
                         "{\"type\":\"text\",\"text\":\" \\t\\r\\n\"}]}"};
  expect_repair(given, 2,
                "[{\"role\":\"user\",\"content\":["
                "{\"type\":\"text\",\"text\":\" \"},"
                "{\"type\":\"text\",\"text\":\"hi\"}]},"
                "{\"role\":\"assistant\",\"content\":["
                "{\"type\":\"thinking\",\"thinking\":\"b\",\"signature\":\"S\"},"
                "{\"type\":\"text\",\"text\":\"Hello.\"}]}]");
}

/* A failed call with an empty summary: the Messages API refuses an empty error
 * result, and any result of white space only, so those are sent with words in
 * them; an empty result that is no error stays. */
static void test_convo_repair_gives_silent_results_words(void **state) {
  (void)state;
  const char *given[] = {
      USER("hi"),
      "{\"role\":\"assistant\",\"content\":[" CALL("u1") "," CALL("u2") "," CALL(
          "u3") "]}",
      "{\"role\":\"user\",\"content\":[" RESULT("u1", "", "true") "," RESULT(
          "u2", "", "false") "," RESULT("u3", " \\n", "false") "]}"};
  expect_repair(
      given, 3,
      "[" USER("hi") ",{\"role\":\"assistant\",\"content\":[" CALL("u1") "," CALL(
          "u2") "," CALL("u3") "]},"
                               "{\"role\":\"user\",\"content\":[" RESULT(
                                   "u1", "(the tool said nothing)",
                                   "true") "," RESULT("u2", "",
                                                      "false") "," RESULT("u3",
                                                                          "(the tool "
                                                                          "said nothing)",
                                                                          "false") "]}]");
}

/* A call whose input is not an object (the model sent null, or a list) goes
 * back with an empty object: the API refuses any other input. */
static void test_convo_repair_gives_calls_an_object_input(void **state) {
  (void)state;
  const char *given[] = {
      USER("hi"),
      "{\"role\":\"assistant\",\"content\":["
      "{\"type\":\"tool_use\",\"id\":\"u1\",\"name\":\"lamp\",\"input\":null},"
      "{\"type\":\"tool_use\",\"id\":\"u2\",\"name\":\"lamp\",\"input\":[1]}]}",
      "{\"role\":\"user\",\"content\":[" RESULT("u1", "bad", "true") "," RESULT(
          "u2", "bad", "true") "]}"};
  expect_repair(
      given, 3,
      "[" USER("hi") ",{\"role\":\"assistant\",\"content\":[" CALL("u1") "," CALL(
          "u2") "]},{\"role\":\"user\",\"content\":[" RESULT("u1", "bad",
                                                             "true") "," RESULT("u2",
                                                                                "bad",
                                                                                "true") "]}]");
}

/* A turn cancelled while the model thought, before the signature came: its
 * reply holds nothing a provider takes, so it goes, and the questions around it
 * join (two user messages in a row are refused). A reply that went blank after
 * one with calls still lets those calls get their results. */
static void test_convo_repair_drops_a_reply_left_empty(void **state) {
  (void)state;
  const char *cancelled[] = {USER("think"),
                             "{\"role\":\"assistant\",\"content\":[{\"type\":"
                             "\"thinking\",\"thinking\":\"hm\"}]}",
                             USER("next")};
  expect_repair(cancelled, 3,
                "[{\"role\":\"user\",\"content\":["
                "{\"type\":\"text\",\"text\":\"think\"},"
                "{\"type\":\"text\",\"text\":\"next\"}]}]");
  const char *after_calls[] = {
      USER("hi"), "{\"role\":\"assistant\",\"content\":[" CALL("u1") "]}",
      "{\"role\":\"assistant\",\"content\":\"  \"}", USER("again")};
  expect_repair(
      after_calls, 4,
      "[" USER("hi") ","
                     "{\"role\":\"assistant\",\"content\":[" CALL(
                         "u1") "]},"
                               "{\"role\":\"user\",\"content\":[" MISSING(
                                   "u1") ","
                                         "{\"type\":\"text\",\"text\":\"again\"}]}]");
}

/* What is not a conversation's message leaves the messages as they were. */
static void test_convo_repair_refuses_what_it_cannot_read(void **state) {
  (void)state;
  char **messages = calloc(2, sizeof *messages);
  assert_non_null(messages);
  messages[0] = strdup(USER("hi"));
  messages[1] = strdup("{\"role\":\"system\",\"content\":\"x\"}");
  char **before = messages;
  size_t n = 2;
  assert_int_equal(convo_repair(&messages, &n), -1);
  assert_ptr_equal(messages, before);
  assert_int_equal(n, 2);
  free(messages[0]);
  free(messages[1]);
  free(messages);
}

/* ------------------------------------------------------------- recovery */

/* What convo_recover hands out, in order. */
struct collected {
  struct convo_message m[8];
  size_t n;
  size_t stop_after; /* the callback refuses the message past this many */
};

static int collect(void *ctx, struct convo_message *m) {
  struct collected *got = ctx;
  if (got->n == got->stop_after || got->n == 8) {
    free(m->json);
    return -1;
  }
  got->m[got->n++] = *m;
  return 0;
}

/* Checks got->m[i] as expect_message does, and frees it. */
static void expect_collected(struct collected *got, size_t i, const char *expected,
                             uint64_t at_ms) {
  assert_true(i < got->n);
  json_t *have = json_loads(got->m[i].json, 0, NULL);
  json_t *want = json_loads(expected, 0, NULL);
  bool same = have != NULL && want != NULL && json_equal(have, want);
  if (!same) print_error("got:  %s\nwant: %s\n", got->m[i].json, expected);
  json_decref(have);
  json_decref(want);
  free(got->m[i].json);
  got->m[i].json = NULL;
  assert_true(same);
  assert_int_equal(got->m[i].at_ms, at_ms);
}

static void collected_free(struct collected *got) {
  for (size_t i = 0; i < got->n; i++)
    free(got->m[i].json);
}

/* Ends the open message, as the shell does once the events are fed, and
 * collects it. */
static void finish_into(struct convo *c, struct collected *got) {
  convo_recover_finish(c, T0 + 900, false);
  struct convo_message last;
  assert_true(convo_take(c, &last));
  assert_int_equal(collect(got, &last), 0);
}

/* A turn's events, in two chunks, give back the reply and results the agent
 * made of the same words, each at its chunk's time; the reply still streaming
 * when the events stop is the last message, once finished. The turn's own
 * line, the throttle and the notice are no part of any message. */
static void test_convo_recover_rebuilds_replies_and_results_from_events(void **state) {
  struct convo *c = *state;
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  struct collected got = {.stop_after = 8};
  static const char first[] =
      "{\"v\":1,\"seq\":0,\"type\":\"turn\",\"turn\":\"t1\",\"session\":\"s1\"}\n"
      "{\"v\":1,\"seq\":1,\"type\":\"reasoning\",\"delta\":\"the time\"}\n"
      "{\"v\":1,\"seq\":2,\"type\":\"text\",\"delta\":\"One \"}\n"
      "{\"v\":1,\"seq\":3,\"type\":\"text\",\"delta\":\"moment.\"}\n"
      "{\"v\":1,\"seq\":4,\"type\":\"tool_use\",\"id\":\"u1\",\"tool\":\"clock\","
      "\"tier\":0}\n"
      "{\"v\":1,\"seq\":5,\"type\":\"tool_input\",\"id\":\"u1\",\"tool\":\"clock\","
      "\"input\":{\"zone\":\"UTC\"},\"truncated\":false}\n";
  static const char second[] =
      "{\"v\":1,\"seq\":6,\"type\":\"tool_progress\",\"id\":\"u1\",\"tool\":\"clock\","
      "\"message\":\"looking\"}\n"
      "{\"v\":1,\"seq\":7,\"type\":\"tool_result\",\"id\":\"u1\",\"tool\":\"clock\","
      "\"status\":\"ok\",\"summary\":\"it is 08:00 UTC\",\"approval\":null}\n"
      "{\"v\":1,\"seq\":8,\"type\":\"throttled\",\"delay_seconds\":1.0}\n"
      "{\"v\":1,\"seq\":9,\"type\":\"text\",\"delta\":\"It is \"}\n"
      "{\"v\":1,\"seq\":10,\"type\":\"notice\",\"text\":\"a notice\"}\n"
      "{\"v\":1,\"seq\":11,\"type\":\"text\",\"delta\":\"eight.\"}";
  assert_int_equal(convo_recover(c, &arena, first, strlen(first), T0, collect, &got), 0);
  assert_int_equal(got.n, 0); /* the reply is still open */
  assert_int_equal(
      convo_recover(c, &arena, second, strlen(second), T0 + 500, collect, &got), 0);
  finish_into(c, &got);
  assert_int_equal(got.n, 3);
  expect_collected(&got, 0,
                   "{\"role\":\"assistant\",\"content\":["
                   "{\"type\":\"thinking\",\"thinking\":\"the time\"},"
                   "{\"type\":\"text\",\"text\":\"One moment.\"},"
                   "{\"type\":\"tool_use\",\"id\":\"u1\",\"name\":\"clock\","
                   "\"input\":{\"zone\":\"UTC\"}}]}",
                   T0);
  expect_collected(&got, 1,
                   "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
                   "\"tool_use_id\":\"u1\",\"content\":\"it is 08:00 UTC\","
                   "\"is_error\":false}]}",
                   T0 + 500);
  expect_collected(&got, 2,
                   "{\"role\":\"assistant\",\"content\":["
                   "{\"type\":\"text\",\"text\":\"It is eight.\"}]}",
                   T0 + 500);
  expect_no_message(c);
  turn_arena_fini(&arena);
}

/* A call whose input never came whole is no part of the reply (the agent puts
 * a call there with its input); one whose input was too long to record keeps
 * an empty one; a failed result is an error; a line that does not parse is
 * skipped; and a callback that refuses a message stops the feed. */
static void test_convo_recover_partial_calls_errors_and_bad_lines(void **state) {
  struct convo *c = *state;
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  struct collected got = {.stop_after = 1};
  static const char lines[] =
      "{\"v\":1,\"seq\":1,\"type\":\"tool_use\",\"id\":\"u1\",\"tool\":\"big\","
      "\"tier\":0}\n"
      "{\"v\":1,\"seq\":2,\"type\":\"tool_input\",\"id\":\"u1\",\"tool\":\"big\","
      "\"input\":null,\"preview\":\"{\\\"a\\\":\",\"truncated\":true}\n"
      "not an event\n"
      "{\"v\":1,\"seq\":3,\"type\":\"tool_use\",\"id\":\"u2\",\"tool\":\"lamp_set\","
      "\"tier\":2}\n"
      "{\"v\":1,\"seq\":4,\"type\":\"tool_result\",\"id\":\"u1\",\"tool\":\"big\","
      "\"status\":\"error\",\"summary\":\"no\",\"approval\":null}\n"
      "{\"v\":1,\"seq\":5,\"type\":\"text\",\"delta\":\"again\"}\n";
  assert_int_equal(convo_recover(c, &arena, lines, strlen(lines), T0, collect, &got), -1);
  assert_int_equal(got.n, 1); /* the results were refused (and freed by collect) */
  expect_collected(&got, 0,
                   "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\","
                   "\"id\":\"u1\",\"name\":\"big\",\"input\":{}}]}",
                   T0);
  collected_free(&got);
  turn_arena_fini(&arena);
}

/* Results stored as one message per model call: the next call's first
 * tool_use (or its throttle) ends the open results even when that call adds
 * nothing to the conversation before its own results. */
static void test_convo_recover_a_new_call_ends_the_results(void **state) {
  struct convo *c = *state;
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  struct collected got = {.stop_after = 8};
  static const char lines[] =
      "{\"v\":1,\"seq\":1,\"type\":\"tool_result\",\"id\":\"u1\",\"tool\":\"clock\","
      "\"status\":\"ok\",\"summary\":\"noon\",\"approval\":null}\n"
      "{\"v\":1,\"seq\":2,\"type\":\"throttled\",\"delay_seconds\":1.0}\n"
      "{\"v\":1,\"seq\":3,\"type\":\"tool_result\",\"id\":\"u2\",\"tool\":\"clock\","
      "\"status\":\"ok\",\"summary\":\"one\",\"approval\":null}\n"
      "{\"v\":1,\"seq\":4,\"type\":\"tool_use\",\"id\":\"u3\",\"tool\":\"clock\","
      "\"tier\":0}\n"
      "{\"v\":1,\"seq\":5,\"type\":\"tool_result\",\"id\":\"u3\",\"tool\":\"clock\","
      "\"status\":\"error\",\"summary\":\"no input\",\"approval\":null}\n";
  assert_int_equal(convo_recover(c, &arena, lines, strlen(lines), T0, collect, &got), 0);
  finish_into(c, &got);
  assert_int_equal(got.n, 3);
  for (size_t i = 0; i < 3; i++) {
    static const char *const ids[] = {"u1", "u2", "u3"};
    assert_non_null(strstr(got.m[i].json, "\"role\":\"user\""));
    assert_non_null(strstr(got.m[i].json, ids[i]));
  }
  collected_free(&got);
  turn_arena_fini(&arena);
}

/* A call that had begun when the events stop is told it was stopped and may
 * have run in part: told "not run", the model could make it again. It had begun
 * when it reported progress or its approval was granted; or when the reply was
 * complete (the store kept it, or results followed it) and it is the first call
 * without a result, of tier 0 or 1, and no approval of it was asked: a quiet
 * tool reports nothing while it runs. One that had not begun (its approval still asked,
 * the reply still streaming, or a call after it) gets no result here, and convo_repair's
 * "not run" later. */
static void test_convo_recover_a_call_that_had_begun_may_have_run(void **state) {
  struct convo *c = *state;
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  static const char *const cut_after[] = {
      /* the first call reported progress */
      "{\"v\":1,\"seq\":5,\"type\":\"tool_progress\",\"id\":\"u1\",\"tool\":\"count\","
      "\"message\":\"1 of 9\"}\n",
      /* the first call's approval was granted */
      "{\"v\":1,\"seq\":5,\"type\":\"approval\",\"request\":\"t.a1\",\"tool\":\"count\","
      "\"tier\":2,\"effect\":\"physical\",\"input\":{},\"truncated\":false,"
      "\"expires_at\":null}\n"
      "{\"v\":1,\"seq\":6,\"type\":\"approval_decided\",\"request\":\"t.a1\","
      "\"decision\":\"approved\"}\n",
      /* the first call's approval was still asked */
      "{\"v\":1,\"seq\":5,\"type\":\"approval\",\"request\":\"t.a1\",\"tool\":\"count\","
      "\"tier\":2,\"effect\":\"physical\",\"input\":{},\"truncated\":false,"
      "\"expires_at\":null}\n",
      /* the first call finished; the second, quiet, ran next */
      "{\"v\":1,\"seq\":5,\"type\":\"tool_progress\",\"id\":\"u1\",\"tool\":\"count\","
      "\"message\":\"1 of 9\"}\n"
      "{\"v\":1,\"seq\":6,\"type\":\"tool_result\",\"id\":\"u1\",\"tool\":\"count\","
      "\"status\":\"ok\",\"summary\":\"counted\",\"approval\":null}\n",
      /* nothing after the calls: still streaming, or (kept) the first asked
       * nothing yet: tier 2, it cannot run unasked */
      "",
      /* the same with a first call of tier 0: kept, it ran quietly */
      "",
  };
  /* the call told it was stopped, without and with the reply kept */
  static const char *const told[][2] = {{"u1", "u1"}, {"u1", "u1"}, {NULL, NULL},
                                        {"u2", "u2"}, {NULL, NULL}, {NULL, "u1"}};
  static const char calls[] =
      "{\"v\":1,\"seq\":1,\"type\":\"tool_use\",\"id\":\"u1\",\"tool\":\"count\","
      "\"tier\":2}\n"
      "{\"v\":1,\"seq\":2,\"type\":\"tool_input\",\"id\":\"u1\",\"tool\":\"count\","
      "\"input\":{},\"truncated\":false}\n"
      "{\"v\":1,\"seq\":3,\"type\":\"tool_use\",\"id\":\"u2\",\"tool\":\"count\","
      "\"tier\":0}\n"
      "{\"v\":1,\"seq\":4,\"type\":\"tool_input\",\"id\":\"u2\",\"tool\":\"count\","
      "\"input\":{},\"truncated\":false}\n";
  for (size_t k = 0; k < sizeof told / sizeof told[0]; k++)
    for (int kept = 0; kept < 2; kept++) {
      struct collected got = {.stop_after = 8};
      /* the last case's first call is of tier 0 */
      const char *feed = calls;
      char tier0[sizeof calls];
      if (k == sizeof told / sizeof told[0] - 1) {
        memcpy(tier0, calls, sizeof calls);
        char *t = strstr(tier0, "\"tier\":2");
        assert_non_null(t);
        t[7] = '0';
        feed = tier0;
      }
      assert_int_equal(convo_recover(c, &arena, feed, strlen(feed), T0, collect, &got),
                       0);
      assert_int_equal(
          convo_recover(c, &arena, cut_after[k], strlen(cut_after[k]), T0, collect, &got),
          0);
      convo_recover_finish(c, T0 + 900, kept);
      struct convo_message m;
      while (convo_take(c, &m))
        assert_int_equal(collect(&got, &m), 0);
      /* the reply, then the results message when any result was given */
      char *results = got.n > 1 ? got.m[got.n - 1].json : "";
      const char *stopped = strstr(results, "turnd stopped while it ran");
      const char *want = told[k][kept];
      if (want == NULL) {
        assert_null(stopped);
      } else {
        char id[32];
        snprintf(id, sizeof id, "\"tool_use_id\":\"%s\"", want);
        const char *at = strstr(results, id);
        assert_non_null(stopped);
        assert_non_null(at);
        /* the words are that call's: the next block, if any, starts after them */
        const char *next = strstr(at + 1, "\"tool_use_id\"");
        assert_true(stopped > at && (next == NULL || stopped < next));
      }
      collected_free(&got);
      convo_fini(c);
      convo_init(c);
    }
  turn_arena_fini(&arena);
}

/* Calls' ids have no cap of their own in a rebuild: a provider's id may be long
 * (one SSE event holds up to 1 MiB), and a rebuild that failed on one would
 * keep turnd from starting. */
static void test_convo_recover_takes_long_call_ids(void **state) {
  struct convo *c = *state;
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  size_t id_len = (1u << 20) + 10;
  size_t cap = 2 * id_len + 512;
  char *lines = malloc(cap);
  assert_non_null(lines);
  char *id = malloc(id_len + 1);
  assert_non_null(id);
  memset(id, 'k', id_len);
  id[id_len] = '\0';
  int n = snprintf(
      lines, cap,
      "{\"v\":1,\"seq\":1,\"type\":\"tool_use\",\"id\":\"%s\",\"tool\":\"clock\","
      "\"tier\":0}\n",
      id);
  snprintf(lines + n, cap - (size_t)n,
           "{\"v\":1,\"seq\":2,\"type\":\"tool_input\",\"id\":\"%s\",\"tool\":\"clock\","
           "\"input\":{},\"truncated\":false}\n",
           id);
  struct collected got = {.stop_after = 8};
  assert_int_equal(convo_recover(c, &arena, lines, strlen(lines), T0, collect, &got), 0);
  finish_into(c, &got);
  assert_int_equal(got.n, 1); /* the reply with its call */
  collected_free(&got);
  free(id);
  free(lines);
  turn_arena_fini(&arena);
}

/* A shell takes the front of a long reply as it grows (convo_front) and stores
 * it in parts; the parts and the finished message's rest must add up to the
 * message a convo that gave no part builds, whatever piece came between two
 * takes: a delta cut inside a character, a signature, a call. */
static void take_front(struct convo *c, turn_buf *joined) {
  turn_str front = convo_front(c);
  if (front.len == 0) return;
  assert_int_equal(turn_buf_append(joined, front.p, front.len), TURN_OK);
  convo_front_taken(c);
}

static void test_convo_front_taken_piece_by_piece_adds_up_to_the_message(void **state) {
  struct convo *c = *state;
  turn_buf joined;
  turn_buf_init(&joined, SIZE_MAX, NULL);
  /* Nothing is settled before the first block: a reply that says nothing is
   * dropped whole. */
  convo_text(c, s(""), T0);
  assert_int_equal(convo_front(c).len, 0);
  convo_thinking(c, s("hm \"\\"), T0);
  take_front(c, &joined);
  convo_signature(c, s("SIG"));
  take_front(c, &joined);
  convo_text(c, s("caf\xc3"), T0 + 1);
  take_front(c, &joined);
  convo_text(c, s("\xa9 \xf0\x9d"), T0 + 2);
  take_front(c, &joined);
  convo_text(c, s("\x84\x9e\n"), T0 + 3);
  take_front(c, &joined);
  convo_tool_use(c, "u1", "clock", "{\"tz\":\"UTC\"}", T0 + 4);
  take_front(c, &joined);
  convo_text(c, s("after"), T0 + 5);
  take_front(c, &joined);
  /* The growing block's closing quote is not settled: the next delta lands on it. */
  turn_str front = convo_front(c);
  assert_int_equal(front.len, 0);
  uint64_t parts = c->parts;
  assert_true(parts >= 6);
  convo_finish(c);
  struct convo_message m;
  assert_true(convo_take(c, &m));
  assert_int_equal(m.parts, parts);
  assert_int_equal(m.at_ms, T0);
  assert_int_equal(turn_buf_append(&joined, m.json, strlen(m.json) + 1), TURN_OK);
  free(m.json);
  assert_string_equal(joined.data,
                      "{\"role\":\"assistant\",\"content\":["
                      "{\"type\":\"thinking\",\"thinking\":\"hm \\\"\\\\\","
                      "\"signature\":\"SIG\"},"
                      "{\"type\":\"text\",\"text\":\"caf\xc3\xa9 \xf0\x9d\x84\x9e\\n\"},"
                      "{\"type\":\"tool_use\",\"id\":\"u1\",\"name\":\"clock\","
                      "\"input\":{\"tz\":\"UTC\"}},"
                      "{\"type\":\"text\",\"text\":\"after\"}]}");
  turn_buf_fini(&joined);
  /* The next message starts its own count. */
  convo_text(c, s("next"), T0 + 6);
  convo_finish(c);
  assert_true(convo_take(c, &m));
  assert_int_equal(m.parts, 0);
  free(m.json);
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      TEST(test_convo_user_message),
      TEST(test_convo_text_deltas_become_one_block),
      TEST(test_convo_bug_four_byte_character_cut_after_three),
      TEST(test_convo_reasoning_then_text_are_separate_blocks_in_order),
      TEST(test_convo_signed_thinking_blocks_stay_apart),
      TEST(test_convo_tool_use_carries_its_input_object),
      TEST(test_convo_tool_use_input_not_json_becomes_empty_object),
      TEST(test_convo_tool_results_batch_into_one_user_message),
      TEST(test_convo_message_switch_finishes_the_open_message),
      TEST(test_convo_finish_with_nothing_open_leaves_none),
      TEST(test_convo_bug_empty_delta_leaves_an_empty_text_block),
      TEST(test_convo_at_ms_is_the_time_of_the_first_piece),
      TEST(test_convo_take_is_oldest_first_then_empty),
      TEST(test_convo_queue_full_marks_lost_and_keeps_the_rest),
      TEST(test_convo_fini_frees_open_and_queued),
      TEST(test_convo_front_taken_piece_by_piece_adds_up_to_the_message),
      TEST(test_convo_recover_rebuilds_replies_and_results_from_events),
      TEST(test_convo_recover_partial_calls_errors_and_bad_lines),
      TEST(test_convo_recover_a_new_call_ends_the_results),
      TEST(test_convo_recover_a_call_that_had_begun_may_have_run),
      TEST(test_convo_recover_takes_long_call_ids),
      cmocka_unit_test(test_convo_repair_leaves_a_whole_conversation),
      cmocka_unit_test(test_convo_repair_joins_neighbouring_user_messages),
      cmocka_unit_test(test_convo_repair_answers_calls_left_open),
      cmocka_unit_test(test_convo_repair_drops_blocks_a_provider_refuses),
      cmocka_unit_test(test_convo_repair_drops_a_reply_left_empty),
      cmocka_unit_test(test_convo_repair_gives_silent_results_words),
      cmocka_unit_test(test_convo_repair_gives_calls_an_object_input),
      cmocka_unit_test(test_convo_repair_refuses_what_it_cannot_read),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
