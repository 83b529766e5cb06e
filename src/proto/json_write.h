/* Writing JSON values into a turn_buf. Everything written is valid JSON in valid
 * UTF-8 whatever the input: invalid UTF-8 in a string becomes U+FFFD. */
#ifndef TURN_PROTO_JSON_WRITE_H
#define TURN_PROTO_JSON_WRITE_H

#include "turn/turn.h"

/* Strings: NUL and invalid UTF-8 become U+FFFD, since the protocol's JSON has no
 * \u0000. Each returns TURN_OK, TURN_E_TOOBIG or TURN_E_NOMEM; on error out may hold part
 * of the value, so callers roll back to a saved length (encode.c does). */
int turn__json_write_str(turn_buf *out, const char *s, size_t len);
int turn__json_write_u64(turn_buf *out, uint64_t v);
int turn__json_write_i64(turn_buf *out, int64_t v);
/* A finite double as Python's repr writes it (shortest round trip, ".0" on whole
 * numbers, exponent outside 1e-4 <= |v| < 1e16), so that lines made by the
 * protocol's Python half round-trip byte for byte. TURN_E_INVALID if not finite. */
int turn__json_write_double(turn_buf *out, double v);

#endif
