/* History blocks (block.c, iso8601.c): the six block types parse and encode like
 * events, "at" is an ISO 8601 time or null, tool blocks allow null where the store
 * may lack a detail, and turn_history_parse walks a whole document one block at a
 * time, reporting a bad block to the callback and going on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "support.h"
#include "turn/turn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static turn_arena arena, arena2;

static int group_setup(void **state) {
  (void)state;
  turn_arena_init(&arena, NULL);
  turn_arena_init(&arena2, NULL);
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  turn_arena_fini(&arena);
  turn_arena_fini(&arena2);
  return 0;
}

static int parse_in(turn_arena *a, const char *json, size_t len, turn_block *b,
                    turn_error *err) {
  turn_arena_reset(a);
  return turn_block_parse(b, a, json, len, err);
}

static int parse(const char *json, turn_block *b, turn_error *err) {
  return parse_in(&arena, json, strlen(json), b, err);
}

static bool input_equal(const turn_input *a, const turn_input *b) {
  return a->truncated == b->truncated && turn_str_eq(a->json, b->json) &&
         turn_str_eq(a->preview, b->preview);
}

static bool block_equal(const turn_block *a, const turn_block *b) {
  if (a->type != b->type || !turn_str_eq(a->at, b->at)) return false;
  switch (a->type) {
  case TURN_BLOCK_USER:
  case TURN_BLOCK_ASSISTANT:
  case TURN_BLOCK_REASONING:
  case TURN_BLOCK_NOTICE:
    return turn_str_eq(a->text.text, b->text.text);
  case TURN_BLOCK_TOOL:
    return turn_str_eq(a->tool.id, b->tool.id) &&
           turn_str_eq(a->tool.tool, b->tool.tool) &&
           a->tool.has_summary == b->tool.has_summary &&
           turn_str_eq(a->tool.summary, b->tool.summary) &&
           a->tool.tier == b->tool.tier && input_equal(&a->tool.input, &b->tool.input) &&
           a->tool.status == b->tool.status && a->tool.approval == b->tool.approval &&
           a->tool.has_duration_ms == b->tool.has_duration_ms &&
           a->tool.duration_ms == b->tool.duration_ms;
  case TURN_BLOCK_WIDGET:
    return turn_str_eq(a->widget.id, b->widget.id) &&
           turn_str_eq(a->widget.title, b->widget.title) &&
           turn_str_eq(a->widget.html, b->widget.html);
  case TURN_BLOCK__COUNT:
    break;
  }
  return false;
}

/* ----------------------------------------------------------------- ISO 8601 */

static const struct {
  const char *s;
  size_t len;
  bool ok;
} times[] = {
#define T(lit, ok) \
  { lit, sizeof(lit) - 1, ok }
    T("2026-10-01T08:00:00", true), T("2026-10-01T08:00:00Z", true),
    T("2026-10-01T08:00:00.123Z", true), T("2026-10-01T08:00:00.5", true),
    T("2026-10-01T08:00:00.123456+05:30", true), T("2026-10-01T08:00:00+05:30", true),
    T("2026-10-01T08:00:00-07:00", true), T("2026-10-01T08:00:00+00:00", true),
    T("2026-10-01T08:00:00-00:00", true), T("2026-10-01T08:00:00+23:59", true),
    T("2026-12-31T23:59:59.999999999Z", true),
    T("2024-02-29T12:00:00Z", true), /* leap year */
    T("2000-02-29T00:00:00Z", true), /* divisible by 400 */
    T("2026-01-31T00:00:00Z", true), T("2026-04-30T00:00:00Z", true),
    T("2026-02-28T00:00:00Z", true), T("0001-01-01T00:00:00", true),
    T("9999-12-31T23:59:59", true), T("", false), T("2026-10-01", false),
    T("2026-10-01T08:00", false), T("2026-10-01T08:00:0", false),
    T("2023-02-29T12:00:00Z", false), /* not a leap year */
    T("1900-02-29T00:00:00Z", false), /* divisible by 100, not 400 */
    T("2100-02-29T00:00:00Z", false), T("2024-02-30T00:00:00Z", false),
    T("2026-13-01T00:00:00Z", false), /* month 13 */
    T("2026-00-10T00:00:00Z", false), T("2026-10-00T00:00:00Z", false),
    T("2026-10-32T00:00:00Z", false), T("2026-04-31T00:00:00Z", false),
    T("2026-06-31T00:00:00Z", false), T("2026-10-01T24:00:00Z", false), /* hour 24 */
    T("2026-10-01T23:60:00Z", false), T("2026-10-01T23:59:61Z", false),
    T("2026-10-01T08:00:00.Z", false), /* a dot without digits */
    T("2026-10-01T08:00:00.", false), T("2026-10-01T08:00:00.1234567890Z", false),
    T("2026-10-01T08:00:00.12a", false), T("2026-10-01T08:00:00+0530", false),
    T("2026-10-01T08:00:00+05", false), T("2026-10-01T08:00:00+05:3", false),
    T("2026-10-01T08:00:00+24:00", false), T("2026-10-01T08:00:00+05:60", false),
    T("2026-10-01T08:00:00+05:30Z", false), T("2026-10-01T08:00:00ZZ", false),
    T("2026-10-01T08:00:00Z ", false), T(" 2026-10-01T08:00:00Z", false),
    T("2026-10-01T08:00:00GMT", false), T("2026-10-01T08:00:00\0", false),
    T("2026/10/01T08:00:00Z", false), T("2026-1-01T08:00:00Z", false),
    T("26-10-01T08:00:00Z", false), T("+2026-10-01T08:00:00Z", false),
    T("2026-10-01X08:00:00Z", false), T("2026-10-01T8:00:00Z", false),
    T("2026-10-01T08:00:00+-5:30", false), T("yesterday", false),
    /* What Python's fromisoformat or JavaScript's Date would not read back. */
    T("2026-10-01 08:00:00Z", false), T("2026-10-01t08:00:00Z", false),
    T("2026-10-01T08:00:00z", false),
    T("2026-12-31T23:59:60Z", false), /* a leap second */
    T("0000-01-01T00:00:00Z", false), /* year 0 */
#undef T
};

