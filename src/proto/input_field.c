/* Input fields: a tool input travels inline when its compact JSON fits in
 * TURN_INPUT_LIMIT bytes, else as a preview of its first TURN_INPUT_LIMIT code
 * points. The compact form is canonical (no whitespace outside strings, strings
 * escaped as the encoder escapes them), so every producer cuts at the same place. */
#include "error.h"
#include "json_compact.h"
#include "json_scan.h"
#include "utf8.h"

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

  turn_str compact;
  rv = turn__json_compact(v.raw.p, v.raw.len, arena, &compact);
  if (rv != TURN_OK) return turn__set_error(err, rv, NULL, 0);
  turn_input r = {compact, {NULL, 0}, false};
  if (compact.len > TURN_INPUT_LIMIT) {
    r.truncated = true;
    r.json = (turn_str){NULL, 0};
    r.preview = (turn_str){compact.p,
                           turn__utf8_prefix(compact.p, compact.len, TURN_INPUT_LIMIT)};
  }
  *out = r;
  return TURN_OK;
}
