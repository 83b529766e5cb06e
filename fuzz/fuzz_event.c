/* Fuzz target: one event line. Whatever turn_event_parse accepts must encode, and
 * the encoding must be a fixed point: it parses back to an equal event whose
 * encoding is the same bytes. A refused line must leave *ev untouched and give a
 * known error code with an offset inside the line. */
#include "fuzz_support.h"
#include "json_scan.h"
#include "turn/turn.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool str_eq(turn_str a, turn_str b) {
  return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

static bool num_eq(double a, double b) {
  return a == b && signbit(a) == signbit(b);
}

static bool input_eq(const turn_input *a, const turn_input *b) {
  return a->truncated == b->truncated && str_eq(a->json, b->json) &&
         str_eq(a->preview, b->preview);
}

/* Field by field: only the union member that type selects is meaningful. */
static bool event_eq(const turn_event *a, const turn_event *b) {
  if (a->type != b->type || a->seq != b->seq) return false;
  switch (a->type) {
  case TURN_EV_TURN:
    return str_eq(a->turn.turn, b->turn.turn) && str_eq(a->turn.session, b->turn.session);
  case TURN_EV_TEXT:
  case TURN_EV_REASONING:
    return str_eq(a->text.delta, b->text.delta);
  case TURN_EV_TOOL_USE:
    return str_eq(a->tool_use.id, b->tool_use.id) &&
           str_eq(a->tool_use.tool, b->tool_use.tool) &&
           a->tool_use.tier == b->tool_use.tier;
  case TURN_EV_TOOL_INPUT:
    return str_eq(a->tool_input.id, b->tool_input.id) &&
           str_eq(a->tool_input.tool, b->tool_input.tool) &&
           input_eq(&a->tool_input.input, &b->tool_input.input);
  case TURN_EV_TOOL_PROGRESS:
    return str_eq(a->tool_progress.id, b->tool_progress.id) &&
           str_eq(a->tool_progress.tool, b->tool_progress.tool) &&
           str_eq(a->tool_progress.message, b->tool_progress.message);
  case TURN_EV_TOOL_RESULT:
    return str_eq(a->tool_result.id, b->tool_result.id) &&
           str_eq(a->tool_result.tool, b->tool_result.tool) &&
           str_eq(a->tool_result.summary, b->tool_result.summary) &&
           a->tool_result.status == b->tool_result.status &&
           a->tool_result.approval == b->tool_result.approval;
  case TURN_EV_APPROVAL:
    return str_eq(a->approval.request, b->approval.request) &&
           str_eq(a->approval.tool, b->approval.tool) &&
           str_eq(a->approval.effect, b->approval.effect) &&
           a->approval.tier == b->approval.tier &&
           input_eq(&a->approval.input, &b->approval.input) &&
           a->approval.has_expires_at == b->approval.has_expires_at &&
           (!a->approval.has_expires_at ||
            num_eq(a->approval.expires_at_s, b->approval.expires_at_s));
  case TURN_EV_APPROVAL_DECIDED:
    return str_eq(a->approval_decided.request, b->approval_decided.request) &&
           a->approval_decided.decision == b->approval_decided.decision;
  case TURN_EV_WIDGET:
    return str_eq(a->widget.id, b->widget.id) &&
           str_eq(a->widget.title, b->widget.title) &&
           str_eq(a->widget.html, b->widget.html);
  case TURN_EV_THROTTLED:
    return num_eq(a->throttled.delay_seconds, b->throttled.delay_seconds);
  case TURN_EV_NOTICE:
    return str_eq(a->notice.text, b->notice.text);
  case TURN_EV_GUARD:
    return str_eq(a->guard.action, b->guard.action) &&
           str_eq(a->guard.request, b->guard.request) &&
           str_eq(a->guard.message, b->guard.message);
  case TURN_EV_END:
    return a->end.stop_reason == b->end.stop_reason;
  case TURN_EV_ERROR:
    return str_eq(a->error.message, b->error.message);
  case TURN_EV__COUNT:
    break;
  }
  return false;
}

/* An error as the API promises it: a known negative code, err->code the same,
 * the offset inside the input, and a message that formats within its buffer. */
static void check_error(int rv, const turn_error *err, size_t size) {
  CHECK(rv < 0 && rv > TURN_E_NOMEM);
  CHECK(strcmp(turn_errname(rv), "E_UNKNOWN") != 0);
  CHECK(err->code == rv);
  CHECK(err->offset <= size);
  char msg[64];
  size_t want = turn_error_format(err, msg, sizeof msg);
  CHECK(strlen(msg) == (want < sizeof msg ? want : sizeof msg - 1));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *line = (const char *)data;
  turn_arena arena, arena2;
  turn_arena_init(&arena, NULL);
  turn_arena_init(&arena2, NULL);
  turn_buf out, out2;
  turn_buf_init(&out, SIZE_MAX, NULL);
  turn_buf_init(&out2, SIZE_MAX, NULL);

  turn_event ev, untouched;
  memset(&ev, 0xA5, sizeof ev);
  memcpy(&untouched, &ev, sizeof ev);
  turn_error err = {0, NULL, 0, 0};
  int rv = turn_event_parse(&ev, &arena, line, size, &err);
  if (rv != TURN_OK) {
    check_error(rv, &err, size);
    CHECK(memcmp(&ev, &untouched, sizeof ev) == 0);
    /* Without err the result is the same. */
    CHECK(turn_event_parse(&ev, &arena, line, size, NULL) == rv);
    goto done;
  }

  /* Accepted: the line is valid JSON, and the event encodes, to valid JSON, ... */
  CHECK(turn__json_validate(line, size, &arena2) == TURN_OK);
  CHECK(turn_event_encode(&ev, &out) == TURN_OK);
  CHECK(turn__json_validate(out.data, out.len, &arena2) == TURN_OK);

  /* ... that parses back to the same event and encodes to the same bytes. */
  turn_event ev2;
  CHECK(turn_event_parse(&ev2, &arena2, out.data, out.len, &err) == TURN_OK);
  CHECK(event_eq(&ev, &ev2));
  CHECK(turn_event_encode(&ev2, &out2) == TURN_OK);
  CHECK(out2.len == out.len && memcmp(out.data, out2.data, out.len) == 0);

  /* One byte short of room: TURN_E_TOOBIG and the buffer as it was. */
  turn_buf small;
  turn_buf_init(&small, out.len, NULL);
  CHECK(turn_buf_append(&small, "[", 1) == TURN_OK);
  CHECK(turn_event_encode(&ev, &small) == TURN_E_TOOBIG);
  CHECK(small.len == 1 && small.data[0] == '[');
  turn_buf_fini(&small);

done:
  turn_buf_fini(&out);
  turn_buf_fini(&out2);
  turn_arena_fini(&arena);
  turn_arena_fini(&arena2);
  return 0;
}