static void test_block_iso8601_valid_table(void **state) {
  (void)state;
  int bad = 0;
  for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
    /* an exact-size copy, so a read past the end is caught by ASan */
    char *copy = malloc(times[i].len ? times[i].len : 1);
    assert_non_null(copy);
    memcpy(copy, times[i].s, times[i].len);
    bool got = turn_iso8601_valid((turn_str){copy, times[i].len});
    free(copy);
    if (got != times[i].ok) {
      print_message("\"%s\": want %s\n", times[i].s, times[i].ok ? "valid" : "invalid");
      bad++;
    }
  }
  assert_int_equal(bad, 0);
}

/* ------------------------------------------------------------- round trips */

static const char *const canonical[] = {
    "{\"type\":\"user\",\"text\":\"Turn on the desk "
    "lamp\",\"at\":\"2026-10-01T08:00:00Z\"}",
    "{\"type\":\"assistant\",\"text\":\"**Done.**\\nThe lamp is "
    "on.\",\"at\":\"2026-10-01T08:"
    "00:01.123+00:00\"}",
    "{\"type\":\"reasoning\",\"text\":\"The user wants light.\",\"at\":null}",
    "{\"type\":\"tool\",\"id\":\"u1\",\"tool\":\"lamp_set\",\"tier\":2,\"input\":{"
    "\"name\":"
    "\"desk\",\"on\":true},\"truncated\":false,\"status\":\"ok\",\"summary\":\"desk lamp "
    "is "
    "on\",\"approval\":\"approved\",\"duration_ms\":120,\"at\":\"2026-10-01T08:00:02."
    "123456+"
    "05:30\"}",
    /* an orphaned result: its call is not in the history */
    "{\"type\":\"tool\",\"id\":\"u9\",\"tool\":\"?\",\"tier\":null,\"input\":null,"
    "\"truncated\":false,\"status\":null,\"summary\":null,\"approval\":null,\"duration_"
    "ms\":"
    "null,\"at\":null}",
    "{\"type\":\"tool\",\"id\":\"u2\",\"tool\":\"big\",\"tier\":0,\"input\":null,"
    "\"preview\":"
    "\"{\\\"a\\\":\",\"truncated\":true,\"status\":\"error\",\"summary\":\"\","
    "\"approval\":"
    "\"exempt\",\"duration_ms\":0,\"at\":\"2026-10-01T08:00:03\"}",
    "{\"type\":\"tool\",\"id\":\"u4\",\"tool\":\"t\",\"tier\":1,\"input\":{},"
    "\"truncated\":"
    "false,\"status\":\"rejected\",\"summary\":\"no\",\"approval\":\"locked\",\"duration_"
    "ms\":"
    "9223372036854775807,\"at\":null}",
    "{\"type\":\"widget\",\"id\":\"u3\",\"title\":\"Chart\",\"html\":\"<svg "
    "class=\\\"c\\\"></svg>\",\"at\":\"2026-10-01T08:00:04Z\"}",
    "{\"type\":\"notice\",\"text\":\"Lampe an "
    "\xE2\x9C\x93\",\"at\":\"2026-10-01T08:00:05-07:"
    "00\"}",
};

static void test_block_every_type_round_trips(void **state) {
  (void)state;
  unsigned seen = 0;
  for (size_t i = 0; i < sizeof canonical / sizeof canonical[0]; i++) {
    turn_block b;
    turn_error err = {0, NULL, 0, 0};
    int rv = parse(canonical[i], &b, &err);
    if (rv != TURN_OK)
      print_message("%s: %s (field %s)\n", canonical[i], turn_errname(rv),
                    err.field ? err.field : "-");
    assert_int_equal(rv, TURN_OK);
    seen |= 1u << b.type;
    turn_buf out;
    turn_buf_init(&out, 4096, NULL);
    assert_int_equal(turn_block_encode(&b, &out), TURN_OK);
    if (out.len != strlen(canonical[i]) || memcmp(out.data, canonical[i], out.len) != 0)
      print_message("in:  %s\nout: %.*s\n", canonical[i], (int)out.len, out.data);
    assert_int_equal(out.len, strlen(canonical[i]));
    assert_memory_equal(out.data, canonical[i], out.len);
    turn_buf_fini(&out);
  }
  assert_int_equal(seen, (1u << TURN_BLOCK__COUNT) - 1);
}

static void test_block_tool_nulls_parse_as_unknown(void **state) {
  (void)state;
  turn_block b;
  assert_int_equal(parse(canonical[4], &b, NULL), TURN_OK);
  assert_int_equal(b.type, TURN_BLOCK_TOOL);
  assert_true(turn_str_eq(b.tool.tool, TURN_STR("?")));
  assert_int_equal(b.tool.tier, TURN_TIER_NULL);
  assert_false(b.tool.input.truncated);
  assert_int_equal(b.tool.input.json.len, 0);
  assert_int_equal(b.tool.status, TURN_STATUS_NULL);
  assert_false(b.tool.has_summary);
  assert_int_equal(b.tool.approval, TURN_APPROVAL_NULL);
  assert_false(b.tool.has_duration_ms);
  assert_int_equal(b.at.len, 0);

  assert_int_equal(parse(canonical[3], &b, NULL), TURN_OK);
  assert_int_equal(b.tool.tier, 2);
  assert_true(
      turn_str_eq(b.tool.input.json, TURN_STR("{\"name\":\"desk\",\"on\":true}")));
  assert_int_equal(b.tool.status, TURN_STATUS_OK);
  assert_true(b.tool.has_summary);
  assert_true(turn_str_eq(b.tool.summary, TURN_STR("desk lamp is on")));
  assert_int_equal(b.tool.approval, TURN_APPROVAL_APPROVED);
  assert_true(b.tool.has_duration_ms);
  assert_int_equal(b.tool.duration_ms, 120);
  assert_true(turn_str_eq(b.at, TURN_STR("2026-10-01T08:00:02.123456+05:30")));

  /* an empty summary is a summary, not null */
  assert_int_equal(parse(canonical[5], &b, NULL), TURN_OK);
  assert_true(b.tool.has_summary);
  assert_int_equal(b.tool.summary.len, 0);
  assert_true(b.tool.has_duration_ms);
  assert_int_equal(b.tool.duration_ms, 0);
}

