/* What the auth wing offers: who may use turnd (auth.c) and the owner guard
 * (guard.c, below). The paired devices: every route but POST /api/pair asks
 * auth_request() first. The devices of DIR/auth.db are kept in memory by their
 * token's hash, and reloaded when an admin command changed the file (one cheap
 * check per request, and one each second), so a revoked token fails on its next
 * request and a stream it is reading stops within about a second. */
#ifndef TURND_AUTH_H
#define TURND_AUTH_H

#include "agent/agent.h"
#include "auth_db.h"
#include "credential.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct turnd;
struct pin_check;
struct auth_db;
struct event;

struct auth_device {
  int64_t id;                              /* never reused (auth_db.h) */
  unsigned char hash[CREDENTIAL_HASH_LEN]; /* of its token */
  uint64_t seen_ms;                        /* last request, as recorded in auth.db */
};

struct auth {
  struct auth_db *db;          /* owned */
  bool off;                    /* --no-auth (loopback only): everyone is the owner */
  struct auth_device *devices; /* owned; n of them */
  size_t n;
  struct event *poll_ev;    /* owned: each second, admin changes */
  uint64_t pair_window_ms;  /* the start of the minute wrong codes are counted in */
  unsigned pair_wrong;      /* wrong codes in that minute */
  uint64_t owner_active_ms; /* the last authenticated request (for --lock-after) */
  void (*changed)(struct turnd *d); /* see auth_start */
};

/* Opens DIR/auth.db, loads the devices, records url (what clients reach turnd
 * at, for pairing links) and starts the poll. changed(d) is called once an
 * admin command changed auth.db (the devices are reloaded by then: the
 * streams of those gone are to stop; the PIN may have changed). Returns 0, or
 * -1 with a message on stderr and nothing to free but through auth_stop. */
int auth_start(struct turnd *d, const char *url, void (*changed)(struct turnd *d));
void auth_stop(struct turnd *d);

/* Whether a request's Authorization header (NULL: none) carries the token of a
 * paired device (or auth is off); sets *device to its id (0 with auth off).
 * Records the owner's activity. */
bool auth_request(struct turnd *d, const char *authorization, int64_t *device);
/* Whether device is still paired (always with auth off). */
bool auth_device_paired(struct turnd *d, int64_t device);

/* What a pairing attempt came to. */
enum auth_pair_result {
  AUTH_PAIR_OK,
  AUTH_PAIR_BAD_CODE, /* wrong, used or expired */
  AUTH_PAIR_LIMITED,  /* too many wrong codes lately: wait *retry_s */
  AUTH_PAIR_NAME_TAKEN,
  AUTH_PAIR_FAILED /* the database failed */
};
/* Pairs a device named name with the code the owner typed. On AUTH_PAIR_OK the
 * new token is in token (shown once, to this caller, never kept). */
enum auth_pair_result auth_pair(struct turnd *d, const char *code, const char *name,
                                char token[CREDENTIAL_TOKEN_LEN + 1], unsigned *retry_s);

/* ---------------------------------------------------------- the owner guard
 *
 * guard.c: whether the backend is locked, and the step-up that proves the
 * owner is present (the PIN). The state machine:
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
