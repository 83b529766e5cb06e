/* The authenticator; see auth.h. A token is looked up by its hash: the lookup
 * learns nothing an attacker could time, since the hash of a guess has no
 * relation to any stored hash, and the final comparison is constant-time. */
#include "auth.h"

#include "admin.h"
#include "auth_db.h"
#include "clock.h"
#include "daemon.h"
#include "turn/turn.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PAIR_WRONG_MAX 5     /* wrong codes per minute before pairing waits */
#define PAIR_WINDOW_MS 60000 /* ... that minute */
/* A device's last-seen time is written at most this often. */
#define SEEN_EVERY_MS 60000
/* How long the loop's rare writes (a pairing, a lock, a last-seen time) wait
 * for an admin command's transaction, which takes well under this; a write
 * that still finds auth.db busy fails (a last-seen time is tried again). */
#define AUTH_BUSY_MS 50

struct loading {
  struct auth_device *devices;
  size_t n, cap;
  bool failed;
};

static int load_one(void *ctx, int64_t id, const char *name,
                    const unsigned char hash[CREDENTIAL_HASH_LEN], uint64_t created_ms,
                    uint64_t last_seen_ms) {
  (void)name;
  (void)created_ms;
  struct loading *l = ctx;
  struct auth_device *grown = turn_grow(l->devices, l->n, &l->cap, sizeof *grown, 8);
  if (grown == NULL) {
    l->failed = true;
    return 1;
  }
  l->devices = grown;
  struct auth_device *dev = &l->devices[l->n++];
  dev->id = id;
  memcpy(dev->hash, hash, CREDENTIAL_HASH_LEN);
  dev->seen_ms = last_seen_ms;
  return 0;
}

/* Reads the devices anew. On failure the old list stays: a database hiccup must
 * not lock the owner out. Nor may it let a revoked device in: the change stays
 * unseen, so the next request or poll reads again. */
static int reload(struct auth *a) {
  struct loading l = {0};
  if (auth_db_devices_each(a->db, load_one, &l) != 0 || l.failed) {
    free(l.devices);
    return -1;
  }
  free(a->devices);
  a->devices = l.devices;
  a->n = l.n;
  return 0;
}

/* An admin command changed auth.db: take its devices, and tell of the change
 * (the streams of devices that are gone stop; `turnd set-pin` may be it). */
static void refresh(struct turnd *d) {
  struct auth *a = d->auth;
  if (auth_db_changed(a->db) != 1) return;
  if (reload(a) != 0) {
    auth_db_change_missed(a->db);
    return;
  }
  a->changed(d);
}

static void on_poll(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  refresh(arg);
}

int auth_start(struct turnd *d, const char *url, void (*changed)(struct turnd *d)) {
  struct auth *a = d->auth = calloc(1, sizeof *d->auth);
  if (a == NULL) {
    fprintf(stderr, "turnd: out of memory\n");
    return -1;
  }
  a->changed = changed;
  a->off = d->opt->no_auth;
  a->owner_active_ms = turnd_now_ms();
  char err[256];
  if (credential_init() != 0) {
    fprintf(stderr, "turnd: libsodium cannot start\n");
    return -1;
  }
  a->db = auth_db_open(d->opt->data_dir, AUTH_BUSY_MS, err, sizeof err);
  if (a->db == NULL) {
    fprintf(stderr, "turnd: %s\n", err);
    return -1;
  }
  auth_db_changed(a->db); /* the baseline: what we load now is current */
  struct timeval second = {1, 0};
  if (reload(a) != 0 || auth_db_set(a->db, "url", url) != 0 ||
      (a->poll_ev = event_new(d->base, -1, EV_PERSIST, on_poll, d)) == NULL ||
      event_add(a->poll_ev, &second) != 0) {
    fprintf(stderr, "turnd: cannot read the paired devices\n");
    return -1;
  }
  return 0;
}

