/* The "events" section: one valid line per event type and variant, made by
 * turn_event_encode, hand-written lines another backend may send, and invalid
 * lines each with the code and field it must give. A valid line's "event" is
 * its re-encoding, so every implementation compares against the C encoder. */
#include "vectors.h"

#include <stdint.h>
#include <string.h>

#define S(lit) TURN_STR(lit)

static json_t *valid_events, *invalid_events;

static void add_valid_line(const char *line, size_t len) {
  turn_event ev;
  turn_error err;
  turn_buf out;
  turn_buf_init(&out, SIZE_MAX, NULL);
  turn_arena_reset(&vectors_arena);
  int rv = turn_event_parse(&ev, &vectors_arena, line, len, &err);
  vectors_check(rv == TURN_OK, "valid event line refused", turn_errname(rv));
  if (rv == TURN_OK) {
    rv = turn_event_encode(&ev, &out);
    vectors_check(rv == TURN_OK, "a parsed event cannot be encoded", turn_errname(rv));
  }
  if (rv == TURN_OK) {
    json_t *entry = json_object();
    vectors_put_line(entry, "line", line, len);
    json_object_set_new(entry, "event", vectors_as_json(out.data, out.len));
    json_array_append_new(valid_events, entry);
  }
  turn_buf_fini(&out);
}

static void add_event(const turn_event *ev) {
  turn_buf out;
  turn_buf_init(&out, SIZE_MAX, NULL);
  if (turn_event_encode(ev, &out) != TURN_OK) vectors_die("cannot encode a valid event");
  add_valid_line(out.data, out.len);
  turn_buf_fini(&out);
}

static void add_invalid_line(const char *line, size_t len, int code, const char *field) {
  turn_event ev;
  turn_error err = {0, NULL, 0, 0};
  turn_arena_reset(&vectors_arena);
  int rv = turn_event_parse(&ev, &vectors_arena, line, len, &err);
  vectors_check(rv == code, "invalid event line gives another code", line);
  vectors_check(field == NULL ? err.field == NULL
                              : err.field != NULL && strcmp(err.field, field) == 0,
                "invalid event line blames another field", line);
  json_t *entry = json_object();
  vectors_put_line(entry, "line", line, len);
  json_object_set_new(entry, "error", json_string(turn_errname(code)));
  if (field != NULL) json_object_set_new(entry, "field", json_string(field));
  json_array_append_new(invalid_events, entry);
}

