/* A PIN checked off the loop: the slow hash (credential_pin_verify, about a
 * tenth of a second) runs on a thread of its own, and the answer comes back to
 * the loop through a pipe. One check at a time is all the guard allows. */
#ifndef TURND_PIN_CHECK_H
#define TURND_PIN_CHECK_H

#include <stdbool.h>
#include <stddef.h>

struct event_base;
struct pin_check;

/* Called on the loop once the check is over; the check is freed after it
 * returns. */
typedef void pin_check_done_cb(void *ctx, bool match);

/* Starts checking pin[0..len) against stored (both copied, the copy of the PIN
 * wiped once checked). Returns the check, or NULL when it cannot start (then
 * done is never called). */
struct pin_check *pin_check_start(struct event_base *base, const char *stored,
                                  const char *pin, size_t len, pin_check_done_cb *done,
                                  void *ctx);
/* turnd stops: waits for the thread and frees the check; done is not called.
 * Accepts NULL. */
void pin_check_abandon(struct pin_check *c);

#endif
