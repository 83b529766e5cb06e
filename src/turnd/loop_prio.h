/* The event loop's priorities. A running turn's stream goes first: a provider's
 * bytes, the hand-over to the store that shows them, and the writes to the
 * turn's readers. Everything else (new connections and requests, tools, the
 * agent's timers) waits while any of those is ready, and the loop looks for
 * ready stream events again after each such callback (main.c), so that a burst
 * of new turns does not hold up the deltas of the turns already streaming. libevent
 * gives an event the middle priority unless told: LOOP_PRIO_OTHER here. */
#ifndef TURND_LOOP_PRIO_H
#define TURND_LOOP_PRIO_H

#define LOOP_PRIOS       2
#define LOOP_PRIO_STREAM 0
#define LOOP_PRIO_OTHER  1

#endif