/* ------------------------------------------------------------ field errors */

struct repl {
  const char *key;
  const char *value; /* JSON text, or NULL to drop the member */
};

#define DROP NULL

static const struct {
  const char *type;
  const char *members[12]; /* "key", value pairs after "type" */
} templates[] = {
    {"user", {"text", "\"hi\"", "at", "\"2026-10-01T08:00:00Z\""}},
    {"assistant", {"text", "\"ok\"", "at", "null"}},
    {"reasoning", {"text", "\"hm\"", "at", "null"}},
    {"notice", {"text", "\"n\"", "at", "\"2026-10-01T08:00:00+05:30\""}},
    {"widget", {"id", "\"u3\"", "title", "\"T\"", "html", "\"<b>\"", "at", "null"}},
    {"tool",
     {"id", "\"u1\"", "tool", "\"lamp_set\"", "tier", "2", "input", "{\"a\":1}",
      "truncated", "false", "status", "\"ok\"",
      /* continued below */}},
};

/* The tool template does not fit the 12 slots above; its tail lives here. */
static const char *const tool_tail[] = {"summary",      "\"done\"",    "approval",
                                        "\"approved\"", "duration_ms", "120",
                                        "at",           "null"};

static void put(char *out, size_t cap, size_t *w, const char *s) {
  size_t n = strlen(s);
  assert_true(*w + n < cap);
  memcpy(out + *w, s, n);
  *w += n;
}

static void put_member(char *out, size_t cap, size_t *w, const char *key,
                       const char *value, const char *watch, size_t *watch_off) {
  put(out, cap, w, *w > 1 ? ",\"" : "\"");
  put(out, cap, w, key);
  put(out, cap, w, "\":");
  if (watch != NULL && strcmp(key, watch) == 0) *watch_off = *w;
  put(out, cap, w, value);
}

/* {"type":T, members...} with the replacements applied (keys the template lacks
 * are added at the end); *watch_off is where watch's value starts, or the length
 * when the block has no such member. */
static size_t build_block(char *out, size_t cap, const char *type, const struct repl *r,
                          size_t nr, const char *watch, size_t *watch_off) {
  const char *keys[16], *values[16];
  char type_value[32];
  snprintf(type_value, sizeof type_value, "\"%s\"", type);
  size_t n = 0;
  keys[n] = "type";
  values[n++] = type_value;
  size_t t = 0;
  while (strcmp(templates[t].type, type) != 0)
    t++;
  for (size_t i = 0; i < 12 && templates[t].members[i] != NULL; i += 2) {
    keys[n] = templates[t].members[i];
    values[n++] = templates[t].members[i + 1];
  }
  if (strcmp(type, "tool") == 0)
    for (size_t i = 0; i < sizeof tool_tail / sizeof tool_tail[0]; i += 2) {
      keys[n] = tool_tail[i];
      values[n++] = tool_tail[i + 1];
    }
  bool used[4] = {false, false, false, false};
  size_t w = 0;
  *watch_off = SIZE_MAX;
  put(out, cap, &w, "{");
  for (size_t i = 0; i < n; i++) {
    const char *value = values[i];
    for (size_t k = 0; k < nr; k++)
      if (strcmp(r[k].key, keys[i]) == 0) {
        used[k] = true;
        value = r[k].value;
      }
    if (value != NULL) put_member(out, cap, &w, keys[i], value, watch, watch_off);
  }
  for (size_t k = 0; k < nr; k++)
    if (!used[k] && r[k].value != NULL)
      put_member(out, cap, &w, r[k].key, r[k].value, watch, watch_off);
  put(out, cap, &w, "}");
  out[w] = '\0';
  if (*watch_off == SIZE_MAX) *watch_off = w;
  return w;
}

static int check_variant(const char *type, const struct repl *r, size_t nr, int code,
                         const char *field) {
  char json[1024];
  size_t watch_off;
  size_t len = build_block(json, sizeof json, type, r, nr, field, &watch_off);
  turn_block b, before;
  memset(&b, 0xA5, sizeof b);
  memcpy(&before, &b, sizeof b);
  turn_error err = {12345, "sentinel", 777, 888};
  int rv = parse_in(&arena, json, len, &b, &err);
  if (rv != code) {
    print_message("%s: want %s, got %s (field %s)\n", json, turn_errname(code),
                  turn_errname(rv), rv != TURN_OK && err.field ? err.field : "-");
    return 1;
  }
  if (code == TURN_OK) return 0;
  int bad = 0;
  if (err.code != code || err.field == NULL || strcmp(err.field, field) != 0) {
    print_message("%s: want field %s, got %s\n", json, field,
                  err.field ? err.field : "NULL");
    bad = 1;
  }
  if (err.offset != watch_off) {
    print_message("%s: want offset %zu, got %zu\n", json, watch_off, err.offset);
    bad = 1;
  }
  if (memcmp(&b, &before, sizeof b) != 0) {
    print_message("%s: block changed on error\n", json);
    bad = 1;
  }
  return bad;
}

struct variant {
  const char *value;
  int code;
};

static const struct variant v_type[] = {
    {DROP, TURN_E_MISSING},   {"1", TURN_E_FIELD},        {"null", TURN_E_FIELD},
    {"\"\"", TURN_E_TYPE},    {"\"bogus\"", TURN_E_TYPE}, {"\"text\"", TURN_E_TYPE},
    {"\"User\"", TURN_E_TYPE}};
static const struct variant v_str[] = {{DROP, TURN_E_MISSING}, {"1", TURN_E_FIELD},
                                       {"null", TURN_E_FIELD}, {"[]", TURN_E_FIELD},
                                       {"\"\"", TURN_OK},      {"\"\\u00e9\"", TURN_OK}};
static const struct variant v_id[] = {{DROP, TURN_E_MISSING},
                                      {"1", TURN_E_FIELD},
                                      {"null", TURN_E_FIELD},
                                      {"\"\"", TURN_E_VALUE},
                                      {"\"?\"", TURN_OK}};
