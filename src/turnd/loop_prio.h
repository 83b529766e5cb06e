/* The event loop's priorities. A running turn goes first: a provider's bytes,
 * the hand-over to the store that shows them, the writes to the turn's readers,
 * and the turn's timers, tools and built requests. New connections and requests
 * (evhttp's own events, which cannot be given a priority: libevent gives them
 * the middle one, LOOP_PRIO_OTHER here) wait while any of those is ready, and
 * the loop looks for ready stream events again after each of their callbacks
 * (main.c), so that a burst of new turns does not hold up the deltas of the
 * turns already streaming. */
#ifndef TURND_LOOP_PRIO_H
#define TURND_LOOP_PRIO_H

#define LOOP_PRIOS       2
#define LOOP_PRIO_STREAM 0
#define LOOP_PRIO_OTHER  1

#endif
