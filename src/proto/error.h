/* Filling in a turn_error (error.c): every parser reports its failure through
 * here, so a code, its field and its offset always go together. */
#ifndef TURN_PROTO_ERROR_H
#define TURN_PROTO_ERROR_H

#include "turn/turn.h"

/* Reports a code at an offset into err (which may be NULL); returns code. */
int turn__set_error(turn_error *err, int code, const char *field, size_t offset);

#endif