static const struct variant v_at[] = {{DROP, TURN_E_MISSING},
                                      {"1", TURN_E_FIELD},
                                      {"true", TURN_E_FIELD},
                                      {"1790841900.0", TURN_E_FIELD},
                                      {"\"\"", TURN_E_VALUE},
                                      {"\"yesterday\"", TURN_E_VALUE},
                                      {"\"2023-02-29T00:00:00Z\"", TURN_E_VALUE},
                                      {"\"2026-13-01T00:00:00Z\"", TURN_E_VALUE},
                                      {"\"2026-10-01T24:00:00Z\"", TURN_E_VALUE},
                                      {"\"2026-10-01T08:00:00+0530\"", TURN_E_VALUE},
                                      {"null", TURN_OK},
                                      {"\"2024-02-29T00:00:00Z\"", TURN_OK},
                                      {"\"2026-10-01T08:00:00.123456+05:30\"", TURN_OK},
                                      {"\"2026-10-01T08:00:00\"", TURN_OK}};
static const struct variant v_tier[] = {{DROP, TURN_E_MISSING},  {"3", TURN_E_VALUE},
                                        {"-1", TURN_E_VALUE},    {"1.0", TURN_E_FIELD},
                                        {"\"1\"", TURN_E_FIELD}, {"null", TURN_OK},
                                        {"0", TURN_OK}};
static const struct variant v_status[] = {
    {DROP, TURN_E_MISSING},   {"\"maybe\"", TURN_E_VALUE}, {"\"null\"", TURN_E_VALUE},
    {"1", TURN_E_FIELD},      {"null", TURN_OK},           {"\"error\"", TURN_OK},
    {"\"rejected\"", TURN_OK}};
static const struct variant v_summary[] = {{DROP, TURN_E_MISSING},
                                           {"1", TURN_E_FIELD},
                                           {"{}", TURN_E_FIELD},
                                           {"null", TURN_OK},
                                           {"\"\"", TURN_OK}};
static const struct variant v_approval[] = {
    {DROP, TURN_E_MISSING}, {"\"maybe\"", TURN_E_VALUE}, {"true", TURN_E_FIELD},
    {"null", TURN_OK},      {"\"timeout\"", TURN_OK},    {"\"exempt\"", TURN_OK}};
static const struct variant v_duration[] = {{DROP, TURN_E_MISSING},
                                            {"-1", TURN_E_VALUE},
                                            {"1.5", TURN_E_FIELD},
                                            {"1e3", TURN_E_FIELD},
                                            {"\"120\"", TURN_E_FIELD},
                                            {"null", TURN_OK},
                                            {"0", TURN_OK},
                                            {"9223372036854775807", TURN_OK}};

#define VARIANTS(a) a, sizeof a / sizeof a[0]

static const struct {
  const char *type, *key;
  const struct variant *v;
  size_t nv;
} fields[] = {
    {"user", "type", VARIANTS(v_type)},
    {"user", "text", VARIANTS(v_str)},
    {"user", "at", VARIANTS(v_at)},
    {"assistant", "text", VARIANTS(v_str)},
    {"assistant", "at", VARIANTS(v_at)},
    {"reasoning", "text", VARIANTS(v_str)},
    {"reasoning", "at", VARIANTS(v_at)},
    {"notice", "text", VARIANTS(v_str)},
    {"notice", "at", VARIANTS(v_at)},
    {"widget", "id", VARIANTS(v_id)},
    {"widget", "title", VARIANTS(v_str)},
    {"widget", "html", VARIANTS(v_str)},
    {"widget", "at", VARIANTS(v_at)},
    {"tool", "id", VARIANTS(v_id)},
    {"tool", "tool", VARIANTS(v_id)},
    {"tool", "tier", VARIANTS(v_tier)},
    {"tool", "status", VARIANTS(v_status)},
    {"tool", "summary", VARIANTS(v_summary)},
    {"tool", "approval", VARIANTS(v_approval)},
    {"tool", "duration_ms", VARIANTS(v_duration)},
    {"tool", "at", VARIANTS(v_at)},
};

static void test_block_every_field_missing_ill_typed_or_out_of_range(void **state) {
  (void)state;
  int bad = 0, checked = 0;
  for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
    for (size_t i = 0; i < fields[f].nv; i++) {
      struct repl r = {fields[f].key, fields[f].v[i].value};
      bad += check_variant(fields[f].type, &r, 1, fields[f].v[i].code, fields[f].key);
      checked++;
    }
  assert_true(checked > 120);
  assert_int_equal(bad, 0);
}

static void test_block_tool_input_forms(void **state) {
  (void)state;
  static const struct {
    struct repl r[3];
    int code;
    const char *field;
  } in[] = {
      {{{"input", "null"}}, TURN_OK, NULL}, /* unknown input: an orphaned result */
      {{{"input", "{}"}}, TURN_OK, NULL},
      {{{"input", DROP}}, TURN_E_MISSING, "input"},
      {{{"input", "[]"}}, TURN_E_FIELD, "input"},
      {{{"input", "\"{}\""}}, TURN_E_FIELD, "input"},
      {{{"truncated", DROP}}, TURN_E_MISSING, "truncated"},
      {{{"truncated", "null"}}, TURN_E_FIELD, "truncated"},
      {{{"truncated", "true"}, {"input", "null"}, {"preview", "\"{\""}}, TURN_OK, NULL},
      {{{"truncated", "true"}, {"input", "null"}}, TURN_E_MISSING, "preview"},
      {{{"truncated", "true"}, {"input", "{}"}, {"preview", "\"{\""}},
       TURN_E_FIELD,
       "input"},
      {{{"truncated", "true"}, {"input", "null"}, {"preview", "1"}},
       TURN_E_FIELD,
       "preview"},
  };
  int bad = 0;
  for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
    size_t nr = 0;
    while (nr < 3 && in[i].r[nr].key != NULL)
      nr++;
    bad += check_variant("tool", in[i].r, nr, in[i].code, in[i].field);
  }
  assert_int_equal(bad, 0);
}

