/* Text from turnd put on the owner's terminal. */
#ifndef TURN_CLI_SHOWN_H
#define TURN_CLI_SHOWN_H

#include "turn/turn.h"

#include <stdio.h>

/* Writes s to f with what a terminal would act on made harmless: every control
 * character but newline and tab (C0, DEL, and C1 as U+0080..U+009F), and any
 * byte that is not UTF-8, becomes U+FFFD (turn_safe_text). The model's text, a tool's, an
 * approval's input all come from outside: raw, they could retitle, clear or rewrite the
 * owner's terminal, or hide the question that follows them. */
void shown_write(FILE *f, turn_str s);

#endif
