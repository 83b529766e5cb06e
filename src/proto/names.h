/* Name lookups that are internal: the inverse of the public *_name functions. */
#ifndef TURN_PROTO_NAMES_H
#define TURN_PROTO_NAMES_H

#include "turn/turn.h"

/* Index of s in names[0..n), NULL entries skipped, or -1. */
int turn__name_index(const char *const *names, int n, turn_str s);
int turn__status_from_name(turn_str name);
int turn__approval_from_name(turn_str name);
int turn__decision_from_name(turn_str name);
int turn__block_type_from_name(turn_str name);

#endif
