/* Who may use turnd: the paired devices. Every route but POST /api/pair asks
 * auth_request() first. The devices of DIR/auth.db are kept in memory by their
 * token's hash, and reloaded when an admin command changed the file (one cheap
 * check per request, and one each second), so a revoked token fails on its next
 * request and a stream it is reading stops within about a second. */
#ifndef TURND_AUTH_H
#define TURND_AUTH_H

#include "credential.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct turnd;
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

#endif
