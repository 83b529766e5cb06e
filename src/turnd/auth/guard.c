/* The owner guard (see auth.h). */
#include "auth.h"

#include "auth_db.h"
#include "clock.h"
#include "credential.h"
#include "daemon.h"
#include "pin_check.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Splits --step-up-effects ("physical,money", or "none") into the view. */
static int split_effects(struct guard *g, const char *spec) {
  g->view->step_up_effects = g->effect_list;
  g->view->n_step_up_effects = 0;
  if (strcmp(spec, "none") == 0) return 0;
  g->effects = strdup(spec);
  if (g->effects == NULL) return -1;
  for (char *save = NULL, *e = strtok_r(g->effects, ",", &save); e != NULL;
       e = strtok_r(NULL, ",", &save)) {
    if (g->view->n_step_up_effects == GUARD_EFFECTS_MAX) return -1;
    g->effect_list[g->view->n_step_up_effects++] = e;
  }
  return 0;
}

/* The wrong PINs, the lockouts in a row and the lockout's end, kept in auth.db
 * (wall-clock ms, which a restart or a reboot does not reset). */
static void save_tries(struct turnd *d) {
  struct guard *g = d->guard;
  char value[64];
  snprintf(value, sizeof value, "%u %u %llu", g->failures, g->lockouts,
           (unsigned long long)g->lockout_until_ms);
  (void)auth_db_set(d->auth->db, "pin_tries", value); /* the next check says again */
}

static void load_tries(struct turnd *d) {
  struct guard *g = d->guard;
  char value[64];
  unsigned failures, lockouts;
  unsigned long long until;
  if (auth_db_get(d->auth->db, "pin_tries", value, sizeof value) == 1 &&
      sscanf(value, "%u %u %llu", &failures, &lockouts, &until) == 3) {
    g->failures = failures;
    g->lockouts = lockouts;
    g->lockout_until_ms = until;
  }
}

static void on_tick(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  guard_tick(arg, turnd_now_ms());
}

int guard_start(struct turnd *d) {
  struct guard *g = d->guard = calloc(1, sizeof *d->guard);
  if (g == NULL) {
    fprintf(stderr, "turnd: out of memory\n");
    return -1;
  }
  g->view = &d->guard_view;
  char value[8];
  int locked = auth_db_get(d->auth->db, "locked", value, sizeof value);
  if (locked < 0 || split_effects(g, d->opt->step_up_effects) != 0) {
    fprintf(stderr, "turnd: cannot read the guard's state\n");
    return -1;
  }
  g->view->locked = locked == 1 && strcmp(value, "1") == 0;
  load_tries(d);
  if (g->view->locked)
    fprintf(stderr, "turnd: locked, as it was when it stopped: new turns are refused "
                    "until the owner unlocks it with the PIN (`turn unlock`)\n");
  int pin_set = guard_pin_set(d);
  if (g->view->n_step_up_effects > 0 && pin_set == 0)
    fprintf(stderr,
            "turnd: no PIN is set: approving a call whose effect needs the step-up "
            "(--step-up-effects %s) is refused until the owner sets one with "
            "`turnd set-pin --data %s` (no restart needed)\n",
            d->opt->step_up_effects, d->opt->data_dir);
  if (d->opt->lock_after_s > 0 && pin_set != 1) {
    fprintf(stderr,
            "turnd: --lock-after needs a PIN to unlock with: set one with "
            "`turnd set-pin --data %s` first\n",
            d->opt->data_dir);
    return -1;
  }
  struct timeval second = {1, 0};
  if ((g->tick_ev = event_new(d->base, -1, EV_PERSIST, on_tick, d)) == NULL ||
      event_add(g->tick_ev, &second) != 0) {
    fprintf(stderr, "turnd: cannot start the guard's clock\n");
    return -1;
  }
  return 0;
}

void guard_abandon_check(struct turnd *d) {
  struct guard *g = d->guard;
  if (g == NULL || g->check == NULL) return;
  pin_check_abandon(g->check); /* joins the thread: a tenth of a second at most */
  g->check = NULL;
  g->cb(g->cb_ctx, GUARD_PIN_FAILED); /* the waiter answers and frees itself */
}

void guard_stop(struct turnd *d) {
  struct guard *g = d->guard;
  if (g == NULL) return;
  guard_abandon_check(d);
  if (g->tick_ev != NULL) event_free(g->tick_ev);
  free(g->effects);
  free(g);
  d->guard = NULL;
}

int guard_pin_set(struct turnd *d) {
  char hash[CREDENTIAL_PIN_HASH_CAP];
  int set = auth_db_get(d->auth->db, "pin", hash, sizeof hash);
  if (set >= 0) d->guard_view.pin_set = set == 1;
  return set;
}

int guard_lock(struct turnd *d) {
  if (auth_db_set(d->auth->db, "locked", "1") != 0) return -1;
  d->guard_view.locked = true;
  return 0;
}

int guard_unlock(struct turnd *d) {
  if (auth_db_set(d->auth->db, "locked", NULL) != 0) return -1;
  d->guard_view.locked = false;
  return 0;
}

void guard_tick(struct turnd *d, uint64_t now_ms) {
  uint32_t after = d->opt->lock_after_s;
  if (after == 0 || d->guard_view.locked) return;
  if (now_ms - d->auth->owner_active_ms >= (uint64_t)after * 1000) guard_lock(d);
}

/* The thread's answer: counted here, before the caller hears it. */
static void on_checked(void *ctx, bool match) {
  struct turnd *d = ctx;
  struct guard *g = d->guard;
  g->check = NULL;
  if (match) {
    g->failures = 0;
    g->lockouts = 0;
  } else if (++g->failures >= GUARD_FAILURES_MAX) {
    /* Someone guesses: nobody may try for a while, and nothing runs meanwhile;
     * each lockout in a row lasts twice the last, so the guesses a day shrink. */
    uint64_t lockout_s = GUARD_LOCKOUT_S;
    for (unsigned i = 0; i < g->lockouts && lockout_s < GUARD_LOCKOUT_MAX_S; i++)
      lockout_s *= 2;
    if (lockout_s > GUARD_LOCKOUT_MAX_S) lockout_s = GUARD_LOCKOUT_MAX_S;
    g->failures = 0;
    g->lockouts++;
    g->lockout_until_ms = turnd_now_ms() + lockout_s * 1000;
    guard_lock(d);
  }
  save_tries(d);
  g->cb(g->cb_ctx, match ? GUARD_PIN_OK : GUARD_PIN_WRONG);
}

enum guard_pin guard_check_pin(struct turnd *d, const char *pin, size_t len,
                               guard_pin_cb *cb, void *ctx, unsigned *retry_s) {
  struct guard *g = d->guard;
  uint64_t now = turnd_now_ms();
  if (now < g->lockout_until_ms) {
    *retry_s = (unsigned)((g->lockout_until_ms - now + 999) / 1000);
    return GUARD_PIN_LOCKED_OUT;
  }
  if (g->check != NULL) return GUARD_PIN_BUSY;
  char stored[CREDENTIAL_PIN_HASH_CAP];
  int set = auth_db_get(d->auth->db, "pin", stored, sizeof stored);
  if (set <= 0) return set == 0 ? GUARD_PIN_NOT_SET : GUARD_PIN_FAILED;
  g->cb = cb;
  g->cb_ctx = ctx;
  g->check = pin_check_start(d->base, stored, pin, len, on_checked, d);
  return g->check != NULL ? GUARD_PIN_OK : GUARD_PIN_FAILED;
}
