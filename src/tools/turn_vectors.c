/* turn-vectors: writes vectors/vectors.json, the shared test vectors of the turn
 * protocol, from the C encoder. Every valid line is made by turn_event_encode (or
 * is a hand-written variant that must parse), every invalid line must give the
 * error written next to it, and every stream must get the checker's verdict;
 * if any does not, this program fails instead of writing a wrong contract. */
#include "turn/turn.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static turn_arena arena;
static int failures;

#define S(lit) TURN_STR(lit)

static void die(const char *what) {
  fprintf(stderr, "turn-vectors: %s\n", what);
  exit(1);
}

static void check(bool ok, const char *what, const char *detail) {
  if (!ok) {
    fprintf(stderr, "turn-vectors: %s: %s\n", what, detail);
    failures++;
  }
}

static bool utf8_ok(const char *s, size_t len) {
  json_t *probe = json_stringn(s, len);
  bool ok = probe != NULL;
  json_decref(probe);
  return ok;
}

/* A line goes in as "line" when it is valid UTF-8, else as "line_hex". */
static void put_line(json_t *obj, const char *key, const char *line, size_t len) {
  if (utf8_ok(line, len)) {
    json_object_set_new(obj, key, json_stringn(line, len));
    return;
  }
  char *hex = malloc(len * 2 + 1);
  if (hex == NULL) die("out of memory");
  for (size_t i = 0; i < len; i++)
    snprintf(hex + 2 * i, 3, "%02x", (unsigned char)line[i]);
  char hex_key[32];
  snprintf(hex_key, sizeof hex_key, "%s_hex", key);
  json_object_set_new(obj, hex_key, json_stringn(hex, len * 2));
  free(hex);
}

/* The canonical JSON value of what a line parses to: its re-encoding, parsed. */
static json_t *as_json(const char *text, size_t len) {
  json_error_t e;
  json_t *j = json_loadb(text, len, 0, &e);
  if (j == NULL) die("encoder wrote text that jansson refuses");
  return j;
}

/* ------------------------------------------------------------------ events */

static json_t *valid_events, *invalid_events;

static void add_valid_line(const char *line, size_t len) {
  turn_event ev;
  turn_error err;
  turn_buf out;
  turn_buf_init(&out, SIZE_MAX, NULL);
  turn_arena_reset(&arena);
  int rv = turn_event_parse(&ev, &arena, line, len, &err);
  check(rv == TURN_OK, "valid event line refused", turn_errname(rv));
  if (rv == TURN_OK) {
    rv = turn_event_encode(&ev, &out);
    check(rv == TURN_OK, "a parsed event cannot be encoded", turn_errname(rv));
  }
  if (rv == TURN_OK) {
    json_t *entry = json_object();
    put_line(entry, "line", line, len);
    json_object_set_new(entry, "event", as_json(out.data, out.len));
    json_array_append_new(valid_events, entry);
  }
  turn_buf_fini(&out);
}

static void add_event(const turn_event *ev) {
  turn_buf out;
  turn_buf_init(&out, SIZE_MAX, NULL);
  if (turn_event_encode(ev, &out) != TURN_OK) die("cannot encode a valid event");
  add_valid_line(out.data, out.len);
  turn_buf_fini(&out);
}

static void add_invalid_line(const char *line, size_t len, int code, const char *field) {
  turn_event ev;
  turn_error err = {0, NULL, 0, 0};
  turn_arena_reset(&arena);
  int rv = turn_event_parse(&ev, &arena, line, len, &err);
  check(rv == code, "invalid event line gives another code", line);
  check(field == NULL ? err.field == NULL
                      : err.field != NULL && strcmp(err.field, field) == 0,
        "invalid event line blames another field", line);
  json_t *entry = json_object();
  put_line(entry, "line", line, len);
  json_object_set_new(entry, "error", json_string(turn_errname(code)));
  if (field != NULL) json_object_set_new(entry, "field", json_string(field));
  json_array_append_new(invalid_events, entry);
}

