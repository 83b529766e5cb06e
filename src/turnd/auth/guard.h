/* The owner guard: whether the backend is locked, and the step-up that proves
 * the owner is present (the PIN). The state machine:
 *
 *   UNLOCKED --lock (route, --lock-after idle, 5 wrong PINs)--> LOCKED
 *   LOCKED   --unlock with the right PIN--------------------> UNLOCKED
 *
 * Apart from it, PIN checks: one at a time, on a thread (pin_check.h); after
 * GUARD_FAILURES_MAX wrong PINs in a row none is checked for GUARD_LOCKOUT_S
 * (and the backend locks), twice as long for each lockout in a row up to
 * GUARD_LOCKOUT_MAX_S, until the right PIN. "locked", the wrong PINs and the
 * lockouts survive a restart (auth.db): a restart gives a guesser nothing.
 * While locked, a new turn is refused and a tier-2 call does not run (the
 * agent reads the daemon's guard_view, which the guard keeps). */
#ifndef TURND_GUARD_H
#define TURND_GUARD_H

#include "agent/agent.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct turnd;
struct pin_check;
struct event;

#define GUARD_FAILURES_MAX  5
#define GUARD_LOCKOUT_S     300
#define GUARD_LOCKOUT_MAX_S (24 * 3600)
#define GUARD_EFFECTS_MAX   16 /* effects in --step-up-effects */

/* What a PIN check came to. */
enum guard_pin {
  GUARD_PIN_OK,         /* the right PIN */
  GUARD_PIN_WRONG,      /* the wrong one */
  GUARD_PIN_LOCKED_OUT, /* too many wrong ones: wait *retry_s */
  GUARD_PIN_BUSY,       /* another check runs */
  GUARD_PIN_NOT_SET,    /* no PIN to check against */
  GUARD_PIN_FAILED      /* auth.db or the thread failed */
};
typedef void guard_pin_cb(void *ctx, enum guard_pin result);

struct guard {
  struct agent_guard *view;  /* the daemon's guard_view: what every agent reads */
  unsigned failures;         /* wrong PINs in a row */
  unsigned lockouts;         /* lockouts in a row, since the last right PIN */
  uint64_t lockout_until_ms; /* no PIN is checked before this */
  struct pin_check *check;   /* the check in flight, or NULL */
  char *effects;             /* owned: --step-up-effects, split into effect_list */
  const char *effect_list[GUARD_EFFECTS_MAX]; /* into effects; view points here */
  struct event *tick_ev;                      /* owned: each second, guard_tick */
  guard_pin_cb *cb;                           /* the check in flight's caller ... */
  void *cb_ctx;                               /* ... and its context */
};

/* Reads the guard's state from auth.db (auth_start first). Returns 0 or -1 with
 * a message on stderr. */
int guard_start(struct turnd *d);
/* turnd is stopping: a PIN check in flight is abandoned and its caller told
 * (GUARD_PIN_FAILED) while the loop can still send the answer. */
void guard_abandon_check(struct turnd *d);
void guard_stop(struct turnd *d); /* abandons the check too, if still there */

/* Whether a PIN was set (`turnd set-pin`): 1, 0, or -1 when auth.db fails.
 * view.pin_set takes the answer: call it when auth.db changed (the PIN is set
 * by another process), so the next step-up's ask says the truth. */
int guard_pin_set(struct turnd *d);
/* Locks. Returns 0, or -1 when auth.db fails. */
int guard_lock(struct turnd *d);
/* Each second (guard_start sets it going): locks after --lock-after seconds
 * without the owner. */
void guard_tick(struct turnd *d, uint64_t now_ms);

/* Checks pin[0..len). Returns GUARD_PIN_OK when the check started (cb then
 * gets the outcome on the loop, after the guard counted it: a wrong PIN may
 * have locked the backend), or why it did not start (cb is not called). */
enum guard_pin guard_check_pin(struct turnd *d, const char *pin, size_t len,
                               guard_pin_cb *cb, void *ctx, unsigned *retry_s);
/* After GUARD_PIN_OK on an unlock: unlocks. Returns 0 or -1 (auth.db). */
int guard_unlock(struct turnd *d);

#endif
