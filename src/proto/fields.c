/* Fields as data: the key table, the per-kind readers and writers, and the wire
 * order of every event and block type. A field's kind decides both how it is
 * validated when read and how it is written, so the two cannot disagree. */
#include "fields.h"

#include "error.h"
#include "json_compact.h"
#include "json_write.h"
#include "names.h"
#include "number.h"
#include "utf8.h"

#include <stddef.h>
#include <string.h>

const char *const turn__key_names[TURN__K__COUNT] = {
    "v",          "seq",         "type",    "turn",       "session",       "delta",
    "id",         "tool",        "tier",    "input",      "preview",       "truncated",
    "message",    "status",      "summary", "approval",   "request",       "effect",
    "expires_at", "decision",    "title",   "html",       "delay_seconds", "text",
    "action",     "stop_reason", "at",      "duration_ms"};

/* Keys by length, each stored as key + 1 so that 0 ends a list: every line looks
 * up several keys, so this runs once per member. */
static int key_lookup(const char *p, size_t len) {
#define K(name) (TURN__K_##name + 1)
  static const unsigned char by_len[14][7] = {
      [1] = {K(V)},
      [2] = {K(ID), K(AT)},
      [3] = {K(SEQ)},
      [4] = {K(TYPE), K(TURN), K(TOOL), K(TIER), K(HTML), K(TEXT)},
      [5] = {K(DELTA), K(INPUT), K(TITLE)},
      [6] = {K(STATUS), K(EFFECT), K(ACTION)},
      [7] = {K(SESSION), K(PREVIEW), K(MESSAGE), K(SUMMARY), K(REQUEST)},
      [8] = {K(APPROVAL), K(DECISION)},
      [9] = {K(TRUNCATED)},
      [10] = {K(EXPIRES_AT)},
      [11] = {K(STOP_REASON), K(DURATION_MS)},
      [13] = {K(DELAY_SECONDS)},
  };
#undef K
  if (len >= sizeof by_len / sizeof by_len[0]) return -1;
  const unsigned char *k = by_len[len];
  for (size_t i = 0; i < sizeof by_len[0] && k[i] != 0; i++)
    if (memcmp(turn__key_names[k[i] - 1], p, len) == 0) return k[i] - 1;
  return -1;
}

int turn__read_members(turn__scan *s, turn__members *m) {
  m->present = 0;
  int rv = turn__scan_object_begin(s);
  if (rv <= 0) return rv;
  for (;;) {
    turn_str key;
    rv = turn__scan_key(s, &key);
    if (rv != TURN_OK) return rv;
    int k = key.len > 0 ? key_lookup(key.p, key.len) : -1;
    if (k < 0) {
      turn__jval skipped;
      rv = turn__scan_value(s, &skipped, false);
    } else {
      rv = turn__scan_value(s, &m->v[k], true);
      m->present |= 1u << k;
    }
    if (rv != TURN_OK) return rv;
    rv = turn__scan_member_end(s);
    if (rv <= 0) return rv;
  }
}

int turn__read_object_text(turn__scan *s, const char *text, size_t len, turn_arena *arena,
                           turn__members *m, turn_error *err) {
  turn__scan_init(s, text, len, arena);
  turn__scan_ws(s);
  int rv;
  if (s->p < s->end && *s->p != '{') {
    rv = turn__scan_not_object(s);
  } else {
    rv = turn__read_members(s, m);
    if (rv == TURN_OK) rv = turn__scan_finish(s);
  }
  if (rv != TURN_OK) return turn__set_error(err, rv, NULL, s->err_off);
  return TURN_OK;
}

/* ------------------------------------------------------------- readers */

struct ctx {
  const turn__members *m;
  const turn__scan *s;
  turn_arena *arena;
  turn_error *err;
};

static int field_fail(struct ctx *c, int code, int key) {
  const turn__jval *v = &c->m->v[key];
  /* A missing field is blamed on the end of its object, where it should have been. */
  size_t off = (c->m->present >> key) & 1 ? (size_t)(v->raw.p - c->s->beg)
                                          : (size_t)(c->s->p - c->s->beg);
  return turn__set_error(c->err, code, turn__key_names[key], off);
}

/* The value of key, or NULL when absent. */
static const turn__jval *get(struct ctx *c, int key) {
  return (c->m->present >> key) & 1 ? &c->m->v[key] : NULL;
}

