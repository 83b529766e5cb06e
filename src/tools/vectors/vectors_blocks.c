/* The "blocks" section: history blocks made by turn_block_encode, one per type
 * and variant (an orphaned tool result, a truncated input), and invalid blocks
 * each with the code and field it must give. */
#include "vectors.h"

#include <stdint.h>
#include <string.h>

#define S(lit) TURN_STR(lit)

static json_t *valid_blocks, *invalid_blocks;

static void add_valid_block_text(const char *text, size_t len) {
  turn_block b;
  turn_error err;
  turn_buf out;
  turn_buf_init(&out, SIZE_MAX, NULL);
  turn_arena_reset(&vectors_arena);
  int rv = turn_block_parse(&b, &vectors_arena, text, len, &err);
  vectors_check(rv == TURN_OK, "valid block refused", turn_errname(rv));
  if (rv == TURN_OK) {
    rv = turn_block_encode(&b, &out);
    vectors_check(rv == TURN_OK, "a parsed block cannot be encoded", turn_errname(rv));
  }
  if (rv == TURN_OK) {
    json_t *entry = json_object();
    vectors_put_line(entry, "line", text, len);
    json_object_set_new(entry, "block", vectors_as_json(out.data, out.len));
    json_array_append_new(valid_blocks, entry);
  }
  turn_buf_fini(&out);
}

static void add_block(const turn_block *b) {
  turn_buf out;
  turn_buf_init(&out, SIZE_MAX, NULL);
  if (turn_block_encode(b, &out) != TURN_OK) vectors_die("cannot encode a valid block");
  add_valid_block_text(out.data, out.len);
  turn_buf_fini(&out);
}

static void add_invalid_block(const char *text, size_t len, int code, const char *field) {
  turn_block b;
  turn_error err = {0, NULL, 0, 0};
  turn_arena_reset(&vectors_arena);
  int rv = turn_block_parse(&b, &vectors_arena, text, len, &err);
  vectors_check(rv == code, "invalid block gives another code", text);
  vectors_check(field == NULL ? err.field == NULL
                              : err.field != NULL && strcmp(err.field, field) == 0,
                "invalid block blames another field", text);
  json_t *entry = json_object();
  vectors_put_line(entry, "line", text, len);
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
  b.tool.input = vectors_inline_input("{\"name\":\"desk\",\"on\":true}");
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

void vectors_blocks(json_t *doc) {
  valid_blocks = json_array();
  invalid_blocks = json_array();
  make_blocks();
  json_object_set_new(
      doc, "blocks",
      json_pack("{s:o,s:o}", "valid", valid_blocks, "invalid", invalid_blocks));
}