#define INVALID(lit, code, field) \
  add_invalid_line(lit, sizeof(lit) - 1, TURN_##code, field)
#define VALID(lit) add_valid_line(lit, sizeof(lit) - 1)

static turn_input inline_input(const char *json) {
  turn_input in = {turn_str_c(json), {NULL, 0}, false};
  return in;
}

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
  ev.tool_input.input = inline_input("{\"name\":\"desk\",\"on\":true}");
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
  ev.approval.input = inline_input("{\"name\":\"desk\",\"on\":true}");
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
  ev.guard.action = S("step_up");
  ev.guard.request = S("a1");
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

/* ------------------------------------------------------------------ blocks */

static json_t *valid_blocks, *invalid_blocks;

static void add_valid_block_text(const char *text, size_t len) {
  turn_block b;
  turn_error err;
  turn_buf out;
  turn_buf_init(&out, SIZE_MAX, NULL);
  turn_arena_reset(&arena);
  int rv = turn_block_parse(&b, &arena, text, len, &err);
  check(rv == TURN_OK, "valid block refused", turn_errname(rv));
  if (rv == TURN_OK) {
    rv = turn_block_encode(&b, &out);
    check(rv == TURN_OK, "a parsed block cannot be encoded", turn_errname(rv));
  }
  if (rv == TURN_OK) {
    json_t *entry = json_object();
    put_line(entry, "line", text, len);
    json_object_set_new(entry, "block", as_json(out.data, out.len));
    json_array_append_new(valid_blocks, entry);
  }
  turn_buf_fini(&out);
}

static void add_block(const turn_block *b) {
  turn_buf out;
  turn_buf_init(&out, SIZE_MAX, NULL);
  if (turn_block_encode(b, &out) != TURN_OK) die("cannot encode a valid block");
  add_valid_block_text(out.data, out.len);
  turn_buf_fini(&out);
}

static void add_invalid_block(const char *text, size_t len, int code, const char *field) {
  turn_block b;
  turn_error err = {0, NULL, 0, 0};
  turn_arena_reset(&arena);
  int rv = turn_block_parse(&b, &arena, text, len, &err);
  check(rv == code, "invalid block gives another code", text);
  check(field == NULL ? err.field == NULL
                      : err.field != NULL && strcmp(err.field, field) == 0,
        "invalid block blames another field", text);
  json_t *entry = json_object();
  put_line(entry, "line", text, len);
  json_object_set_new(entry, "error", json_string(turn_errname(code)));
  if (field != NULL) json_object_set_new(entry, "field", json_string(field));
  json_array_append_new(invalid_blocks, entry);
}

#define INVALID_BLOCK(lit, code, field) \
  add_invalid_block(lit, sizeof(lit) - 1, TURN_##code, field)

static void make_blocks(void) {
  turn_block b;
  memset(&b, 0, sizeof b);
  b.at = S("2026-10-01T08:00:00Z");
  b.type = TURN_BLOCK_USER;
  b.text.text = S("Turn on the desk lamp, please.");
  add_block(&b);
  b.type = TURN_BLOCK_REASONING;
  b.text.text = S("lamp_set is tier 2: ask the owner.");
  add_block(&b);
  b.type = TURN_BLOCK_ASSISTANT;
  b.at = S("2026-10-01T08:00:03.125+02:00");
  b.text.text = S("The **desk lamp** is on.");
  add_block(&b);
  b.type = TURN_BLOCK_NOTICE;
  b.at = (turn_str){NULL, 0};
  b.text.text = S("The model is not answering.");
  add_block(&b);

  b.type = TURN_BLOCK_TOOL;
  b.at = S("2026-10-01T08:00:02Z");
  b.tool.id = S("u1");
  b.tool.tool = S("lamp_set");
  b.tool.tier = 2;
  b.tool.input = inline_input("{\"name\":\"desk\",\"on\":true}");
  b.tool.status = TURN_STATUS_OK;
  b.tool.has_summary = true;
  b.tool.summary = S("desk lamp is on (simulated)");
  b.tool.approval = TURN_APPROVAL_APPROVED;
  b.tool.has_duration_ms = true;
  b.tool.duration_ms = 1520;
  add_block(&b);
  /* An orphaned result: the call is not in the history, so almost nothing is known. */
  b.tool.id = S("u9");
  b.tool.tool = S("?");
  b.tool.tier = TURN_TIER_NULL;
  b.tool.input = (turn_input){{NULL, 0}, {NULL, 0}, false};
  b.tool.status = TURN_STATUS_NULL;
  b.tool.has_summary = false;
  b.tool.approval = TURN_APPROVAL_NULL;
  b.tool.has_duration_ms = false;
  b.at = (turn_str){NULL, 0};
  add_block(&b);
  b.tool.id = S("u2");
  b.tool.tool = S("big_tool");
  b.tool.tier = 0;
  b.tool.input = (turn_input){{NULL, 0}, S("{\"data\":\"aaaa"), true};
  b.tool.status = TURN_STATUS_ERROR;
  b.tool.has_summary = true;
  b.tool.summary = S("failed");
  add_block(&b);

  b.type = TURN_BLOCK_WIDGET;
  b.at = S("2026-10-01T08:00:04Z");
  b.widget.id = S("u3");
  b.widget.title = S("Lamps");
  b.widget.html = S("<p>desk: on</p>");
  add_block(&b);

  add_valid_block_text("{\"at\":null,\"text\":\"hi\",\"type\":\"user\",\"extra\":1}", 47);

  INVALID_BLOCK("{\"type\":\"user\",\"at\":null}", E_MISSING, "text");
  INVALID_BLOCK("{\"type\":\"user\",\"text\":\"hi\"}", E_MISSING, "at");
  INVALID_BLOCK("{\"type\":\"user\",\"text\":\"hi\",\"at\":\"yesterday\"}", E_VALUE,
                "at");
  INVALID_BLOCK("{\"type\":\"user\",\"text\":\"hi\",\"at\":\"2026-02-29T08:00:00Z\"}",
                E_VALUE, "at");
  INVALID_BLOCK("{\"type\":\"user\",\"text\":\"hi\",\"at\":20261001}", E_FIELD, "at");
  INVALID_BLOCK("{\"type\":\"system\",\"text\":\"hi\",\"at\":null}", E_TYPE, "type");
  INVALID_BLOCK("{\"text\":\"hi\",\"at\":null}", E_MISSING, "type");
  INVALID_BLOCK("[{\"type\":\"user\"}]", E_NOT_OBJECT, NULL);
  INVALID_BLOCK("{\"type\":\"user\",\"text\":\"hi\",\"at\":null", E_JSON, NULL);
  INVALID_BLOCK(
      "{\"type\":\"tool\",\"id\":\"u1\",\"tool\":\"x\",\"tier\":3,\"input\":{},"
      "\"truncated\":false,\"status\":\"ok\",\"summary\":\"\",\"approval\":null,"
      "\"duration_ms\":1,\"at\":null}",
      E_VALUE, "tier");
  INVALID_BLOCK(
      "{\"type\":\"tool\",\"id\":\"u1\",\"tool\":\"x\",\"tier\":0,\"input\":{},"
      "\"truncated\":false,\"status\":\"done\",\"summary\":\"\",\"approval\":null,"
      "\"duration_ms\":1,\"at\":null}",
      E_VALUE, "status");
  INVALID_BLOCK(
      "{\"type\":\"tool\",\"id\":\"u1\",\"tool\":\"x\",\"tier\":0,\"input\":{},"
      "\"truncated\":false,\"status\":\"ok\",\"summary\":\"\",\"approval\":null,"
      "\"duration_ms\":-1,\"at\":null}",
      E_VALUE, "duration_ms");
  INVALID_BLOCK(
      "{\"type\":\"tool\",\"id\":\"u1\",\"tool\":\"x\",\"tier\":0,\"input\":{},"
      "\"truncated\":false,\"status\":\"ok\",\"summary\":\"\",\"approval\":null,"
      "\"at\":null}",
      E_MISSING, "duration_ms");
  INVALID_BLOCK("{\"type\":\"widget\",\"id\":\"u3\",\"title\":\"t\",\"at\":null}",
                E_MISSING, "html");
}

/* ------------------------------------------------------------------ inputs */

static json_t *inputs;

static void add_input(const char *json, size_t len, const char *note) {
  turn_input in;
  turn_error err;
  turn_arena_reset(&arena);
  if (turn_input_from_json(&in, &arena, json, len, &err) != TURN_OK)
    die("input case does not parse");
  json_t *field = json_object();
  if (in.truncated) {
    json_object_set_new(field, "input", json_null());
    json_object_set_new(field, "preview", json_stringn(in.preview.p, in.preview.len));
  } else {
    json_object_set_new(field, "input", as_json(in.json.p, in.json.len));
  }
  json_object_set_new(field, "truncated", json_boolean(in.truncated));
  json_t *entry = json_object();
  json_object_set_new(entry, "note", json_string(note));
  json_object_set_new(entry, "input_json", json_stringn(json, len));
  if (!in.truncated)
    json_object_set_new(entry, "compact", json_stringn(in.json.p, in.json.len));
  json_object_set_new(entry, "field", field);
  json_array_append_new(inputs, entry);
}

/* {"s":"<ascii 'a' x n_ascii><unit x n_units>"}. */
static void add_filled_input(size_t n_ascii, const char *unit, size_t n_units,
                             const char *note) {
  size_t ulen = strlen(unit);
  char *buf = malloc(n_ascii + ulen * n_units + 16);
  if (buf == NULL) die("out of memory");
  size_t n = 0;
  memcpy(buf, "{\"s\":\"", 6);
  n = 6;
  memset(buf + n, 'a', n_ascii);
  n += n_ascii;
  for (size_t i = 0; i < n_units; i++, n += ulen)
    memcpy(buf + n, unit, ulen);
  memcpy(buf + n, "\"}", 2);
  n += 2;
  add_input(buf, n, note);
  free(buf);
}

static void make_inputs(void) {
  static const char small[] = "{\"name\":\"desk\",\"on\":true}";
  add_input(small, sizeof small - 1, "small object, already compact");
  static const char spaced[] =
      " {\n  \"name\" : \"desk\" ,\n  \"on\" : true,\n  \"levels\": "
      "[ 1, 2.5, -3e2 ], \"meta\": { } }\n";
  add_input(spaced, sizeof spaced - 1, "whitespace outside strings is dropped");
  static const char escapes[] =
      "{\"a\":\"\\u0041\\/\\u00e9\\ud83d\\ude42\",\"b\":\"tab\\t "
      "nl\\n ctl\\u0001 q\\\" bs\\\\\"}";
  add_input(escapes, sizeof escapes - 1, "strings are re-escaped canonically");
  /* {"s":"..."} has 8 bytes around the fill. */
  add_filled_input(TURN_INPUT_LIMIT - 9, "", 0, "one byte below the limit: inline");
  add_filled_input(TURN_INPUT_LIMIT - 8, "", 0, "exactly at the limit: inline");
  add_filled_input(TURN_INPUT_LIMIT - 7, "", 0, "one byte above the limit: preview");
  /* The cut at code point 8192 falls inside a run of multi-byte characters: the
   * preview ends with a whole character, 8192 code points in all. */
  add_filled_input(TURN_INPUT_LIMIT - 9, "\xc3\xa9", 20, "2-byte characters at the cut");
  add_filled_input(TURN_INPUT_LIMIT - 9, "\xe6\x97\xa5", 20,
                   "3-byte characters at the cut");
  add_filled_input(TURN_INPUT_LIMIT - 9, "\xf0\x9f\x99\x82", 20,
                   "4-byte characters at the cut");
  add_filled_input(TURN_INPUT_LIMIT - 20, "\xc3\xa9", 10,
                   "2-byte characters pass the byte limit: preview");
  add_filled_input(
      0, "\xe6\x97\xa5", 3000,
      "over 8192 bytes but under 8192 code points: the preview is all of it");
}

/* ----------------------------------------------------------------- streams */

static json_t *valid_streams, *invalid_streams;

struct verdict {
  turn_order *order;
  turn_reader *reader;
  int code;      /* first problem */
  uint64_t line; /* its line */
};

static int on_event(void *ctx, const turn_event *ev, const turn_error *err) {
  struct verdict *v = ctx;
  int code = TURN_OK;
  turn_error order_err;
  if (err != NULL)
    code = err->code;
  else
    code = turn_order_step(v->order, ev, &order_err);
  if (code != TURN_OK && v->code == TURN_OK) {
    v->code = code;
    v->line = turn_reader_line(v->reader);
  }
  return 0;
}

static struct verdict judge(const char *const *lines, size_t n) {
  struct verdict v = {turn_order_new(NULL), turn_reader_new(1 << 20, NULL), TURN_OK, 0};
  if (v.order == NULL || v.reader == NULL) die("out of memory");
  for (size_t i = 0; i < n; i++) {
    turn_reader_feed(v.reader, lines[i], strlen(lines[i]), on_event, &v);
    turn_reader_feed(v.reader, "\n", 1, on_event, &v);
  }
  turn_reader_finish(v.reader, on_event, &v);
  turn_error err;
  int rv = turn_order_finish(v.order, &err);
  if (rv != TURN_OK && v.code == TURN_OK) {
    v.code = rv;
    v.line = n;
  }
  turn_order_free(v.order);
  turn_reader_free(v.reader);
  return v;
}

static void add_stream(const char *name, const char *const *lines, size_t n, int code,
                       uint64_t line) {
  struct verdict v = judge(lines, n);
  check(v.code == code && v.line == line, "stream verdict differs", name);
  json_t *entry = json_object();
  json_object_set_new(entry, "name", json_string(name));
  json_t *arr = json_array();
  for (size_t i = 0; i < n; i++) {
    json_t *text = json_string(lines[i]);
    if (text == NULL) die("a stream line is not valid UTF-8");
    json_array_append_new(arr, text);
  }
  json_object_set_new(entry, "lines", arr);
  if (code != TURN_OK) {
    json_object_set_new(entry, "error", json_string(turn_errname(code)));
    json_object_set_new(entry, "line", json_integer((json_int_t)line));
  }
  json_array_append_new(code == TURN_OK ? valid_streams : invalid_streams, entry);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define STREAM_OK(name, ...)                           \
  do {                                                 \
    static const char *const lines_[] = {__VA_ARGS__}; \
    add_stream(name, lines_, N(lines_), TURN_OK, 0);   \
  } while (0)
#define STREAM_BAD(name, code, line, ...)                   \
  do {                                                      \
    static const char *const lines_[] = {__VA_ARGS__};      \
    add_stream(name, lines_, N(lines_), TURN_##code, line); \
  } while (0)

#define L_TURN \
  "{\"v\":1,\"seq\":0,\"type\":\"turn\",\"turn\":\"t-1\",\"session\":\"s-1\"}"
#define L_TEXT(seq) "{\"v\":1,\"seq\":" #seq ",\"type\":\"text\",\"delta\":\"ok\"}"
#define L_END(seq, why) \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"end\",\"stop_reason\":\"" why "\"}"
#define L_USE(seq, id, tool, tier)                                                     \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"tool_use\",\"id\":\"" id "\",\"tool\":\"" tool \
  "\",\"tier\":" #tier "}"
#define L_INPUT(seq, id, tool)                                                           \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"tool_input\",\"id\":\"" id "\",\"tool\":\"" tool \
  "\",\"input\":{},\"truncated\":false}"
#define L_PROGRESS(seq, id, tool)                                     \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"tool_progress\",\"id\":\"" id \
  "\",\"tool\":\"" tool "\",\"message\":\"step\"}"
#define L_RESULT(seq, id, tool, status, approval)                   \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"tool_result\",\"id\":\"" id \
  "\",\"tool\":\"" tool "\",\"status\":\"" status                   \
  "\",\"summary\":\"done\",\"approval\":" approval "}"
#define L_APPROVAL(seq, req, tool)                                          \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"approval\",\"request\":\"" req      \
  "\",\"tool\":\"" tool                                                     \
  "\",\"tier\":2,\"effect\":\"physical\",\"input\":{},\"truncated\":false," \
  "\"expires_at\":1790841900.0}"
#define L_DECIDED(seq, req, decision)                                          \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"approval_decided\",\"request\":\"" req \
  "\",\"decision\":\"" decision "\"}"
#define L_GUARD(seq, action) \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"guard\",\"action\":\"" action "\"}"
#define L_WIDGET(seq, id)                                      \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"widget\",\"id\":\"" id \
  "\",\"title\":\"Lamps\",\"html\":\"<p>on</p>\"}"

static void make_streams(void) {
  STREAM_OK(
      "the spec's example",
      "{\"v\":1,\"seq\":0,\"type\":\"turn\",\"turn\":\"t-1\",\"session\":\"20261001-"
      "080000-"
      "abcd\"}",
      "{\"v\":1,\"seq\":1,\"type\":\"tool_use\",\"id\":\"u1\",\"tool\":\"lamp_set\","
      "\"tier\":2}",
      "{\"v\":1,\"seq\":2,\"type\":\"tool_input\",\"id\":\"u1\",\"tool\":\"lamp_set\","
      "\"input\":{\"name\":\"desk\",\"on\":true},\"truncated\":false}",
      "{\"v\":1,\"seq\":3,\"type\":\"approval\",\"request\":\"a1\",\"tool\":\"lamp_set\","
      "\"tier\":2,\"effect\":\"physical\",\"input\":{\"name\":\"desk\",\"on\":true},"
      "\"truncated\":false,\"expires_at\":1790841900.0}",
      "{\"v\":1,\"seq\":4,\"type\":\"approval_decided\",\"request\":\"a1\",\"decision\":"
      "\"approved\"}",
      "{\"v\":1,\"seq\":5,\"type\":\"tool_result\",\"id\":\"u1\",\"tool\":\"lamp_set\","
      "\"status\":\"ok\",\"summary\":\"desk lamp is on (simulated)\",\"approval\":"
      "\"approved\"}",
      "{\"v\":1,\"seq\":6,\"type\":\"text\",\"delta\":\"The desk lamp is on.\"}",
      "{\"v\":1,\"seq\":7,\"type\":\"end\",\"stop_reason\":\"end_turn\"}");
  STREAM_OK("text only", L_TURN, L_TEXT(1), L_TEXT(2), L_END(3, "end_turn"));
  STREAM_OK(
      "a tool with progress, text and reasoning around it", L_TURN,
      "{\"v\":1,\"seq\":1,\"type\":\"reasoning\",\"delta\":\"count\"}",
      L_USE(2, "u1", "count_slowly", 0), L_TEXT(3), L_INPUT(4, "u1", "count_slowly"),
      L_PROGRESS(5, "u1", "count_slowly"), L_PROGRESS(6, "u1", "count_slowly"),
      L_RESULT(7, "u1", "count_slowly", "ok", "null"), L_TEXT(8), L_END(9, "end_turn"));
  STREAM_OK("two calls interleaved", L_TURN, L_USE(1, "u1", "clock", 0),
            L_USE(2, "u2", "clock", 0), L_INPUT(3, "u2", "clock"),
            L_INPUT(4, "u1", "clock"), L_RESULT(5, "u1", "clock", "ok", "null"),
            L_RESULT(6, "u2", "clock", "error", "null"), L_END(7, "end_turn"));
  STREAM_OK("a widget before its render_ui result", L_TURN,
            L_USE(1, "u3", "render_ui", 0), L_INPUT(2, "u3", "render_ui"),
            L_WIDGET(3, "u3"), L_RESULT(4, "u3", "render_ui", "ok", "null"),
            L_END(5, "end_turn"));
  STREAM_OK("a step-up: guard events between approval and decision", L_TURN,
            L_USE(1, "u1", "lamp_set", 2), L_INPUT(2, "u1", "lamp_set"),
            L_APPROVAL(3, "a1", "lamp_set"), L_GUARD(4, "step_up"), L_GUARD(5, "passed"),
            L_DECIDED(6, "a1", "approved"),
            L_RESULT(7, "u1", "lamp_set", "ok", "\"approved\""), L_END(8, "end_turn"));
  STREAM_OK("an approval that times out", L_TURN, L_USE(1, "u1", "lamp_set", 2),
            L_INPUT(2, "u1", "lamp_set"), L_APPROVAL(3, "a1", "lamp_set"),
            L_DECIDED(4, "a1", "timeout"),
            L_RESULT(5, "u1", "lamp_set", "rejected", "\"timeout\""),
            L_END(6, "end_turn"));
  STREAM_OK("a tier-2 call refused while locked, without an approval", L_TURN,
            L_USE(1, "u1", "lamp_set", 2), L_INPUT(2, "u1", "lamp_set"),
            L_RESULT(3, "u1", "lamp_set", "rejected", "\"locked\""),
            L_END(4, "end_turn"));
  STREAM_OK("a turn refused by the guard", L_TURN, L_GUARD(1, "refused"),
            L_END(2, "locked"));
  STREAM_OK("busy", L_TURN, L_END(1, "busy"));
  STREAM_OK("an error outside the agent, then end", L_TURN, L_TEXT(1),
            "{\"v\":1,\"seq\":2,\"type\":\"error\",\"message\":\"the store failed\"}",
            L_END(3, "error"));
  STREAM_OK("a model failure: notice, then end error", L_TURN,
            "{\"v\":1,\"seq\":1,\"type\":\"throttled\",\"delay_seconds\":2.0}",
            "{\"v\":1,\"seq\":2,\"type\":\"notice\",\"text\":\"The model failed.\"}",
            L_END(3, "error"));
  STREAM_OK("cancelled with a call still open", L_TURN, L_USE(1, "u1", "count_slowly", 0),
            L_INPUT(2, "u1", "count_slowly"), L_PROGRESS(3, "u1", "count_slowly"),
            L_END(4, "cancelled"));
  STREAM_OK("a log of two turns", L_TURN, L_TEXT(1), L_END(2, "end_turn"), L_TURN,
            L_TEXT(1), L_END(2, "max_tokens"));

  STREAM_BAD("the first event is not turn", E_ORDER, 1, L_TEXT(0), L_END(1, "end_turn"));
  STREAM_BAD("turn does not start at seq 0", E_SEQ, 1,
             "{\"v\":1,\"seq\":1,\"type\":\"turn\",\"turn\":\"t\",\"session\":\"s\"}",
             L_END(2, "end_turn"));
  STREAM_BAD("a gap in seq", E_SEQ, 3, L_TURN, L_TEXT(1), L_TEXT(3),
             L_END(4, "end_turn"));
  STREAM_BAD("a repeated seq", E_SEQ, 3, L_TURN, L_TEXT(1), L_TEXT(1),
             L_END(2, "end_turn"));
  STREAM_BAD("no end", E_INCOMPLETE, 2, L_TURN, L_TEXT(1));
  STREAM_BAD("an event after end", E_ORDER, 3, L_TURN, L_END(1, "end_turn"), L_TEXT(2));
  STREAM_BAD("a second turn event inside a turn", E_ORDER, 2, L_TURN,
             "{\"v\":1,\"seq\":1,\"type\":\"turn\",\"turn\":\"t\",\"session\":\"s\"}",
             L_END(2, "end_turn"));
  STREAM_BAD("text after error", E_ORDER, 3, L_TURN,
             "{\"v\":1,\"seq\":1,\"type\":\"error\",\"message\":\"x\"}", L_TEXT(2),
             L_END(3, "error"));
  STREAM_BAD("tool_input for a call never started", E_UNKNOWN_ID, 2, L_TURN,
             L_INPUT(1, "u1", "clock"), L_END(2, "end_turn"));
  STREAM_BAD("tool_result before tool_input", E_ORDER, 3, L_TURN,
             L_USE(1, "u1", "clock", 0), L_RESULT(2, "u1", "clock", "ok", "null"),
             L_END(3, "end_turn"));
  STREAM_BAD("two calls with one id", E_DUPLICATE_ID, 3, L_TURN,
             L_USE(1, "u1", "clock", 0), L_USE(2, "u1", "clock", 0),
             L_END(3, "cancelled"));
  STREAM_BAD("tool name differs from the tool_use", E_MISMATCH, 3, L_TURN,
             L_USE(1, "u1", "clock", 0), L_INPUT(2, "u1", "lamp_set"),
             L_END(3, "cancelled"));
  STREAM_BAD("an approval for a tier-0 call", E_MISMATCH, 4, L_TURN,
             L_USE(1, "u1", "clock", 0), L_INPUT(2, "u1", "clock"),
             L_APPROVAL(3, "a1", "clock"), L_END(4, "cancelled"));
  STREAM_BAD("an approval before the input is complete", E_ORDER, 3, L_TURN,
             L_USE(1, "u1", "lamp_set", 2), L_APPROVAL(2, "a1", "lamp_set"),
             L_END(3, "cancelled"));
  STREAM_BAD("a decision for an unknown request", E_UNKNOWN_ID, 2, L_TURN,
             L_DECIDED(1, "a9", "approved"), L_END(2, "end_turn"));
  STREAM_BAD("a decision given twice", E_ORDER, 6, L_TURN, L_USE(1, "u1", "lamp_set", 2),
             L_INPUT(2, "u1", "lamp_set"), L_APPROVAL(3, "a1", "lamp_set"),
             L_DECIDED(4, "a1", "approved"), L_DECIDED(5, "a1", "rejected"),
             L_END(6, "cancelled"));
  STREAM_BAD("progress while awaiting the decision", E_ORDER, 5, L_TURN,
             L_USE(1, "u1", "lamp_set", 2), L_INPUT(2, "u1", "lamp_set"),
             L_APPROVAL(3, "a1", "lamp_set"), L_PROGRESS(4, "u1", "lamp_set"),
             L_END(5, "cancelled"));
  STREAM_BAD("a result that contradicts the decision", E_MISMATCH, 6, L_TURN,
             L_USE(1, "u1", "lamp_set", 2), L_INPUT(2, "u1", "lamp_set"),
             L_APPROVAL(3, "a1", "lamp_set"), L_DECIDED(4, "a1", "rejected"),
             L_RESULT(5, "u1", "lamp_set", "ok", "\"approved\""), L_END(6, "end_turn"));
  STREAM_BAD("a widget for a call that is not render_ui", E_MISMATCH, 4, L_TURN,
             L_USE(1, "u1", "clock", 0), L_INPUT(2, "u1", "clock"), L_WIDGET(3, "u1"),
             L_END(4, "cancelled"));
  STREAM_BAD("a widget after its result", E_ORDER, 5, L_TURN,
             L_USE(1, "u3", "render_ui", 0), L_INPUT(2, "u3", "render_ui"),
             L_RESULT(3, "u3", "render_ui", "ok", "null"), L_WIDGET(4, "u3"),
             L_END(5, "end_turn"));
  STREAM_BAD("end_turn with a call still open", E_UNFINISHED, 3, L_TURN,
             L_USE(1, "u1", "clock", 0), L_END(2, "end_turn"));
  STREAM_BAD("progress after the owner rejected the call", E_ORDER, 6, L_TURN,
             L_USE(1, "u1", "lamp_set", 2), L_INPUT(2, "u1", "lamp_set"),
             L_APPROVAL(3, "a1", "lamp_set"), L_DECIDED(4, "a1", "rejected"),
             L_PROGRESS(5, "u1", "lamp_set"),
             L_RESULT(6, "u1", "lamp_set", "rejected", "\"rejected\""),
             L_END(7, "end_turn"));
  STREAM_BAD("approved without an approval", E_MISMATCH, 4, L_TURN,
             L_USE(1, "u1", "lamp_set", 2), L_INPUT(2, "u1", "lamp_set"),
             L_RESULT(3, "u1", "lamp_set", "ok", "\"approved\""), L_END(4, "cancelled"));
  STREAM_BAD("a new turn before the end of the last", E_ORDER, 3, L_TURN, L_TEXT(1),
             L_TURN, L_TEXT(1), L_END(2, "end_turn"));
  STREAM_BAD("a line that does not parse", E_FIELD, 2, L_TURN,
             "{\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":7}", L_END(2, "end_turn"));
}

int main(void) {
  turn_arena_init(&arena, NULL);
  valid_events = json_array();
  invalid_events = json_array();
  valid_blocks = json_array();
  invalid_blocks = json_array();
  inputs = json_array();
  valid_streams = json_array();
  invalid_streams = json_array();

  make_events();
  make_blocks();
  make_inputs();
  make_streams();

  json_t *errors = json_object();
#define ERR_ENTRY(name, value, msg) \
  json_object_set_new(errors, #name, json_integer(value));
  TURN_ERRORS(ERR_ENTRY)
#undef ERR_ENTRY

  json_t *doc = json_object();
  json_object_set_new(doc, "protocol", json_integer(1));
  json_object_set_new(doc, "input_limit", json_integer(TURN_INPUT_LIMIT));
  json_object_set_new(doc, "errors", errors);
  json_object_set_new(
      doc, "events",
      json_pack("{s:o,s:o}", "valid", valid_events, "invalid", invalid_events));
  json_object_set_new(
      doc, "blocks",
      json_pack("{s:o,s:o}", "valid", valid_blocks, "invalid", invalid_blocks));
  json_object_set_new(doc, "inputs", inputs);
  json_object_set_new(
      doc, "streams",
      json_pack("{s:o,s:o}", "valid", valid_streams, "invalid", invalid_streams));
  turn_arena_fini(&arena);
  if (failures > 0) {
    json_decref(doc);
    fprintf(stderr, "turn-vectors: %d vectors do not hold; nothing written\n", failures);
    return 1;
  }
  char *text = json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
  json_decref(doc);
  if (text == NULL) die("out of memory");
  fputs(text, stdout);
  fputc('\n', stdout);
  free(text);
  return 0;
}