static void test_block_not_an_object(void **state) {
  (void)state;
  static const struct {
    const char *json;
    int code;
  } shapes[] = {
      {"[]", TURN_E_NOT_OBJECT},
      {"\"user\"", TURN_E_NOT_OBJECT},
      {"null", TURN_E_NOT_OBJECT},
      {"", TURN_E_JSON},
      {"{\"type\":\"user\",\"text\":\"a\",\"at\":null", TURN_E_JSON},
      {"{\"type\":\"user\",\"text\":\"a\",\"at\":null}]", TURN_E_JSON},
      {"{\"type\":\"user\",\"text\":\"\xC3\",\"at\":null}", TURN_E_UTF8},
      {"{\"type\":\"user\",\"text\":\"a\",\"at\":null,\"extra\":[1,{}]}", TURN_OK},
      {" {\"at\":null,\"text\":\"a\",\"type\":\"user\"} ", TURN_OK},
  };
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    turn_block b;
    turn_error err = {0, NULL, 0, 0};
    int rv = parse(shapes[i].json, &b, &err);
    if (rv != shapes[i].code) print_message("case %zu: got %s\n", i, turn_errname(rv));
    assert_int_equal(rv, shapes[i].code);
  }
}

/* ---------------------------------------------------------------- encoder */

static int encode(const turn_block *b, char **json, size_t *len) {
  turn_buf out;
  turn_buf_init(&out, 1 << 16, NULL);
  assert_int_equal(turn_buf_append(&out, "[", 1), TURN_OK);
  int rv = turn_block_encode(b, &out);
  *json = NULL;
  *len = 0;
  if (rv != TURN_OK) {
    assert_int_equal(out.len, 1);
    assert_memory_equal(out.data, "[", 1);
  } else {
    *len = out.len - 1;
    *json = malloc(*len + 1);
    assert_non_null(*json);
    memcpy(*json, out.data + 1, *len);
    (*json)[*len] = '\0';
  }
  turn_buf_fini(&out);
  return rv;
}

static turn_block tool_block(void) {
  turn_block b;
  memset(&b, 0, sizeof b);
  b.type = TURN_BLOCK_TOOL;
  b.tool.id = TURN_STR("u1");
  b.tool.tool = TURN_STR("lamp_set");
  b.tool.tier = 2;
  b.tool.input.json = TURN_STR("{\"name\":\"desk\"}");
  b.tool.status = TURN_STATUS_OK;
  b.tool.approval = TURN_APPROVAL_APPROVED;
  b.tool.has_summary = true;
  b.tool.summary = TURN_STR("on");
  b.tool.has_duration_ms = true;
  b.tool.duration_ms = 5;
  b.at = TURN_STR("2026-10-01T08:00:00Z");
  return b;
}

static void test_block_encode_out_of_range_is_invalid(void **state) {
  (void)state;
  char *json;
  size_t len;
  turn_block b = tool_block();
  assert_int_equal(encode(&b, &json, &len), TURN_OK);
  free(json);

  b.type = TURN_BLOCK__COUNT;
  assert_int_equal(encode(&b, &json, &len), TURN_E_INVALID);
  b.type = (turn_block_type)-1;
  assert_int_equal(encode(&b, &json, &len), TURN_E_INVALID);

  b = tool_block();
  b.tool.status = TURN_STATUS__COUNT;
  assert_int_equal(encode(&b, &json, &len), TURN_E_INVALID);
  b = tool_block();
  b.tool.approval = TURN_APPROVAL__COUNT;
  assert_int_equal(encode(&b, &json, &len), TURN_E_INVALID);
  b = tool_block();
  b.tool.tier = 3;
  assert_int_equal(encode(&b, &json, &len), TURN_E_INVALID);
  b.tool.tier = -5;
  assert_int_equal(encode(&b, &json, &len), TURN_E_INVALID);
  b = tool_block();
  b.tool.duration_ms = -1;
  assert_int_equal(encode(&b, &json, &len), TURN_E_INVALID);
  b.tool.has_duration_ms = false; /* null: the value is not looked at */
  assert_int_equal(encode(&b, &json, &len), TURN_OK);
  free(json);
  b = tool_block();
  b.tool.input.json = TURN_STR("[1]");
  assert_int_equal(encode(&b, &json, &len), TURN_E_INVALID);
  b.tool.input.json = TURN_STR("{\"a\":}");
  assert_int_equal(encode(&b, &json, &len), TURN_E_INVALID);

  static const char *const bad_at[] = {"yesterday", "2026-02-29T00:00:00Z",
                                       "2026-10-01T24:00:00", "2026-10-01"};
  for (size_t i = 0; i < sizeof bad_at / sizeof bad_at[0]; i++) {
    memset(&b, 0, sizeof b);
    b.type = TURN_BLOCK_USER;
    b.text.text = TURN_STR("hi");
    b.at = turn_str_c(bad_at[i]);
    assert_int_equal(encode(&b, &json, &len), TURN_E_INVALID);
  }
}

static void test_block_encode_cap_too_small_is_toobig(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof canonical / sizeof canonical[0]; i++) {
    turn_block b;
    assert_int_equal(parse(canonical[i], &b, NULL), TURN_OK);
    size_t len = strlen(canonical[i]);
    for (size_t cap = 2; cap <= len + 2; cap++) {
      turn_buf out;
      turn_buf_init(&out, cap, NULL);
      assert_int_equal(turn_buf_append(&out, "[\n", 2), TURN_OK);
      int rv = turn_block_encode(&b, &out);
      if (cap < len + 2) {
        assert_int_equal(rv, TURN_E_TOOBIG);
        assert_int_equal(out.len, 2);
        assert_memory_equal(out.data, "[\n", 2);
      } else {
        assert_int_equal(rv, TURN_OK);
        assert_memory_equal(out.data + 2, canonical[i], len);
      }
      turn_buf_fini(&out);
    }
  }
}

static void check_parse_of_encode(const turn_block *b) {
  char *json;
  size_t len;
  int rv = encode(b, &json, &len);
  if (rv != TURN_OK) fail_msg("type %d: encode gave %s", b->type, turn_errname(rv));
  turn_block back;
  turn_error err = {0, NULL, 0, 0};
  rv = parse_in(&arena2, json, len, &back, &err);
  if (rv != TURN_OK || !block_equal(b, &back))
    print_message("%s -> %s (field %s)\n", json, turn_errname(rv),
                  err.field ? err.field : "-");
  free(json);
  assert_int_equal(rv, TURN_OK);
  assert_true(block_equal(b, &back));
}

