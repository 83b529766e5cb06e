/* Asking the owner for the PIN: for an approval that needs a step-up and for
 * `turn unlock`. On a terminal it is typed without echo; from a pipe it is one
 * line, so scripts and tests can give it. */
#ifndef TURN_CLI_PIN_H
#define TURN_CLI_PIN_H

#include <stddef.h>

#define PIN_CAP 130 /* bytes: turnd's longest PIN (128), a newline and the NUL */

/* Shows "PIN: " on stdout and reads one line from stdin into out (cap bytes),
 * without its newline. Reads through stdin's FILE, so answers already buffered
 * there (a y before it, in a pipe) are not lost. Returns 0, or -1 at the end of
 * input, on an empty line (the owner gave up) or when the line does not fit (then
 * after saying so). out holds a secret: secret_wipe it once used. */
int pin_ask(char *out, size_t cap);

#endif
