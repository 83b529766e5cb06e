/* The actions an agent step hands the shell, made the same way by every step:
 * an event (zeroed but for its type), a notice, a go-on, and the copy of a
 * string an event carries, in the arena of the event being emitted. */
#include "agent_impl.h"

#include <string.h>

/* out becomes an event of this type; every other field is zero, so a step
 * sets only what its event carries. */
void agent_emit(struct agent_action *out, turn_event_type type) {
  memset(out, 0, sizeof *out);
  out->kind = AGENT_EMIT;
  out->ev.type = type;
}

void agent_go_on(struct agent_action *out) {
  out->kind = AGENT_WAIT;
  out->wait_ms = 0;
}

void agent_notice(struct agent_action *out, turn_str text) {
  agent_emit(out, TURN_EV_NOTICE);
  out->ev.notice.text = text;
}

turn_str agent_text(struct agent *a, const char *text, size_t len) {
  char *copy = turn_arena_alloc(&a->arena, len + 1);
  if (copy == NULL) return str_of("");
  memcpy(copy, text, len);
  copy[len] = '\0';
  return (turn_str){copy, len};
}