static void test_block_parse_of_encode_is_identity(void **state) {
  (void)state;
  static const turn_block_type text_types[] = {TURN_BLOCK_USER, TURN_BLOCK_ASSISTANT,
                                               TURN_BLOCK_REASONING, TURN_BLOCK_NOTICE};
  const turn_str odd = TURN_STR("\"q\" \\ \n\x01 \xE2\x82\xAC <i>");
  turn_block b;
  for (size_t i = 0; i < 4; i++) {
    memset(&b, 0, sizeof b);
    b.type = text_types[i];
    b.text.text = odd;
    check_parse_of_encode(&b);
    b.at = TURN_STR("2024-02-29T23:59:59.5-03:00");
    check_parse_of_encode(&b);
  }
  memset(&b, 0, sizeof b);
  b.type = TURN_BLOCK_WIDGET;
  b.widget.id = TURN_STR("u3");
  b.widget.html = odd;
  check_parse_of_encode(&b);

  for (int tier = -1; tier <= 2; tier++)
    for (int s = 0; s < TURN_STATUS__COUNT; s++)
      for (int a = 0; a < TURN_APPROVAL__COUNT; a++) {
        b = tool_block();
        b.tool.tier = tier;
        b.tool.status = (turn_status)s;
        b.tool.approval = (turn_approval)a;
        b.tool.has_summary = a % 2 == 0;
        b.tool.summary = b.tool.has_summary ? odd : (turn_str){NULL, 0};
        b.tool.has_duration_ms = s % 2 == 0;
        b.tool.duration_ms = b.tool.has_duration_ms ? 1000 * tier + 1000 : 0;
        switch ((tier + s + a) % 3) {
        case 0:
          b.tool.input.json = (turn_str){NULL, 0}; /* null: unknown */
          break;
        case 1:
          b.tool.input.json = (turn_str){NULL, 0};
          b.tool.input.truncated = true;
          b.tool.input.preview = TURN_STR("{\"name\":\"de");
          break;
        default:
          break;
        }
        if (a == 0) b.at = (turn_str){NULL, 0};
        check_parse_of_encode(&b);
      }
}

/* ---------------------------------------------------------------- history */

/* What the callback saw, copied: its arguments are valid only during the call. */
struct seen {
  size_t n;
  size_t index[16];
  int code[16]; /* TURN_OK for a block */
  const char *field[16];
  size_t offset[16];
  turn_block_type type[16];
  char text[16][32];
  size_t text_len[16];
  int stop_at; /* return 42 at this index; -1 never */
};

static int record(void *ctx, size_t index, const turn_block *b, const turn_error *err) {
  struct seen *s = ctx;
  assert_true(s->n < 16);
  assert_true((b == NULL) != (err == NULL));
  s->index[s->n] = index;
  if (b != NULL) {
    s->code[s->n] = TURN_OK;
    s->type[s->n] = b->type;
    turn_str t = b->type == TURN_BLOCK_TOOL     ? b->tool.id
                 : b->type == TURN_BLOCK_WIDGET ? b->widget.id
                                                : b->text.text;
    s->text_len[s->n] = t.len < 32 ? t.len : 32;
    if (t.len > 0) memcpy(s->text[s->n], t.p, s->text_len[s->n]);
  } else {
    s->code[s->n] = err->code;
    s->field[s->n] = err->field;
    s->offset[s->n] = err->offset;
  }
  s->n++;
  return s->stop_at >= 0 && (size_t)s->stop_at == index ? 42 : 0;
}

static int count_blocks(void *ctx, size_t index, const turn_block *b,
                        const turn_error *err) {
  size_t *count = ctx;
  assert_int_equal(index, *count);
  assert_non_null(b);
  assert_null(err);
  assert_true(turn_str_eq(b->text.text, TURN_STR("hi")));
  (*count)++;
  return 0;
}

static int history(const char *doc, struct seen *s, turn_error *err) {
  memset(s, 0, sizeof *s);
  s->stop_at = -1;
  turn_arena_reset(&arena);
  return turn_history_parse(doc, strlen(doc), &arena, record, s, err);
}

#define USER_BLOCK   "{\"type\":\"user\",\"text\":\"hi\",\"at\":\"2026-10-01T08:00:00Z\"}"
#define NOTICE_BLOCK "{\"type\":\"notice\",\"text\":\"n\",\"at\":null}"
#define TOOL_BLOCK                                                                       \
  "{\"type\":\"tool\",\"id\":\"u1\",\"tool\":\"t\",\"tier\":2,\"input\":{},"             \
  "\"truncated\":"                                                                       \
  "false,\"status\":\"ok\",\"summary\":\"s\",\"approval\":\"approved\",\"duration_ms\":" \
  "1,\"at\":null}"

static void test_block_history_good_document(void **state) {
  (void)state;
  struct seen s;
  turn_error err = {0, NULL, 0, 0};
  const char *doc = "{\"session\":{\"id\":\"s1\",\"title\":\"Lamp\",\"message_count\":3,"
                    "\"blocks\":\"not these\"},\"blocks\":[" USER_BLOCK "," TOOL_BLOCK
                    "," NOTICE_BLOCK "]}";
  assert_int_equal(history(doc, &s, &err), TURN_OK);
  assert_int_equal(s.n, 3);
  for (size_t i = 0; i < 3; i++) {
    assert_int_equal(s.index[i], i);
    assert_int_equal(s.code[i], TURN_OK);
  }
  assert_int_equal(s.type[0], TURN_BLOCK_USER);
  assert_memory_equal(s.text[0], "hi", 2);
  assert_int_equal(s.type[1], TURN_BLOCK_TOOL);
  assert_memory_equal(s.text[1], "u1", 2);
  assert_int_equal(s.type[2], TURN_BLOCK_NOTICE);

  /* members in any order, whitespace anywhere, unknown members skipped */
  const char *spaced = " {\n \"blocks\" : [ " USER_BLOCK " ,\n " NOTICE_BLOCK " ] ,\n"
                       " \"extra\" : [1, {\"blocks\": 2}],\n \"session\" : { } \n} \n";
  assert_int_equal(history(spaced, &s, &err), TURN_OK);
  assert_int_equal(s.n, 2);
  assert_int_equal(s.type[1], TURN_BLOCK_NOTICE);
}

