/* Fuzz target: the JSON scanner against jansson, the oracle it promises to match.
 * turn__json_validate accepts exactly what json_loadb(JSON_DECODE_ANY) accepts;
 * the event and block parsers call a line "not JSON" exactly when jansson does;
 * and for an accepted event or block every field has the value jansson reads
 * (strings byte-equal, numbers equal, input objects json_equal); so does the
 * compact form that turn_input_from_json makes of an object. The one place where
 * jansson is not the oracle is a NUL byte, see below. */
#include "fuzz_support.h"
#include "json_scan.h"
#include "turn/turn.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A member's value; NULL when absent. */
static json_t *member(json_t *obj, const char *key) {
  return json_object_get(obj, key);
}

static void check_str(json_t *obj, const char *key, turn_str s) {
  json_t *v = member(obj, key);
  CHECK(json_is_string(v));
  CHECK(json_string_length(v) == s.len);
  CHECK(s.len == 0 || memcmp(json_string_value(v), s.p, s.len) == 0);
}

/* OPT_STR: a string, or null or absent, which read as empty. */
static void check_opt_str(json_t *obj, const char *key, turn_str s) {
  json_t *v = member(obj, key);
  if (v == NULL || json_is_null(v))
    CHECK(s.len == 0);
  else
    check_str(obj, key, s);
}

static void check_null(json_t *obj, const char *key) {
  CHECK(json_is_null(member(obj, key)));
}

static void check_int(json_t *obj, const char *key, json_int_t want) {
  json_t *v = member(obj, key);
  CHECK(json_is_integer(v) && json_integer_value(v) == want);
}

static void check_tier(json_t *obj, const char *key, int tier) {
  if (tier == TURN_TIER_NULL)
    check_null(obj, key);
  else
    check_int(obj, key, tier);
}

/* An enumeration: name is the wire name, NULL for the null value. */
static void check_name(json_t *obj, const char *key, const char *name) {
  if (name == NULL) {
    check_null(obj, key);
    return;
  }
  json_t *v = member(obj, key);
  CHECK(json_is_string(v) && strcmp(json_string_value(v), name) == 0 &&
        json_string_length(v) == strlen(name));
}

static void check_number(json_t *obj, const char *key, double d) {
  json_t *v = member(obj, key);
  CHECK(json_is_number(v) && json_number_value(v) == d);
}

static void check_input(json_t *obj, const turn_input *in) {
  CHECK(json_is_boolean(member(obj, "truncated")));
  CHECK(json_is_true(member(obj, "truncated")) == in->truncated);
  if (in->truncated) {
    check_null(obj, "input");
    check_str(obj, "preview", in->preview);
  } else if (in->json.len == 0) {
    check_null(obj, "input"); /* a history's unknown input */
  } else {
    json_error_t e;
    json_t *ours = json_loadb(in->json.p, in->json.len, 0, &e);
    CHECK(ours != NULL && json_is_object(member(obj, "input")));
    CHECK(json_equal(ours, member(obj, "input")));
    json_decref(ours);
  }
}

static void check_event(json_t *obj, const turn_event *ev) {
  CHECK(json_is_object(obj));
  check_int(obj, "v", 1);
  json_t *seq = member(obj, "seq");
  CHECK(json_is_integer(seq) && json_integer_value(seq) >= 0 &&
        (uint64_t)json_integer_value(seq) == ev->seq);
  check_name(obj, "type", turn_event_type_name(ev->type));
  switch (ev->type) {
  case TURN_EV_TURN:
    check_str(obj, "turn", ev->turn.turn);
    check_str(obj, "session", ev->turn.session);
    break;
  case TURN_EV_TEXT:
  case TURN_EV_REASONING:
    check_str(obj, "delta", ev->text.delta);
    break;
  case TURN_EV_TOOL_USE:
    check_str(obj, "id", ev->tool_use.id);
    check_str(obj, "tool", ev->tool_use.tool);
    check_tier(obj, "tier", ev->tool_use.tier);
    break;
  case TURN_EV_TOOL_INPUT:
    check_str(obj, "id", ev->tool_input.id);
    check_str(obj, "tool", ev->tool_input.tool);
    check_input(obj, &ev->tool_input.input);
    break;
  case TURN_EV_TOOL_PROGRESS:
    check_str(obj, "id", ev->tool_progress.id);
    check_str(obj, "tool", ev->tool_progress.tool);
    check_str(obj, "message", ev->tool_progress.message);
    break;
  case TURN_EV_TOOL_RESULT:
    check_str(obj, "id", ev->tool_result.id);
    check_str(obj, "tool", ev->tool_result.tool);
    check_name(obj, "status", turn_status_name(ev->tool_result.status));
    CHECK(ev->tool_result.status != TURN_STATUS_NULL);
    check_str(obj, "summary", ev->tool_result.summary);
    check_name(obj, "approval", turn_approval_name(ev->tool_result.approval));
    break;
  case TURN_EV_APPROVAL:
    check_str(obj, "request", ev->approval.request);
    check_str(obj, "tool", ev->approval.tool);
    check_tier(obj, "tier", ev->approval.tier);
    check_str(obj, "effect", ev->approval.effect);
    check_input(obj, &ev->approval.input);
    CHECK(!(ev->approval.input.json.len == 0 && !ev->approval.input.truncated));
    if (ev->approval.has_expires_at)
      check_number(obj, "expires_at", ev->approval.expires_at_s);
    else
      check_null(obj, "expires_at");
    break;
  case TURN_EV_APPROVAL_DECIDED:
    check_str(obj, "request", ev->approval_decided.request);
    check_name(obj, "decision", turn_decision_name(ev->approval_decided.decision));
    break;
  case TURN_EV_WIDGET:
    check_str(obj, "id", ev->widget.id);
    check_str(obj, "title", ev->widget.title);
    check_str(obj, "html", ev->widget.html);
    break;
  case TURN_EV_THROTTLED:
    check_number(obj, "delay_seconds", ev->throttled.delay_seconds);
    break;
  case TURN_EV_NOTICE:
    check_str(obj, "text", ev->notice.text);
    break;
  case TURN_EV_GUARD:
    check_str(obj, "action", ev->guard.action);
    check_opt_str(obj, "request", ev->guard.request);
    check_opt_str(obj, "message", ev->guard.message);
    break;
  case TURN_EV_END:
    check_name(obj, "stop_reason", turn_stop_reason_name(ev->end.stop_reason));
    break;
  case TURN_EV_ERROR:
    check_str(obj, "message", ev->error.message);
    break;
  case TURN_EV__COUNT:
    CHECK(false);
  }
}