void auth_stop(struct turnd *d) {
  struct auth *a = d->auth;
  if (a == NULL) return;
  if (a->poll_ev != NULL) event_free(a->poll_ev);
  auth_db_close(a->db);
  free(a->devices);
  free(a);
  d->auth = NULL;
}

static struct auth_device *find(struct auth *a, const unsigned char *hash) {
  for (size_t i = 0; i < a->n; i++)
    if (credential_hash_equal(a->devices[i].hash, hash)) return &a->devices[i];
  return NULL;
}

bool auth_request(struct turnd *d, const char *authorization, int64_t *device) {
  struct auth *a = d->auth;
  *device = 0;
  uint64_t now = turnd_now_ms();
  if (a->off) {
    a->owner_active_ms = now;
    return true;
  }
  const char *h = authorization;
  if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0) return false;
  const char *token = h + 7;
  while (*token == ' ')
    token++;
  size_t len = strlen(token);
  while (len > 0 && token[len - 1] == ' ')
    len--;
  if (len != CREDENTIAL_TOKEN_LEN) return false;
  refresh(d); /* a revoke a moment ago counts now */
  unsigned char hash[CREDENTIAL_HASH_LEN];
  credential_token_hash(token, len, hash);
  struct auth_device *dev = find(a, hash);
  if (dev == NULL) return false;
  *device = dev->id;
  a->owner_active_ms = now;
  if (now - dev->seen_ms >= SEEN_EVERY_MS || dev->seen_ms > now) {
    dev->seen_ms = now;
    auth_db_device_seen(a->db, dev->id, now);
  }
  return true;
}

bool auth_device_paired(struct turnd *d, int64_t device) {
  struct auth *a = d->auth;
  if (a->off) return true;
  for (size_t i = 0; i < a->n; i++)
    if (a->devices[i].id == device) return true;
  return false;
}

enum auth_pair_result auth_pair(struct turnd *d, const char *code, const char *name,
                                char token[CREDENTIAL_TOKEN_LEN + 1], unsigned *retry_s) {
  struct auth *a = d->auth;
  uint64_t now = turnd_now_ms();
  if (now - a->pair_window_ms >= PAIR_WINDOW_MS) {
    a->pair_window_ms = now;
    a->pair_wrong = 0;
  }
  /* Over the limit even the right code waits: a guesser learns nothing while
   * the limit holds. */
  if (a->pair_wrong >= PAIR_WRONG_MAX) {
    *retry_s = (unsigned)((a->pair_window_ms + PAIR_WINDOW_MS - now + 999) / 1000);
    return AUTH_PAIR_LIMITED;
  }
  /* The code first: only someone who holds one learns whether a name is
   * taken. A taken name leaves the code for another try. */
  unsigned char hash[CREDENTIAL_HASH_LEN];
  int valid = credential_code_hash(code, strlen(code), hash)
                  ? auth_db_code_valid(a->db, hash, now)
                  : 0;
  if (valid < 0) return AUTH_PAIR_FAILED;
  if (valid == 0) {
    a->pair_wrong++;
    return AUTH_PAIR_BAD_CODE;
  }
  int named = auth_db_device_named(a->db, name);
  if (named != 0) return named > 0 ? AUTH_PAIR_NAME_TAKEN : AUTH_PAIR_FAILED;
  /* Taking is one statement: of two pairings with one code, one wins. */
  int taken = auth_db_code_take(a->db, hash, now);
  if (taken <= 0) return taken == 0 ? AUTH_PAIR_BAD_CODE : AUTH_PAIR_FAILED;
  credential_token_new(token);
  credential_token_hash(token, strlen(token), hash);
  int rc = auth_db_device_add(a->db, name, hash, now);
  if (rc != 0) {
    /* Taken in the meantime (by an admin command): the code is used up. */
    credential_wipe(token, CREDENTIAL_TOKEN_LEN + 1);
    return rc > 0 ? AUTH_PAIR_NAME_TAKEN : AUTH_PAIR_FAILED;
  }
  return reload(a) == 0 ? AUTH_PAIR_OK : AUTH_PAIR_FAILED;
}
