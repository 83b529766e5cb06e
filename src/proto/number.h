/* Doubles to and from JSON text, the same in every locale: the host program may
 * have set LC_NUMERIC to one whose decimal separator is a comma, and libc's
 * printf and strtod follow it. */
#ifndef TURN_PROTO_NUMBER_H
#define TURN_PROTO_NUMBER_H

#include "turn/turn.h"

/* Formats a finite v as Python's repr writes it (shortest digits that read back as
 * v, ".0" on whole numbers, exponent form outside 1e-4 <= |v| < 1e16) into out,
 * NUL-terminated; returns the length, or 0 for a value that is not finite. */
size_t turn__format_double(double v, char out[32]);

/* Reads the JSON number text[0..len) (already validated) as a double. Borrows
 * text; may use arena for a long number. Returns TURN_OK or TURN_E_NOMEM. */
int turn__parse_double(const char *text, size_t len, turn_arena *arena, double *out);

#endif