static void test_block_history_empty_blocks(void **state) {
  (void)state;
  struct seen s;
  assert_int_equal(history("{\"session\":{},\"blocks\":[]}", &s, NULL), TURN_OK);
  assert_int_equal(s.n, 0);
  assert_int_equal(history("{\"blocks\":[ ],\"session\":{}}", &s, NULL), TURN_OK);
  assert_int_equal(s.n, 0);
}

/* A bad block is reported for its index and the walk goes on. */
static void test_block_history_bad_block_is_reported_and_skipped(void **state) {
  (void)state;
  struct seen s;
  turn_error err = {0, NULL, 0, 0};
  const char *doc =
      "{\"session\":{},\"blocks\":[" USER_BLOCK
      ",{\"type\":\"tool\",\"id\":\"u1\",\"tool\":\"t\",\"tier\":3,\"input\":"
      "{},\"truncated\":false,\"status\":null,\"summary\":null,\"approval\":"
      "null,\"duration_ms\":null,\"at\":null}," NOTICE_BLOCK ",7,{\"type\":"
      "\"nope\"}," USER_BLOCK "]}";
  assert_int_equal(history(doc, &s, &err), TURN_OK);
  assert_int_equal(s.n, 6);
  assert_int_equal(s.code[0], TURN_OK);
  assert_int_equal(s.index[1], 1);
  assert_int_equal(s.code[1], TURN_E_VALUE);
  assert_string_equal(s.field[1], "tier");
  /* offsets count from the start of the document */
  assert_int_equal(s.offset[1], strstr(doc, "\"tier\":3") + 7 - doc);
  assert_int_equal(s.code[2], TURN_OK);
  assert_int_equal(s.type[2], TURN_BLOCK_NOTICE);
  assert_int_equal(s.code[3], TURN_E_NOT_OBJECT);
  assert_int_equal(s.offset[3], strstr(doc, ",7,") + 1 - doc);
  assert_int_equal(s.code[4], TURN_E_TYPE);
  assert_string_equal(s.field[4], "type");
  assert_int_equal(s.code[5], TURN_OK);
  assert_int_equal(s.index[5], 5);
}

/* A block's missing field is reported inside that block, not at the end of the
 * document (for "type" it already is: at the end of the block's object). */
static void test_block_history_missing_field_offset_is_in_its_block(void **state) {
  (void)state;
  struct seen s;
  const char *complete = "{\"type\":\"user\",\"text\":\"a\",\"at\":null}";
  const char *missing_at = "{\"type\":\"user\",\"text\":\"a\"}";
  char doc[512];
  /* block 1 lacks its type, block 2 its at */
  int n = snprintf(doc, sizeof doc,
                   "{\"session\":{},\"blocks\":[%s,{\"text\":\"a\",\"at\":null},%s,%s]}",
                   complete, missing_at, NOTICE_BLOCK);
  assert_true(n > 0 && (size_t)n < sizeof doc);
  assert_int_equal(history(doc, &s, NULL), TURN_OK);
  assert_int_equal(s.n, 4);

  const char *b1 = strstr(doc, "{\"text\":\"a\",\"at\":null}");
  size_t b1_end = (size_t)(b1 - doc) + strlen("{\"text\":\"a\",\"at\":null}");
  assert_int_equal(s.code[1], TURN_E_MISSING);
  assert_string_equal(s.field[1], "type");
  assert_true(s.offset[1] >= (size_t)(b1 - doc) && s.offset[1] <= b1_end);

  const char *b2 = strstr(doc, missing_at);
  size_t b2_end = (size_t)(b2 - doc) + strlen(missing_at);
  assert_int_equal(s.code[2], TURN_E_MISSING);
  assert_string_equal(s.field[2], "at");
  if (s.offset[2] < (size_t)(b2 - doc) || s.offset[2] > b2_end)
    print_message("missing \"at\" of block 2 (bytes %zu..%zu) reported at %zu of %zu\n",
                  (size_t)(b2 - doc), b2_end, s.offset[2], strlen(doc));
  assert_true(s.offset[2] >= (size_t)(b2 - doc) && s.offset[2] <= b2_end);
}

static void test_block_history_document_errors(void **state) {
  (void)state;
  static const struct {
    const char *doc;
    int code;
    const char *field; /* NULL: not checked */
  } docs[] = {
      {"{\"blocks\":[]}", TURN_E_MISSING, "session"},
      {"{\"blocks\":[" USER_BLOCK "]}", TURN_E_MISSING, "session"},
      {"{\"session\":{}}", TURN_E_MISSING, "blocks"},
      {"{}", TURN_E_MISSING, "session"},
      {"{\"session\":[],\"blocks\":[]}", TURN_E_FIELD, "session"},
      {"{\"session\":\"s1\",\"blocks\":[]}", TURN_E_FIELD, "session"},
      {"{\"session\":null,\"blocks\":[]}", TURN_E_FIELD, "session"},
      {"{\"session\":{},\"blocks\":{}}", TURN_E_FIELD, "blocks"},
      {"{\"session\":{},\"blocks\":null}", TURN_E_FIELD, "blocks"},
      {"{\"session\":{},\"blocks\":\"[]\"}", TURN_E_FIELD, "blocks"},
      {"{\"session\":{},\"blocks\":[]", TURN_E_JSON, NULL},
      {"{\"session\":{},\"blocks\":[]}x", TURN_E_JSON, NULL},
      {"{\"session\":{},\"blocks\":[],}", TURN_E_JSON, NULL},
      {"{\"session\":{},\"blocks\":[" USER_BLOCK ",]}", TURN_E_JSON, NULL},
      {"{\"session\":{},\"blocks\":[" USER_BLOCK "," USER_BLOCK " " USER_BLOCK "]}",
       TURN_E_JSON, NULL},
      {"{\"session\":{\"t\":\"\xFF\"},\"blocks\":[]}", TURN_E_UTF8, NULL},
      {"", TURN_E_JSON, NULL},
  };
  for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
    struct seen s;
    turn_error err = {0, NULL, 0, 0};
    int rv = history(docs[i].doc, &s, &err);
    if (rv != docs[i].code)
      print_message("case %zu: want %s, got %s\n", i, turn_errname(docs[i].code),
                    turn_errname(rv));
    assert_int_equal(rv, docs[i].code);
    assert_int_equal(err.code, rv);
    if (docs[i].field != NULL) {
      assert_non_null(err.field);
      assert_string_equal(err.field, docs[i].field);
    }
    assert_true(err.offset <= strlen(docs[i].doc));
  }
  /* a document that is not an object is refused before any callback */
  struct seen s;
  int rv = history("[" USER_BLOCK "]", &s, NULL);
  assert_true(rv == TURN_E_JSON || rv == TURN_E_NOT_OBJECT);
  assert_int_equal(s.n, 0);
}