#define INVALID(lit, code, field) \
  add_invalid_line(lit, sizeof(lit) - 1, TURN_##code, field)
#define VALID(lit) add_valid_line(lit, sizeof(lit) - 1)

static void make_events(void) {
  turn_event ev;
  memset(&ev, 0, sizeof ev);

  ev.type = TURN_EV_TURN;
  ev.seq = 0;
  ev.turn.turn = S("t-1");
  ev.turn.session = S("20261001-080000-abcd");
  add_event(&ev);

  ev.type = TURN_EV_TEXT;
  ev.seq = 1;
  ev.text.delta = S("The desk lamp is on.");
  add_event(&ev);
  ev.text.delta =
      S("Ünïcödé, 日本語 and 🙂 stay as they are; \"quotes\", \\, tab\t, "
        "newline\n and \x01 are escaped.");
  add_event(&ev);
  ev.text.delta = S("");
  add_event(&ev);

  ev.type = TURN_EV_REASONING;
  ev.seq = 2;
  ev.text.delta = S("The user wants the lamp on; lamp_set is tier 2.");
  add_event(&ev);

  ev.type = TURN_EV_TOOL_USE;
  ev.seq = 3;
  ev.tool_use.id = S("u1");
  ev.tool_use.tool = S("lamp_set");
  ev.tool_use.tier = 2;
  add_event(&ev);
  for (int tier = TURN_TIER_NULL; tier <= 1; tier++) {
    ev.tool_use.tier = tier;
    add_event(&ev);
  }

  ev.type = TURN_EV_TOOL_INPUT;
  ev.seq = 4;
  ev.tool_input.id = S("u1");
  ev.tool_input.tool = S("lamp_set");
  ev.tool_input.input = vectors_inline_input("{\"name\":\"desk\",\"on\":true}");
  add_event(&ev);
  ev.tool_input.input.truncated = true;
  ev.tool_input.input.json = (turn_str){NULL, 0};
  ev.tool_input.input.preview = S("{\"note\":\"xxxxxxxx");
  add_event(&ev);

  ev.type = TURN_EV_TOOL_PROGRESS;
  ev.seq = 5;
  ev.tool_progress.id = S("u2");
  ev.tool_progress.tool = S("count_slowly");
  ev.tool_progress.message = S("3 of 10");
  add_event(&ev);

  static const turn_status statuses[] = {TURN_STATUS_OK, TURN_STATUS_ERROR,
                                         TURN_STATUS_REJECTED};
  ev.type = TURN_EV_TOOL_RESULT;
  ev.seq = 6;
  ev.tool_result.id = S("u1");
  ev.tool_result.tool = S("lamp_set");
  ev.tool_result.summary = S("desk lamp is on (simulated)");
  for (size_t i = 0; i < 3; i++) {
    ev.tool_result.status = statuses[i];
    ev.tool_result.approval = TURN_APPROVAL_NULL;
    add_event(&ev);
  }
  for (int a = TURN_APPROVAL_APPROVED; a < TURN_APPROVAL__COUNT; a++) {
    ev.tool_result.status = a == TURN_APPROVAL_APPROVED || a == TURN_APPROVAL_EXEMPT
                                ? TURN_STATUS_OK
                                : TURN_STATUS_REJECTED;
    ev.tool_result.approval = (turn_approval)a;
    add_event(&ev);
  }

  ev.type = TURN_EV_APPROVAL;
  ev.seq = 7;
  ev.approval.request = S("a1");
  ev.approval.tool = S("lamp_set");
  ev.approval.tier = 2;
  ev.approval.effect = S("physical");
  ev.approval.input = vectors_inline_input("{\"name\":\"desk\",\"on\":true}");
  ev.approval.has_expires_at = true;
  ev.approval.expires_at_s = 1790841900.0;
  add_event(&ev);
  ev.approval.expires_at_s = 1790841900.25;
  add_event(&ev);
  ev.approval.has_expires_at = false;
  add_event(&ev);

  ev.type = TURN_EV_APPROVAL_DECIDED;
  ev.seq = 8;
  ev.approval_decided.request = S("a1");
  for (int d = 0; d < TURN_DECISION__COUNT; d++) {
    ev.approval_decided.decision = (turn_decision)d;
    add_event(&ev);
  }

  ev.type = TURN_EV_WIDGET;
  ev.seq = 9;
  ev.widget.id = S("u3");
  ev.widget.title = S("Lamps");
  ev.widget.html = S("<ul><li class=\"on\">desk</li></ul>");
  add_event(&ev);

  ev.type = TURN_EV_THROTTLED;
  ev.seq = 10;
  ev.throttled.delay_seconds = 2.5;
  add_event(&ev);
  ev.throttled.delay_seconds = 30;
  add_event(&ev);

  ev.type = TURN_EV_NOTICE;
  ev.seq = 11;
  ev.notice.text = S("The model is not answering; try again in a minute.");
  add_event(&ev);

  ev.type = TURN_EV_GUARD;
  ev.seq = 12;
  ev.guard.action = S("refused");
  ev.guard.request = (turn_str){NULL, 0};
  ev.guard.message = S("The backend is locked.");
  add_event(&ev);
  /* A step-up as turnd streams it: asked, a wrong PIN, the right one. */
  ev.guard.action = S("step_up");
  ev.guard.request = S("a1");
  ev.guard.message = S("Approving this needs your PIN.");
  add_event(&ev);
  ev.guard.action = S("failed");
  ev.guard.message = S("Wrong PIN.");
  add_event(&ev);
  ev.guard.action = S("passed");
  ev.guard.message = (turn_str){NULL, 0};
  add_event(&ev);

  ev.type = TURN_EV_END;
  ev.seq = 13;
  for (int r = 0; r < TURN_STOP__COUNT; r++) {
    ev.end.stop_reason = (turn_stop_reason)r;
    add_event(&ev);
  }

  ev.type = TURN_EV_ERROR;
  ev.seq = 14;
  ev.error.message = S("the store failed");
  add_event(&ev);

  /* Hand-written lines another backend may send: other key order, whitespace,
   * unknown fields, escapes, an integer expires_at, a later version's extras. */
  VALID("{\"type\":\"text\",\"seq\":3,\"v\":1,\"delta\":\"hi\"}");
  VALID(" { \"v\" : 1 , \"seq\" : 3 , \"type\" : \"text\" , \"delta\" : \"hi\" } ");
  VALID("{\"v\":1,\"seq\":3,\"type\":\"text\",\"delta\":\"hi\",\"lang\":\"en\",\"x\":{"
        "\"y\":[1,"
        "null]}}");
  VALID(
      "{\"v\":1,\"seq\":3,\"type\":\"text\",\"delta\":\"\\u00e9\\ud83d\\ude42\\/\\n\"}");
  VALID("{\"v\":1,\"seq\":3,\"type\":\"text\",\"delta\":\"first\",\"delta\":\"last "
        "wins\"}");
  VALID(
      "{\"v\":1,\"seq\":3,\"type\":\"approval\",\"request\":\"a1\",\"tool\":\"lamp_set\","
      "\"tier\":2,\"effect\":\"physical\",\"input\":{\"name\":\"desk\",\"on\":true},"
      "\"truncated\":false,\"expires_at\":1790841900}");
  VALID("{\"v\":1,\"seq\":3,\"type\":\"tool_input\",\"id\":\"u1\",\"tool\":\"t\","
        "\"input\":{"
        "},\"truncated\":false,\"preview\":\"ignored in this form\"}");
  VALID("{\"v\":1,\"seq\":3,\"type\":\"text\",\"delta\":\"x\",\"tier\":\"not a tier: "
        "text has no tier\"}");

  /* Invalid lines, each with the error it must give. */
  INVALID("", E_JSON, NULL);
  INVALID("{\"v\":1,\"seq\":0,\"type\":\"turn\"", E_JSON, NULL);
  INVALID("{\"v\":1,\"seq\":0,\"type\":\"text\",\"delta\":\"a\"} x", E_JSON, NULL);
  INVALID("{'v':1}", E_JSON, NULL);
  INVALID("{\"v\":1,\"seq\":01,\"type\":\"end\",\"stop_reason\":\"end_turn\"}", E_JSON,
          NULL);
  INVALID("{\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":\"raw\ttab\"}", E_JSON, NULL);
  INVALID("{\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":\"\\u0000\"}", E_JSON, NULL);
  INVALID("{\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":\"\\ud800\"}", E_JSON, NULL);
  INVALID("{\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":\"\\x\"}", E_JSON, NULL);
  INVALID("{\"v\":1,\"seq\":99999999999999999999,\"type\":\"text\",\"delta\":\"a\"}",
          E_JSON, NULL);
  INVALID("{\"v\":1,\"seq\":1,\"type\":\"throttled\",\"delay_seconds\":1e400}", E_JSON,
          NULL);
  INVALID("{\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":\"\xff\"}", E_UTF8, NULL);
  INVALID("{\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":\"\xc0\xaf\"}", E_UTF8, NULL);
  INVALID("{\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":\"\xed\xa0\x80\"}", E_UTF8,
          NULL);
  INVALID("[1,2]", E_NOT_OBJECT, NULL);
  INVALID("\"text\"", E_NOT_OBJECT, NULL);
  INVALID("{\"seq\":0,\"type\":\"end\",\"stop_reason\":\"end_turn\"}", E_MISSING, "v");
  INVALID("{\"v\":2,\"seq\":0,\"type\":\"end\",\"stop_reason\":\"end_turn\"}", E_VERSION,
          "v");
  INVALID("{\"v\":\"1\",\"seq\":0,\"type\":\"end\",\"stop_reason\":\"end_turn\"}",
          E_FIELD, "v");
  INVALID("{\"v\":1,\"seq\":0,\"stop_reason\":\"end_turn\"}", E_MISSING, "type");
  INVALID("{\"v\":1,\"seq\":0,\"type\":\"finish\"}", E_TYPE, "type");
  INVALID("{\"v\":1,\"seq\":0,\"type\":7}", E_FIELD, "type");
  INVALID("{\"v\":1,\"type\":\"end\",\"stop_reason\":\"end_turn\"}", E_MISSING, "seq");
  INVALID("{\"v\":1,\"seq\":-1,\"type\":\"end\",\"stop_reason\":\"end_turn\"}", E_VALUE,
          "seq");
  INVALID("{\"v\":1,\"seq\":1.5,\"type\":\"end\",\"stop_reason\":\"end_turn\"}", E_FIELD,
          "seq");
  INVALID("{\"v\":1,\"seq\":0,\"type\":\"turn\",\"turn\":\"t-1\"}", E_MISSING, "session");
  INVALID("{\"v\":1,\"seq\":0,\"type\":\"turn\",\"turn\":\"\",\"session\":\"s\"}",
          E_VALUE, "turn");
  INVALID("{\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":null}", E_FIELD, "delta");
  INVALID(
      "{\"v\":1,\"seq\":1,\"type\":\"tool_use\",\"id\":\"u1\",\"tool\":\"x\",\"tier\":3}",
      E_VALUE, "tier");
  INVALID(
      "{\"v\":1,\"seq\":1,\"type\":\"tool_use\",\"id\":\"u1\",\"tool\":\"x\",\"tier\":2."
      "0}",
      E_FIELD, "tier");
  INVALID("{\"v\":1,\"seq\":1,\"type\":\"tool_use\",\"id\":\"u1\",\"tool\":\"x\"}",
          E_MISSING, "tier");
  INVALID(
      "{\"v\":1,\"seq\":1,\"type\":\"tool_input\",\"id\":\"u1\",\"tool\":\"x\",\"input\":"
      "{}}",
      E_MISSING, "truncated");
  INVALID(
      "{\"v\":1,\"seq\":1,\"type\":\"tool_input\",\"id\":\"u1\",\"tool\":\"x\",\"input\":"
      "[1],\"truncated\":false}",
      E_FIELD, "input");
  INVALID(
      "{\"v\":1,\"seq\":1,\"type\":\"tool_input\",\"id\":\"u1\",\"tool\":\"x\",\"input\":"
      "null,\"truncated\":true}",
      E_MISSING, "preview");
  INVALID(
      "{\"v\":1,\"seq\":1,\"type\":\"tool_input\",\"id\":\"u1\",\"tool\":\"x\",\"input\":"
      "{},\"preview\":\"{}\",\"truncated\":true}",
      E_FIELD, "input");
  INVALID("{\"v\":1,\"seq\":1,\"type\":\"tool_result\",\"id\":\"u1\",\"tool\":\"x\","
          "\"status\":\"maybe\",\"summary\":\"\",\"approval\":null}",
          E_VALUE, "status");
  INVALID("{\"v\":1,\"seq\":1,\"type\":\"tool_result\",\"id\":\"u1\",\"tool\":\"x\","
          "\"status\":\"ok\",\"summary\":\"\"}",
          E_MISSING, "approval");
  INVALID("{\"v\":1,\"seq\":1,\"type\":\"tool_result\",\"id\":\"u1\",\"tool\":\"x\","
          "\"status\":\"ok\",\"summary\":\"\",\"approval\":\"granted\"}",
          E_VALUE, "approval");
  INVALID("{\"v\":1,\"seq\":1,\"type\":\"approval\",\"request\":\"a1\",\"tool\":\"x\","
          "\"tier\":"
          "2,\"effect\":\"physical\",\"input\":{},\"truncated\":false,\"expires_at\":-5}",
          E_VALUE, "expires_at");
  INVALID("{\"v\":1,\"seq\":1,\"type\":\"approval\",\"request\":\"a1\",\"tool\":\"x\","
          "\"tier\":"
          "2,\"effect\":\"physical\",\"input\":{},\"truncated\":false,\"expires_at\":"
          "\"soon\"}",
          E_FIELD, "expires_at");
  INVALID(
      "{\"v\":1,\"seq\":1,\"type\":\"approval_decided\",\"request\":\"a1\",\"decision\":"
      "\"exempt\"}",
      E_VALUE, "decision");
  INVALID("{\"v\":1,\"seq\":1,\"type\":\"throttled\",\"delay_seconds\":null}", E_FIELD,
          "delay_seconds");
  INVALID("{\"v\":1,\"seq\":1,\"type\":\"guard\",\"message\":\"no action\"}", E_MISSING,
          "action");
  INVALID("{\"v\":1,\"seq\":1,\"type\":\"end\",\"stop_reason\":\"done\"}", E_VALUE,
          "stop_reason");
  INVALID("{\"v\":1,\"seq\":1,\"type\":\"error\"}", E_MISSING, "message");
}

void vectors_events(json_t *doc) {
  valid_events = json_array();
  invalid_events = json_array();
  make_events();
  json_object_set_new(
      doc, "events",
      json_pack("{s:o,s:o}", "valid", valid_events, "invalid", invalid_events));
}
