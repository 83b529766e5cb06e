/* History blocks: parse and encode one block, and walk a whole history document
 * {"session": {...}, "blocks": [...]} one block at a time, so checking a long
 * history needs the memory of one block, not of the document. */
#include "error.h"
#include "fields.h"
#include "json_write.h"
#include "names.h"

#include <string.h>

/* The block whose members are m; s gives the offsets of field errors. */
static int block_from_members(const turn__members *m, const turn__scan *s, turn_block *b,
                              turn_error *err) {
  const turn__jval *type = &m->v[TURN__K_TYPE];
  if (!(m->present & (1u << TURN__K_TYPE)))
    return turn__set_error(err, TURN_E_MISSING, "type", (size_t)(s->p - s->beg));
  if (type->kind != TURN__J_STRING)
    return turn__set_error(err, TURN_E_FIELD, "type", (size_t)(type->raw.p - s->beg));
  int t = turn__block_type_from_name(type->str);
  if (t < 0)
    return turn__set_error(err, TURN_E_TYPE, "type", (size_t)(type->raw.p - s->beg));
  turn_block out;
  memset(&out, 0, sizeof out);
  out.type = (turn_block_type)t;
  int rv = turn__apply_schema(&turn__block_schemas[t], m, &out, s, s->arena, err);
  if (rv != TURN_OK) return rv;
  *b = out;
  return TURN_OK;
}

int turn_block_parse(turn_block *b, turn_arena *arena, const char *json, size_t len,
                     turn_error *err) {
  turn__members m;
  turn__scan s;
  int rv = turn__read_object_text(&s, json, len, arena, &m, err);
  if (rv != TURN_OK) return rv;
  return block_from_members(&m, &s, b, err);
}

int turn_block_encode(const turn_block *b, turn_buf *out) {
  if ((unsigned)b->type >= TURN_BLOCK__COUNT) return TURN_E_INVALID;
  size_t saved = out->len;
  const char *type = turn_block_type_name(b->type);
  int rv = turn_buf_append(out, "{\"type\":", 8);
  if (rv == TURN_OK) rv = turn__json_write_str(out, type, strlen(type));
  if (rv == TURN_OK) rv = turn__encode_schema(&turn__block_schemas[b->type], b, out);
  if (rv == TURN_OK) rv = turn_buf_append(out, "}", 1);
  if (rv != TURN_OK) out->len = saved;
  return rv;
}

static bool key_is(turn_str key, const char *name) {
  return key.len == strlen(name) && memcmp(key.p, name, key.len) == 0;
}

/* The "blocks" array: each element goes to cb; JSON errors end the document. */
static int walk_blocks(turn__scan *s, turn_block_cb cb, void *ctx, turn_error *err) {
  int rv = turn__scan_array_begin(s);
  if (rv <= 0) return rv < 0 ? turn__set_error(err, rv, "blocks", s->err_off) : TURN_OK;
  for (size_t index = 0;; index++) {
    turn__scan_ws(s);
    turn_block b;
    turn_error block_err = {TURN_OK, NULL, 0, 0};
    if (s->p < s->end && *s->p == '{') {
      turn__members m;
      rv = turn__read_members(s, &m);
      if (rv != TURN_OK) return turn__set_error(err, rv, "blocks", s->err_off);
      rv = block_from_members(&m, s, &b, &block_err);
      if (rv == TURN_E_NOMEM) return turn__set_error(err, rv, NULL, 0);
    } else {
      turn__jval other;
      rv = turn__scan_value(s, &other, false);
      if (rv != TURN_OK) return turn__set_error(err, rv, "blocks", s->err_off);
      rv = turn__set_error(&block_err, TURN_E_NOT_OBJECT, NULL,
                           (size_t)(other.raw.p - s->beg));
    }
    int stop =
        cb(ctx, index, rv == TURN_OK ? &b : NULL, rv == TURN_OK ? NULL : &block_err);
    turn_arena_reset(s->arena);
    if (stop != 0) return stop;
    rv = turn__scan_element_end(s);
    if (rv < 0) return turn__set_error(err, rv, "blocks", s->err_off);
    if (rv == 0) return TURN_OK;
  }
}

int turn_history_parse(const char *doc, size_t len, turn_arena *arena, turn_block_cb cb,
                       void *ctx, turn_error *err) {
  turn__scan s;
  turn__scan_init(&s, doc, len, arena);
  bool has_session = false, has_blocks = false;
  turn__scan_ws(&s);
  if (s.p < s.end && *s.p != '{')
    return turn__set_error(err, turn__scan_not_object(&s), NULL, s.err_off);
  int rv = turn__scan_object_begin(&s);
  if (rv < 0) return turn__set_error(err, rv, NULL, s.err_off);
  while (rv > 0) {
    turn_str key;
    rv = turn__scan_key(&s, &key);
    if (rv != TURN_OK) return turn__set_error(err, rv, NULL, s.err_off);
    if (key_is(key, "blocks")) {
      if (s.p >= s.end || *s.p != '[')
        return turn__set_error(err, TURN_E_FIELD, "blocks", (size_t)(s.p - doc));
      /* Blocks go to the callback as they are read, so a second "blocks" cannot
       * replace the first as a duplicate key otherwise would. */
      if (has_blocks)
        return turn__set_error(err, TURN_E_VALUE, "blocks", (size_t)(s.p - doc));
      has_blocks = true;
      rv = walk_blocks(&s, cb, ctx, err);
      if (rv != TURN_OK) return rv;
    } else {
      turn__jval v;
      rv = turn__scan_value(&s, &v, false);
      if (rv != TURN_OK) return turn__set_error(err, rv, NULL, s.err_off);
      if (key_is(key, "session")) {
        if (v.kind != TURN__J_OBJECT)
          return turn__set_error(err, TURN_E_FIELD, "session", (size_t)(v.raw.p - doc));
        has_session = true;
      }
    }
    rv = turn__scan_member_end(&s);
    if (rv < 0) return turn__set_error(err, rv, NULL, s.err_off);
  }
  rv = turn__scan_finish(&s);
  if (rv != TURN_OK) return turn__set_error(err, rv, NULL, s.err_off);
  if (!has_session) return turn__set_error(err, TURN_E_MISSING, "session", len);
  if (!has_blocks) return turn__set_error(err, TURN_E_MISSING, "blocks", len);
  return TURN_OK;
}