static void check_block(json_t *obj, const turn_block *b) {
  CHECK(json_is_object(obj));
  check_name(obj, "type", turn_block_type_name(b->type));
  if (b->at.len == 0)
    check_null(obj, "at");
  else
    check_str(obj, "at", b->at);
  switch (b->type) {
  case TURN_BLOCK_USER:
  case TURN_BLOCK_ASSISTANT:
  case TURN_BLOCK_REASONING:
  case TURN_BLOCK_NOTICE:
    check_str(obj, "text", b->text.text);
    break;
  case TURN_BLOCK_TOOL:
    check_str(obj, "id", b->tool.id);
    check_str(obj, "tool", b->tool.tool);
    check_tier(obj, "tier", b->tool.tier);
    check_input(obj, &b->tool.input);
    check_name(obj, "status", turn_status_name(b->tool.status));
    if (b->tool.has_summary)
      check_str(obj, "summary", b->tool.summary);
    else
      check_null(obj, "summary");
    check_name(obj, "approval", turn_approval_name(b->tool.approval));
    if (b->tool.has_duration_ms)
      check_int(obj, "duration_ms", b->tool.duration_ms);
    else
      check_null(obj, "duration_ms");
    break;
  case TURN_BLOCK_WIDGET:
    check_str(obj, "id", b->widget.id);
    check_str(obj, "title", b->widget.title);
    check_str(obj, "html", b->widget.html);
    break;
  case TURN_BLOCK__COUNT:
    CHECK(false);
  }
}

/* An input field made from the text: its compact form holds the same object as
 * jansson reads, and compacting it again changes nothing. */
static void check_compact(json_t *root, const turn_input *in, turn_arena *arena) {
  CHECK(json_is_object(root));
  if (in->truncated) {
    CHECK(in->json.len == 0 && in->preview.len > 0);
    return;
  }
  json_error_t e;
  json_t *compact = json_loadb(in->json.p, in->json.len, 0, &e);
  CHECK(compact != NULL && json_equal(compact, root));
  json_decref(compact);
  turn_input again;
  CHECK(turn_input_from_json(&again, arena, in->json.p, in->json.len, NULL) == TURN_OK);
  CHECK(!again.truncated && again.json.len == in->json.len &&
        memcmp(again.json.p, in->json.p, in->json.len) == 0);
}

/* The JSON-level outcome of a parse agrees with jansson's: "not JSON" exactly when
 * jansson refuses the text, "not an object" exactly when it reads a non-object. */
static void check_json_code(int rv, json_t *root) {
  bool not_json = rv == TURN_E_JSON || rv == TURN_E_UTF8;
  CHECK(not_json == (root == NULL));
  CHECK((rv == TURN_E_NOT_OBJECT) == (root != NULL && !json_is_object(root)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  turn_arena arena;
  turn_arena_init(&arena, NULL);

  json_error_t jerr;
  json_t *root = json_loadb(text, size, JSON_DECODE_ANY, &jerr);
  /* Oracle quirk: jansson 2.14 skips one NUL byte right after a number or a
   * literal ("97\0", "[1\0]", "{\"a\":null\0}" load). A NUL is never valid
   * JSON (not whitespace outside strings, a raw control character inside), so
   * for text holding one the oracle is RFC 8259 itself: refused. */
  if (root != NULL && memchr(text, '\0', size) != NULL) {
    json_decref(root);
    root = NULL;
  }
  int rv = turn__json_validate(text, size, &arena);
  CHECK(rv == TURN_OK || rv == TURN_E_JSON || rv == TURN_E_UTF8);
  CHECK((rv == TURN_OK) == (root != NULL));

  turn_event ev;
  rv = turn_event_parse(&ev, &arena, text, size, NULL);
  check_json_code(rv, root);
  if (rv == TURN_OK) check_event(root, &ev);
  turn_arena_reset(&arena);

  turn_block b;
  rv = turn_block_parse(&b, &arena, text, size, NULL);
  check_json_code(rv, root);
  if (rv == TURN_OK) check_block(root, &b);
  turn_arena_reset(&arena);

  turn_input in;
  rv = turn_input_from_json(&in, &arena, text, size, NULL);
  check_json_code(rv, root);
  if (rv == TURN_OK) check_compact(root, &in, &arena);

  json_decref(root);
  turn_arena_fini(&arena);
  return 0;
}
