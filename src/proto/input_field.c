/* Input fields: a tool input travels inline when its compact JSON fits in
 * TURN_INPUT_LIMIT bytes, else as a preview of its first TURN_INPUT_LIMIT code
 * points. The compact form is canonical (no whitespace outside strings, strings
 * escaped as the encoder escapes them), so every producer cuts at the same place. */
#include "fields.h"
#include "json_write.h"
#include "utf8.h"

#include <string.h>

/* Writes the compact form of valid JSON text[0..len) into out. */
static int compact(const char *text, size_t len, turn_arena *arena, turn_buf *out) {
  turn__scan s;
  turn__scan_init(&s, text, len, arena);
  size_t i = 0;
  while (i < len) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      i++;
      continue;
    }
    if (c != '"') {
      int rv = turn_buf_append(out, &c, 1);
      if (rv != TURN_OK) return rv;
      i++;
      continue;
    }
    /* A string: decode it, then write it back in canonical escaping. */
    s.p = text + i;
    turn__jval v;
    int rv = turn__scan_value(&s, &v, true);
    if (rv != TURN_OK) return rv;
    rv = turn__json_write_str(out, v.str.p, v.str.len);
    if (rv != TURN_OK) return rv;
    i = (size_t)(s.p - text);
  }
  return TURN_OK;
}

int turn_input_from_json(turn_input *out, turn_arena *arena, const char *json, size_t len,
                         turn_error *err) {
  turn__scan s;
  turn__jval v;
  turn__scan_init(&s, json, len, arena);
  int rv = turn__scan_value(&s, &v, false);
  if (rv == TURN_OK) rv = turn__scan_finish(&s);
  if (rv != TURN_OK) return turn__set_error(err, rv, "input", s.err_off);
  if (v.kind != TURN__J_OBJECT)
    return turn__set_error(err, TURN_E_NOT_OBJECT, "input", 0);
  if (v.nest + TURN__INPUT_DEPTH > TURN__JSON_MAX_DEPTH)
    return turn__set_error(err, TURN_E_VALUE, "input", 0); /* too deep to carry */

  turn_buf buf;
  turn_buf_init(&buf, SIZE_MAX, arena->mem);
  rv = compact(v.raw.p, v.raw.len, arena, &buf);
  char *copy = NULL;
  if (rv == TURN_OK) {
    copy = turn_arena_alloc(arena, buf.len + 1);
    if (copy == NULL) rv = TURN_E_NOMEM;
  }
  if (rv != TURN_OK) {
    turn_buf_fini(&buf);
    return turn__set_error(err, rv, NULL, 0);
  }
  memcpy(copy, buf.data, buf.len);
  copy[buf.len] = '\0';
  turn_input r = {{copy, buf.len}, {NULL, 0}, false};
  if (buf.len > TURN_INPUT_LIMIT) {
    r.truncated = true;
    r.json = (turn_str){NULL, 0};
    r.preview = (turn_str){copy, turn__utf8_prefix(copy, buf.len, TURN_INPUT_LIMIT)};
  }
  turn_buf_fini(&buf);
  *out = r;
  return TURN_OK;
}