/* An enumeration given as a string; from_name returns -1 for unknown names. */
static int read_enum(struct ctx *c, int key, bool nullable, int (*from_name)(turn_str),
                     int null_value, int *out) {
  const turn__jval *v = get(c, key);
  if (v == NULL) return field_fail(c, TURN_E_MISSING, key);
  if (nullable && v->kind == TURN__J_NULL) {
    *out = null_value;
    return TURN_OK;
  }
  if (v->kind != TURN__J_STRING) return field_fail(c, TURN_E_FIELD, key);
  int i = from_name(v->str);
  if (i < 0) return field_fail(c, TURN_E_VALUE, key);
  *out = i;
  return TURN_OK;
}

static int read_input(struct ctx *c, bool unknown_allowed, turn_input *in) {
  const turn__jval *truncated = get(c, TURN__K_TRUNCATED);
  const turn__jval *input = get(c, TURN__K_INPUT);
  if (truncated == NULL) return field_fail(c, TURN_E_MISSING, TURN__K_TRUNCATED);
  if (truncated->kind != TURN__J_TRUE && truncated->kind != TURN__J_FALSE)
    return field_fail(c, TURN_E_FIELD, TURN__K_TRUNCATED);
  if (input == NULL) return field_fail(c, TURN_E_MISSING, TURN__K_INPUT);
  turn_input r = {{NULL, 0}, {NULL, 0}, truncated->kind == TURN__J_TRUE};
  if (!r.truncated) {
    if (input->kind == TURN__J_NULL && unknown_allowed) {
      *in = r;
      return TURN_OK;
    }
    if (input->kind != TURN__J_OBJECT) return field_fail(c, TURN_E_FIELD, TURN__K_INPUT);
    /* Valid here, but too deep for the history document that will carry it. */
    if (input->nest + TURN__INPUT_DEPTH > TURN__JSON_MAX_DEPTH)
      return field_fail(c, TURN_E_VALUE, TURN__K_INPUT);
    if (memchr(input->raw.p, '\n', input->raw.len) == NULL &&
        memchr(input->raw.p, '\r', input->raw.len) == NULL) {
      char *copy = turn_arena_alloc(c->arena, input->raw.len);
      if (copy == NULL) return TURN_E_NOMEM;
      memcpy(copy, input->raw.p, input->raw.len);
      r.json.p = copy;
      r.json.len = input->raw.len;
    } else if (turn__json_compact(input->raw.p, input->raw.len, c->arena, &r.json) !=
               TURN_OK) {
      /* Line breaks (whitespace, in valid JSON) would split an encoded line. */
      return TURN_E_NOMEM;
    }
  } else {
    if (input->kind != TURN__J_NULL) return field_fail(c, TURN_E_FIELD, TURN__K_INPUT);
    const turn__jval *preview = get(c, TURN__K_PREVIEW);
    if (preview == NULL) return field_fail(c, TURN_E_MISSING, TURN__K_PREVIEW);
    if (preview->kind != TURN__J_STRING)
      return field_fail(c, TURN_E_FIELD, TURN__K_PREVIEW);
    if (preview->str.len > 4 * (size_t)TURN_INPUT_LIMIT ||
        turn__utf8_count(preview->str.p, preview->str.len) > TURN_INPUT_LIMIT)
      return field_fail(c, TURN_E_VALUE, TURN__K_PREVIEW);
    r.preview = preview->str;
  }
  *in = r;
  return TURN_OK;
}

#define AT(obj, off, type) ((type *)((char *)(obj) + (off)))

