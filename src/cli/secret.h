/* Secrets in the client's memory (the token, a PIN, bodies that carried them)
 * are cleared once used, so a later bug or a core file cannot show them. */
#ifndef TURN_CLI_SECRET_H
#define TURN_CLI_SECRET_H

#include <stddef.h>

/* Sets len bytes at p (may be NULL when len is 0) to zero, in a way the
 * compiler cannot drop as a dead store. */
void secret_wipe(void *p, size_t len);

#endif
