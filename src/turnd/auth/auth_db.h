/* The owner's credentials on disk: DIR/auth.db, a small SQLite database apart
 * from the conversations. It holds the paired devices (each token's hash, never
 * the token), the pairing codes not yet used (hashed too), the PIN's slow hash,
 * whether the backend is locked, and the address turnd listens on (for
 * `turnd pair-code`). Both turnd and its admin commands (`turnd pair`, `unpair`,
 * ...) open it; being its own file lets a running turnd see their changes with
 * one cheap check (auth_db_changed) instead of a query per request. Writes are
 * rare and small; each is one transaction. */
#ifndef TURND_AUTH_DB_H
#define TURND_AUTH_DB_H

#include "credential.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct auth_db;

/* Opens or creates DIR/auth.db (mode 0600) and brings its schema up to date.
 * After that, a write waits at most busy_ms for another process's (turnd's
 * loop must not wait long; an admin command may). Returns it, or NULL with the
 * reason in err[0..cap). */
struct auth_db *auth_db_open(const char *dir, int busy_ms, char *err, size_t cap);
void auth_db_close(struct auth_db *db); /* accepts NULL */

/* Every function below returns -1 when the database fails (said on stderr,
 * without any value). */

/* Whether name may name a device: 1 to 64 bytes, no control characters (names
 * are printed and listed). */
bool auth_db_name_ok(const char *name);
/* Adds a device: 0, or 1 when the name is taken. */
int auth_db_device_add(struct auth_db *db, const char *name,
                       const unsigned char hash[CREDENTIAL_HASH_LEN], uint64_t now_ms);
/* Whether a device has that name: 1 or 0. */
int auth_db_device_named(struct auth_db *db, const char *name);
/* Removes the device of that name: 0, or 1 when there is none. */
int auth_db_device_remove(struct auth_db *db, const char *name);
/* Each device, oldest first. id never comes back once its device is removed.
 * Strings are valid during the call; a non-zero return stops the walk and is
 * returned. last_seen_ms is 0 for never. */
typedef int auth_device_cb(void *ctx, int64_t id, const char *name,
                           const unsigned char hash[CREDENTIAL_HASH_LEN],
                           uint64_t created_ms, uint64_t last_seen_ms);
int auth_db_devices_each(struct auth_db *db, auth_device_cb *cb, void *ctx);
/* Records that device id was seen at now_ms. Returns 0 (also when the device is
 * gone or the database is busy: a later call records it). */
int auth_db_device_seen(struct auth_db *db, int64_t id, uint64_t now_ms);

/* A pairing code valid until expires_ms; codes expired by now_ms are dropped. */
int auth_db_code_add(struct auth_db *db, const unsigned char hash[CREDENTIAL_HASH_LEN],
                     uint64_t expires_ms, uint64_t now_ms);
/* Whether the code is valid at now_ms: 1 or 0 (unknown, used or expired). */
int auth_db_code_valid(struct auth_db *db, const unsigned char hash[CREDENTIAL_HASH_LEN],
                       uint64_t now_ms);
/* Uses up the code: 1 when it was valid at now_ms (it is gone now), 0 when it is
 * unknown, used or expired. */
int auth_db_code_take(struct auth_db *db, const unsigned char hash[CREDENTIAL_HASH_LEN],
                      uint64_t now_ms);

/* Settings: small text values by name ("pin", "locked", "url"). get returns 1
 * with the value in out[0..cap) (NUL-ended), 0 when unset or too long. set with
 * value NULL unsets. */
int auth_db_get(struct auth_db *db, const char *name, char *out, size_t cap);
int auth_db_set(struct auth_db *db, const char *name, const char *value);

/* 1 when another connection (an admin command) committed since the last call
 * (the first call says 1), 0 when not. */
int auth_db_changed(struct auth_db *db);
/* The change just seen could not be taken in: the next auth_db_changed says 1
 * again. */
void auth_db_change_missed(struct auth_db *db);

#endif