static int read_field(struct ctx *c, const turn__field *f, void *obj) {
  const turn__jval *v = get(c, f->key);
  int i;
  int rv;
  switch ((enum turn__kind)f->kind) {
  case TURN__KIND_STR:
  case TURN__KIND_ID:
    if (v == NULL) return field_fail(c, TURN_E_MISSING, f->key);
    if (v->kind != TURN__J_STRING) return field_fail(c, TURN_E_FIELD, f->key);
    if (f->kind == TURN__KIND_ID && v->str.len == 0)
      return field_fail(c, TURN_E_VALUE, f->key);
    *AT(obj, f->off, turn_str) = v->str;
    return TURN_OK;
  case TURN__KIND_OPT_STR:
    if (v != NULL && v->kind != TURN__J_STRING && v->kind != TURN__J_NULL)
      return field_fail(c, TURN_E_FIELD, f->key);
    *AT(obj, f->off, turn_str) =
        v != NULL && v->kind == TURN__J_STRING ? v->str : (turn_str){NULL, 0};
    return TURN_OK;
  case TURN__KIND_STR_OR_NULL:
    if (v == NULL) return field_fail(c, TURN_E_MISSING, f->key);
    if (v->kind != TURN__J_STRING && v->kind != TURN__J_NULL)
      return field_fail(c, TURN_E_FIELD, f->key);
    *AT(obj, f->flag_off, bool) = v->kind == TURN__J_STRING;
    *AT(obj, f->off, turn_str) = v->kind == TURN__J_STRING ? v->str : (turn_str){NULL, 0};
    return TURN_OK;
  case TURN__KIND_TIER: {
    if (v == NULL) return field_fail(c, TURN_E_MISSING, f->key);
    if (v->kind == TURN__J_NULL) {
      *AT(obj, f->off, int) = TURN_TIER_NULL;
      return TURN_OK;
    }
    if (v->kind != TURN__J_NUMBER || !v->is_int)
      return field_fail(c, TURN_E_FIELD, f->key);
    int64_t tier = turn__jval_int(v);
    if (tier < 0 || tier > 2) return field_fail(c, TURN_E_VALUE, f->key);
    *AT(obj, f->off, int) = (int)tier;
    return TURN_OK;
  }
  case TURN__KIND_INPUT:
  case TURN__KIND_INPUT_OR_NULL:
    return read_input(c, f->kind == TURN__KIND_INPUT_OR_NULL,
                      AT(obj, f->off, turn_input));
  case TURN__KIND_STATUS:
  case TURN__KIND_STATUS_OR_NULL:
    rv = read_enum(c, f->key, f->kind == TURN__KIND_STATUS_OR_NULL,
                   turn__status_from_name, TURN_STATUS_NULL, &i);
    if (rv == TURN_OK) *AT(obj, f->off, turn_status) = (turn_status)i;
    return rv;
  case TURN__KIND_APPROVAL:
    rv = read_enum(c, f->key, true, turn__approval_from_name, TURN_APPROVAL_NULL, &i);
    if (rv == TURN_OK) *AT(obj, f->off, turn_approval) = (turn_approval)i;
    return rv;
  case TURN__KIND_DECISION:
    rv = read_enum(c, f->key, false, turn__decision_from_name, 0, &i);
    if (rv == TURN_OK) *AT(obj, f->off, turn_decision) = (turn_decision)i;
    return rv;
  case TURN__KIND_STOP:
    rv = read_enum(c, f->key, false, turn_stop_reason_from_name, 0, &i);
    if (rv == TURN_OK) *AT(obj, f->off, turn_stop_reason) = (turn_stop_reason)i;
    return rv;
  case TURN__KIND_TIME_OR_NULL:
  case TURN__KIND_SECONDS: {
    bool nullable = f->kind == TURN__KIND_TIME_OR_NULL;
    if (v == NULL) return field_fail(c, TURN_E_MISSING, f->key);
    if (nullable && v->kind == TURN__J_NULL) {
      *AT(obj, f->flag_off, bool) = false;
      *AT(obj, f->off, double) = 0;
      return TURN_OK;
    }
    if (v->kind != TURN__J_NUMBER) return field_fail(c, TURN_E_FIELD, f->key);
    double d;
    rv = turn__parse_double(v->raw.p, v->raw.len, c->arena, &d);
    if (rv != TURN_OK) return rv;
    if (!(d >= 0)) return field_fail(c, TURN_E_VALUE, f->key);
    if (nullable) *AT(obj, f->flag_off, bool) = true;
    *AT(obj, f->off, double) = d;
    return TURN_OK;
  }
  case TURN__KIND_MS_OR_NULL: {
    if (v == NULL) return field_fail(c, TURN_E_MISSING, f->key);
    if (v->kind == TURN__J_NULL) {
      *AT(obj, f->flag_off, bool) = false;
      *AT(obj, f->off, int64_t) = 0;
      return TURN_OK;
    }
    if (v->kind != TURN__J_NUMBER || !v->is_int)
      return field_fail(c, TURN_E_FIELD, f->key);
    int64_t ms = turn__jval_int(v);
    if (ms < 0) return field_fail(c, TURN_E_VALUE, f->key);
    *AT(obj, f->flag_off, bool) = true;
    *AT(obj, f->off, int64_t) = ms;
    return TURN_OK;
  }
  case TURN__KIND_AT:
    if (v == NULL) return field_fail(c, TURN_E_MISSING, f->key);
    if (v->kind == TURN__J_NULL) {
      *AT(obj, f->off, turn_str) = (turn_str){NULL, 0};
      return TURN_OK;
    }
    if (v->kind != TURN__J_STRING) return field_fail(c, TURN_E_FIELD, f->key);
    if (!turn_iso8601_valid(v->str)) return field_fail(c, TURN_E_VALUE, f->key);
    *AT(obj, f->off, turn_str) = v->str;
    return TURN_OK;
  }
  return TURN_E_INVALID;
}

