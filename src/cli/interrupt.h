/* Ctrl-C while a turn streams. turnd keeps a turn running when its client goes,
 * so a client that just died would leave the turn (and an approval it asked)
 * waiting with nobody watching: the first ^C stops the stream and asks turnd to
 * cancel the turn instead (main.c), and a second one ends the client at once,
 * as ^C always does. */
#ifndef TURN_CLI_INTERRUPT_H
#define TURN_CLI_INTERRUPT_H

#include <stdbool.h>

/* Catches the first SIGINT from now on. From then on stdin reads as empty: the
 * y/n question waiting on it (or about to) gets no answer at once. */
void interrupt_catch(void);

/* Whether that SIGINT came. */
bool interrupt_seen(void);

/* For another handler that takes SIGINT for a while (the PIN prompt's, which
 * must put the terminal back first): whether interrupt_catch was called, and
 * what its handler does, async-signal-safe. */
bool interrupt_caught(void);
void interrupt_note(void);

#endif
