/* Events: parse one line (envelope v/seq/type first, then the type's fields from
 * its schema) and encode one event in the spec's field order. */
#include "error.h"
#include "fields.h"
#include "json_write.h"

#include <string.h>

int turn_event_parse(turn_event *ev, turn_arena *arena, const char *line, size_t len,
                     turn_error *err) {
  turn__members m;
  turn__scan s;
  int rv = turn__read_object_text(&s, line, len, arena, &m, err);
  if (rv != TURN_OK) return rv;

  const turn__jval *v = &m.v[TURN__K_V];
  const size_t end_off = len;
  if (!(m.present & (1u << TURN__K_V)))
    return turn__set_error(err, TURN_E_MISSING, "v", end_off);
  if (v->kind != TURN__J_NUMBER || !v->is_int)
    return turn__set_error(err, TURN_E_FIELD, "v", (size_t)(v->raw.p - line));
  if (v->raw.len != 1 || v->raw.p[0] != '1')
    return turn__set_error(err, TURN_E_VERSION, "v", (size_t)(v->raw.p - line));

  const turn__jval *type = &m.v[TURN__K_TYPE];
  if (!(m.present & (1u << TURN__K_TYPE)))
    return turn__set_error(err, TURN_E_MISSING, "type", end_off);
  if (type->kind != TURN__J_STRING)
    return turn__set_error(err, TURN_E_FIELD, "type", (size_t)(type->raw.p - line));
  int t = turn_event_type_from_name(type->str);
  if (t < 0)
    return turn__set_error(err, TURN_E_TYPE, "type", (size_t)(type->raw.p - line));

  const turn__jval *seq = &m.v[TURN__K_SEQ];
  if (!(m.present & (1u << TURN__K_SEQ)))
    return turn__set_error(err, TURN_E_MISSING, "seq", end_off);
  if (seq->kind != TURN__J_NUMBER || !seq->is_int)
    return turn__set_error(err, TURN_E_FIELD, "seq", (size_t)(seq->raw.p - line));
  int64_t seq_value = turn__jval_int(seq);
  if (seq_value < 0)
    return turn__set_error(err, TURN_E_VALUE, "seq", (size_t)(seq->raw.p - line));

  turn_event out;
  memset(&out, 0, sizeof out);
  out.type = (turn_event_type)t;
  out.seq = (uint64_t)seq_value;
  rv = turn__apply_schema(&turn__event_schemas[t], &m, &out, &s, arena, err);
  if (rv != TURN_OK) return rv;
  *ev = out;
  return TURN_OK;
}

int turn_event_encode(const turn_event *ev, turn_buf *out) {
  /* JSON readers (jansson, and so our parser) stop at INT64_MAX. */
  if ((unsigned)ev->type >= TURN_EV__COUNT || ev->seq > INT64_MAX) return TURN_E_INVALID;
  size_t saved = out->len;
  const char *type = turn_event_type_name(ev->type);
  int rv = turn_buf_append(out, "{\"v\":1,\"seq\":", 13);
  if (rv == TURN_OK) rv = turn__json_write_u64(out, ev->seq);
  if (rv == TURN_OK) rv = turn_buf_append(out, ",\"type\":", 8);
  if (rv == TURN_OK) rv = turn__json_write_str(out, type, strlen(type));
  if (rv == TURN_OK) rv = turn__encode_schema(&turn__event_schemas[ev->type], ev, out);
  if (rv == TURN_OK) rv = turn_buf_append(out, "}", 1);
  if (rv != TURN_OK) out->len = saved;
  return rv;
}