/* Broken JSON inside the array ends the walk with TURN_E_JSON: the broken block
 * and the blocks after it never reach the callback. */
static void test_block_history_invalid_json_in_the_middle(void **state) {
  (void)state;
  struct seen s;
  turn_error err = {0, NULL, 0, 0};
  const char *doc = "{\"session\":{},\"blocks\":[" USER_BLOCK
                    ",{\"type\":\"user\",\"text\":\"a\",\"at\":nul}," NOTICE_BLOCK "]}";
  assert_int_equal(history(doc, &s, &err), TURN_E_JSON);
  assert_int_equal(err.code, TURN_E_JSON);
  const char *broken = strstr(doc, "nul}");
  assert_true(err.offset >= (size_t)(broken - doc) &&
              err.offset <= (size_t)(broken - doc) + 4);
  for (size_t i = 0; i < s.n; i++)
    assert_true(s.index[i] < 1);

  const char *bad_utf8 = "{\"session\":{},\"blocks\":[" USER_BLOCK
                         ",{\"type\":\"user\",\"text\":\"\xE2\x82\",\"at\":null}]}";
  assert_int_equal(history(bad_utf8, &s, &err), TURN_E_UTF8);
  for (size_t i = 0; i < s.n; i++)
    assert_true(s.index[i] < 1);
}

/* A nonzero return from the callback stops the walk and is returned. */
static void test_block_history_callback_stops_the_walk(void **state) {
  (void)state;
  struct seen s;
  memset(&s, 0, sizeof s);
  s.stop_at = 1;
  const char *doc =
      "{\"session\":{},\"blocks\":[" USER_BLOCK "," NOTICE_BLOCK "," USER_BLOCK "]}";
  turn_arena_reset(&arena);
  assert_int_equal(turn_history_parse(doc, strlen(doc), &arena, record, &s, NULL), 42);
  assert_int_equal(s.n, 2);
}

/* Failing the N-th allocation for every N: TURN_OK or TURN_E_NOMEM, and nothing
 * leaks. */
static void test_block_history_allocation_failure(void **state) {
  (void)state;
  const char *doc =
      "{\"session\":{},\"blocks\":[" USER_BLOCK "," TOOL_BLOCK "," NOTICE_BLOCK "]}";
  bool succeeded = false;
  for (unsigned long n = 1; n < 100 && !succeeded; n++) {
    struct support_failmem fm;
    support_failmem_init(&fm, n);
    turn_arena a;
    turn_arena_init(&a, &fm.mem);
    struct seen s;
    memset(&s, 0, sizeof s);
    s.stop_at = -1;
    int rv = turn_history_parse(doc, strlen(doc), &a, record, &s, NULL);
    if (rv == TURN_OK) {
      succeeded = true;
      assert_int_equal(s.n, 3);
    } else {
      assert_int_equal(rv, TURN_E_NOMEM);
    }
    turn_arena_fini(&a);
    assert_int_equal(fm.live, 0);
  }
  assert_true(succeeded);
}

/* Memory is bounded by one block, not the document: the arena is reset after each
 * callback, so a history of thousands of blocks keeps one arena block alive. */
static void test_block_history_memory_is_bounded_by_one_block(void **state) {
  (void)state;
  size_t nblocks = 5000, unit = strlen(USER_BLOCK) + 1;
  size_t cap = nblocks * unit + 64;
  char *doc = malloc(cap);
  assert_non_null(doc);
  size_t w = (size_t)snprintf(doc, cap, "{\"session\":{},\"blocks\":[");
  for (size_t i = 0; i < nblocks; i++) {
    memcpy(doc + w, USER_BLOCK, unit - 1);
    w += unit - 1;
    doc[w++] = i + 1 < nblocks ? ',' : ']';
  }
  doc[w++] = '}';
  struct support_failmem fm;
  support_failmem_init(&fm, 0);
  turn_arena a;
  turn_arena_init(&a, &fm.mem);
  struct seen s;
  memset(&s, 0, sizeof s);
  s.stop_at = -1;
  size_t count = 0;
  assert_int_equal(turn_history_parse(doc, w, &a, count_blocks, &count, NULL), TURN_OK);
  assert_int_equal(count, nblocks);
  assert_true(fm.live <= 2);
  assert_true(fm.calls < 10);
  turn_arena_fini(&a);
  assert_int_equal(fm.live, 0);
  free(doc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_block_iso8601_valid_table),
      cmocka_unit_test(test_block_every_type_round_trips),
      cmocka_unit_test(test_block_tool_nulls_parse_as_unknown),
      cmocka_unit_test(test_block_every_field_missing_ill_typed_or_out_of_range),
      cmocka_unit_test(test_block_tool_input_forms),
      cmocka_unit_test(test_block_not_an_object),
      cmocka_unit_test(test_block_encode_out_of_range_is_invalid),
      cmocka_unit_test(test_block_encode_cap_too_small_is_toobig),
      cmocka_unit_test(test_block_parse_of_encode_is_identity),
      cmocka_unit_test(test_block_history_good_document),
      cmocka_unit_test(test_block_history_empty_blocks),
      cmocka_unit_test(test_block_history_bad_block_is_reported_and_skipped),
      cmocka_unit_test(test_block_history_missing_field_offset_is_in_its_block),
      cmocka_unit_test(test_block_history_document_errors),
      cmocka_unit_test(test_block_history_invalid_json_in_the_middle),
      cmocka_unit_test(test_block_history_callback_stops_the_walk),
      cmocka_unit_test(test_block_history_allocation_failure),
      cmocka_unit_test(test_block_history_memory_is_bounded_by_one_block),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