int turn__apply_schema(const turn__schema *sc, const turn__members *m, void *obj,
                       const turn__scan *s, turn_arena *arena, turn_error *err) {
  struct ctx c = {m, s, arena, err};
  for (size_t i = 0; i < sc->n; i++) {
    int rv = read_field(&c, &sc->fields[i], obj);
    if (rv != TURN_OK) {
      if (rv == TURN_E_NOMEM) turn__set_error(err, rv, NULL, 0);
      return rv;
    }
  }
  return TURN_OK;
}

/* ------------------------------------------------------------- writers */

static int write_key(turn_buf *out, int key) {
  /* ,"key": */
  const char *name = turn__key_names[key];
  size_t n = strlen(name);
  int rv = turn_buf_reserve(out, n + 4);
  if (rv != TURN_OK) return rv;
  char *w = out->data + out->len;
  w[0] = ',';
  w[1] = '"';
  memcpy(w + 2, name, n);
  w[n + 2] = '"';
  w[n + 3] = ':';
  out->len += n + 4;
  return TURN_OK;
}

static int write_lit(turn_buf *out, const char *lit) {
  return turn_buf_append(out, lit, strlen(lit));
}

static int write_name(turn_buf *out, const char *name) {
  if (name == NULL) return TURN_E_INVALID;
  return turn__json_write_str(out, name, strlen(name));
}

static int write_input(turn_buf *out, const turn_input *in, bool unknown_allowed) {
  int rv;
  if (!in->truncated) {
    if (in->json.len == 0 && unknown_allowed) {
      rv = write_lit(out, "null");
    } else {
      /* The input is raw JSON from the producer: check it is one object so the
       * line stays valid JSON whatever we were handed. */
      /* A line break in valid JSON can only be whitespace, and would split the
       * line: the input must come compact (as turn_input_from_json makes it). */
      if (in->json.len == 0 || in->json.p[0] != '{' ||
          memchr(in->json.p, '\n', in->json.len) != NULL ||
          memchr(in->json.p, '\r', in->json.len) != NULL ||
          turn__json_validate_at(in->json.p, in->json.len, TURN__INPUT_DEPTH) != TURN_OK)
        return TURN_E_INVALID;
      rv = turn_buf_append(out, in->json.p, in->json.len);
    }
    if (rv == TURN_OK) rv = write_key(out, TURN__K_TRUNCATED);
    if (rv == TURN_OK) rv = write_lit(out, "false");
    return rv;
  }
  /* A preview the parser would refuse must not be written either. */
  if (!turn__utf8_valid(in->preview.p, in->preview.len) ||
      turn__utf8_count(in->preview.p, in->preview.len) > TURN_INPUT_LIMIT ||
      (in->preview.len > 0 && memchr(in->preview.p, 0, in->preview.len) != NULL))
    return TURN_E_INVALID;
  rv = write_lit(out, "null");
  if (rv == TURN_OK) rv = write_key(out, TURN__K_PREVIEW);
  if (rv == TURN_OK) rv = turn__json_write_str(out, in->preview.p, in->preview.len);
  if (rv == TURN_OK) rv = write_key(out, TURN__K_TRUNCATED);
  if (rv == TURN_OK) rv = write_lit(out, "true");
  return rv;
}

