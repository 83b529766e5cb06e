/* The `turn sessions` and `turn history ID` commands: fetch a list or a history
 * from turnd and print it for a person. */
#ifndef TURN_CLI_LISTING_H
#define TURN_CLI_LISTING_H

#include "http.h"

#include <stdbool.h>

/* Each returns the exit status: 0, or 1 when turnd could not be reached, answered
 * with an error, or sent something that does not parse. s: borrowed. color:
 * stdout is a terminal. */
int listing_sessions(const struct http_server *s);
int listing_history(const struct http_server *s, const char *session, bool color);

#endif
