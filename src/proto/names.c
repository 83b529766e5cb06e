/* Wire names of the protocol's enumerations, in the order of their C enums. */
#include "names.h"

#include <string.h>

static const char *const event_type_names[TURN_EV__COUNT] = {
    "turn",        "text",       "reasoning",
    "tool_use",    "tool_input", "tool_progress",
    "tool_result", "approval",   "approval_decided",
    "widget",      "throttled",  "notice",
    "guard",       "end",        "error"};

static const char *const status_names[TURN_STATUS__COUNT] = {NULL, "ok", "error",
                                                             "rejected"};

static const char *const approval_names[TURN_APPROVAL__COUNT] = {
    NULL, "approved", "rejected", "timeout", "exempt", "locked"};

static const char *const stop_reason_names[TURN_STOP__COUNT] = {
    "end_turn",   "limit_turns", "limit_total_tokens",
    "max_tokens", "cancelled",   "interrupt",
    "error",      "busy",        "locked"};

static const char *const decision_names[TURN_DECISION__COUNT] = {"approved", "rejected",
                                                                 "timeout"};

static const char *const block_type_names[TURN_BLOCK__COUNT] = {
    "user", "assistant", "reasoning", "tool", "widget", "notice"};

static const char *name_at(const char *const *names, int n, int i) {
  return i >= 0 && i < n ? names[i] : NULL;
}

int turn__name_index(const char *const *names, int n, turn_str s) {
  for (int i = 0; i < n; i++)
    if (names[i] != NULL && s.len > 0 && names[i][0] == s.p[0] &&
        strlen(names[i]) == s.len && memcmp(names[i], s.p, s.len) == 0)
      return i;
  return -1;
}

const char *turn_event_type_name(turn_event_type t) {
  return name_at(event_type_names, TURN_EV__COUNT, (int)t);
}
const char *turn_status_name(turn_status s) {
  return name_at(status_names, TURN_STATUS__COUNT, (int)s);
}
const char *turn_approval_name(turn_approval a) {
  return name_at(approval_names, TURN_APPROVAL__COUNT, (int)a);
}
const char *turn_stop_reason_name(turn_stop_reason r) {
  return name_at(stop_reason_names, TURN_STOP__COUNT, (int)r);
}
const char *turn_decision_name(turn_decision d) {
  return name_at(decision_names, TURN_DECISION__COUNT, (int)d);
}
const char *turn_block_type_name(turn_block_type t) {
  return name_at(block_type_names, TURN_BLOCK__COUNT, (int)t);
}

int turn_event_type_from_name(turn_str name) {
  return turn__name_index(event_type_names, TURN_EV__COUNT, name);
}
int turn_stop_reason_from_name(turn_str name) {
  return turn__name_index(stop_reason_names, TURN_STOP__COUNT, name);
}
int turn__status_from_name(turn_str name) {
  return turn__name_index(status_names, TURN_STATUS__COUNT, name);
}
int turn__approval_from_name(turn_str name) {
  return turn__name_index(approval_names, TURN_APPROVAL__COUNT, name);
}
int turn__decision_from_name(turn_str name) {
  return turn__name_index(decision_names, TURN_DECISION__COUNT, name);
}
int turn__block_type_from_name(turn_str name) {
  return turn__name_index(block_type_names, TURN_BLOCK__COUNT, name);
}