static int write_field(turn_buf *out, const turn__field *f, const void *obj) {
  const void *at = (const char *)obj + f->off;
  const bool *flag = (const bool *)((const char *)obj + f->flag_off);
  const turn_str *str = at;
  if (f->kind == TURN__KIND_OPT_STR && str->len == 0) return TURN_OK;
  int rv = write_key(out, f->key);
  if (rv != TURN_OK) return rv;
  switch ((enum turn__kind)f->kind) {
  case TURN__KIND_ID:
    if (str->len == 0) return TURN_E_INVALID; /* the parser refuses an empty id */
    return turn__json_write_str(out, str->p, str->len);
  case TURN__KIND_STR:
  case TURN__KIND_OPT_STR:
    return turn__json_write_str(out, str->p, str->len);
  case TURN__KIND_STR_OR_NULL:
    return *flag ? turn__json_write_str(out, str->p, str->len) : write_lit(out, "null");
  case TURN__KIND_TIER: {
    int tier = *(const int *)at;
    if (tier == TURN_TIER_NULL) return write_lit(out, "null");
    if (tier < 0 || tier > 2) return TURN_E_INVALID;
    return turn__json_write_u64(out, (uint64_t)tier);
  }
  case TURN__KIND_INPUT:
  case TURN__KIND_INPUT_OR_NULL:
    return write_input(out, at, f->kind == TURN__KIND_INPUT_OR_NULL);
  case TURN__KIND_STATUS:
  case TURN__KIND_STATUS_OR_NULL: {
    turn_status s = *(const turn_status *)at;
    if (s == TURN_STATUS_NULL && f->kind == TURN__KIND_STATUS_OR_NULL)
      return write_lit(out, "null");
    return write_name(out, turn_status_name(s));
  }
  case TURN__KIND_APPROVAL: {
    turn_approval a = *(const turn_approval *)at;
    if (a == TURN_APPROVAL_NULL) return write_lit(out, "null");
    return write_name(out, turn_approval_name(a));
  }
  case TURN__KIND_DECISION:
    return write_name(out, turn_decision_name(*(const turn_decision *)at));
  case TURN__KIND_STOP:
    return write_name(out, turn_stop_reason_name(*(const turn_stop_reason *)at));
  case TURN__KIND_TIME_OR_NULL:
  case TURN__KIND_SECONDS: {
    if (f->kind == TURN__KIND_TIME_OR_NULL && !*flag) return write_lit(out, "null");
    double d = *(const double *)at;
    if (!(d >= 0)) return TURN_E_INVALID;
    return turn__json_write_double(out, d);
  }
  case TURN__KIND_MS_OR_NULL: {
    if (!*flag) return write_lit(out, "null");
    int64_t ms = *(const int64_t *)at;
    if (ms < 0) return TURN_E_INVALID;
    return turn__json_write_i64(out, ms);
  }
  case TURN__KIND_AT:
    if (str->len == 0) return write_lit(out, "null");
    if (!turn_iso8601_valid(*str)) return TURN_E_INVALID;
    return turn__json_write_str(out, str->p, str->len);
  }
  return TURN_E_INVALID;
}

int turn__encode_schema(const turn__schema *sc, const void *obj, turn_buf *out) {
  for (size_t i = 0; i < sc->n; i++) {
    int rv = write_field(out, &sc->fields[i], obj);
    if (rv != TURN_OK) return rv;
  }
  return TURN_OK;
}

/* ------------------------------------------------------------- schemas */

#define F(key, kind, type, member) \
  { TURN__K_##key, TURN__KIND_##kind, (unsigned short)offsetof(type, member), 0 }
#define FN(key, kind, type, member, flag)                                     \
  {                                                                           \
    TURN__K_##key, TURN__KIND_##kind, (unsigned short)offsetof(type, member), \
        (unsigned short)offsetof(type, flag)                                  \
  }
#define E(key, kind, member) F(key, kind, turn_event, member)
#define B(key, kind, member) F(key, kind, turn_block, member)

static const turn__field ev_turn[] = {E(TURN, ID, turn.turn),
                                      E(SESSION, ID, turn.session)};
static const turn__field ev_text[] = {E(DELTA, STR, text.delta)};
static const turn__field ev_tool_use[] = {
    E(ID, ID, tool_use.id), E(TOOL, ID, tool_use.tool), E(TIER, TIER, tool_use.tier)};
static const turn__field ev_tool_input[] = {E(ID, ID, tool_input.id),
                                            E(TOOL, ID, tool_input.tool),
                                            E(INPUT, INPUT, tool_input.input)};
static const turn__field ev_tool_progress[] = {E(ID, ID, tool_progress.id),
                                               E(TOOL, ID, tool_progress.tool),
                                               E(MESSAGE, STR, tool_progress.message)};
static const turn__field ev_tool_result[] = {
    E(ID, ID, tool_result.id), E(TOOL, ID, tool_result.tool),
    E(STATUS, STATUS, tool_result.status), E(SUMMARY, STR, tool_result.summary),
    E(APPROVAL, APPROVAL, tool_result.approval)};
static const turn__field ev_approval[] = {E(REQUEST, ID, approval.request),
                                          E(TOOL, ID, approval.tool),
                                          E(TIER, TIER, approval.tier),
                                          E(EFFECT, STR, approval.effect),
                                          E(INPUT, INPUT, approval.input),
                                          FN(EXPIRES_AT, TIME_OR_NULL, turn_event,
                                             approval.expires_at_s,
                                             approval.has_expires_at)};
static const turn__field ev_approval_decided[] = {
    E(REQUEST, ID, approval_decided.request),
    E(DECISION, DECISION, approval_decided.decision)};
static const turn__field ev_widget[] = {E(ID, ID, widget.id), E(TITLE, STR, widget.title),
                                        E(HTML, STR, widget.html)};
static const turn__field ev_throttled[] = {
    E(DELAY_SECONDS, SECONDS, throttled.delay_seconds)};
static const turn__field ev_notice[] = {E(TEXT, STR, notice.text)};
static const turn__field ev_guard[] = {E(ACTION, ID, guard.action),
                                       E(REQUEST, OPT_STR, guard.request),
                                       E(MESSAGE, OPT_STR, guard.message)};
static const turn__field ev_end[] = {E(STOP_REASON, STOP, end.stop_reason)};
static const turn__field ev_error[] = {E(MESSAGE, STR, error.message)};

#define SCHEMA(a) \
  { a, sizeof a / sizeof a[0] }

const turn__schema turn__event_schemas[TURN_EV__COUNT] = {
    [TURN_EV_TURN] = SCHEMA(ev_turn),
    [TURN_EV_TEXT] = SCHEMA(ev_text),
    [TURN_EV_REASONING] = SCHEMA(ev_text),
    [TURN_EV_TOOL_USE] = SCHEMA(ev_tool_use),
    [TURN_EV_TOOL_INPUT] = SCHEMA(ev_tool_input),
    [TURN_EV_TOOL_PROGRESS] = SCHEMA(ev_tool_progress),
    [TURN_EV_TOOL_RESULT] = SCHEMA(ev_tool_result),
    [TURN_EV_APPROVAL] = SCHEMA(ev_approval),
    [TURN_EV_APPROVAL_DECIDED] = SCHEMA(ev_approval_decided),
    [TURN_EV_WIDGET] = SCHEMA(ev_widget),
    [TURN_EV_THROTTLED] = SCHEMA(ev_throttled),
    [TURN_EV_NOTICE] = SCHEMA(ev_notice),
    [TURN_EV_GUARD] = SCHEMA(ev_guard),
    [TURN_EV_END] = SCHEMA(ev_end),
    [TURN_EV_ERROR] = SCHEMA(ev_error),
};

static const turn__field bl_text[] = {B(TEXT, STR, text.text), B(AT, AT, at)};
static const turn__field bl_tool[] = {
    B(ID, ID, tool.id),
    B(TOOL, ID, tool.tool),
    B(TIER, TIER, tool.tier),
    B(INPUT, INPUT_OR_NULL, tool.input),
    B(STATUS, STATUS_OR_NULL, tool.status),
    FN(SUMMARY, STR_OR_NULL, turn_block, tool.summary, tool.has_summary),
    B(APPROVAL, APPROVAL, tool.approval),
    FN(DURATION_MS, MS_OR_NULL, turn_block, tool.duration_ms, tool.has_duration_ms),
    B(AT, AT, at)};
static const turn__field bl_widget[] = {B(ID, ID, widget.id), B(TITLE, STR, widget.title),
                                        B(HTML, STR, widget.html), B(AT, AT, at)};

const turn__schema turn__block_schemas[TURN_BLOCK__COUNT] = {
    [TURN_BLOCK_USER] = SCHEMA(bl_text),      [TURN_BLOCK_ASSISTANT] = SCHEMA(bl_text),
    [TURN_BLOCK_REASONING] = SCHEMA(bl_text), [TURN_BLOCK_TOOL] = SCHEMA(bl_tool),
    [TURN_BLOCK_WIDGET] = SCHEMA(bl_widget),  [TURN_BLOCK_NOTICE] = SCHEMA(bl_text),
};
