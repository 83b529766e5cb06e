/* DIR/auth.db on SQLite; see auth_db.h. Statements are prepared per call: every
 * use is rare (an admin command, a pairing, a reload after a change), except
 * the change check, which is prepared once. */
#include "auth_db.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* migrations[v] brings the database from user_version v to v + 1. Append only. */
static const char *const migrations[] = {
    /* 0 -> 1: devices, pairing codes, settings. AUTOINCREMENT: a removed
     * device's id is never given to a new one, so nothing cached under it can
     * let the new device in as the old one or the other way round. */
    "CREATE TABLE devices ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE,"
    "  token_hash BLOB NOT NULL UNIQUE, created_ms INTEGER NOT NULL,"
    "  last_seen_ms INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE pair_codes ("
    "  code_hash BLOB PRIMARY KEY, expires_ms INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE settings ("
    "  name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;",
};
#define SCHEMA_VERSION ((int)(sizeof migrations / sizeof migrations[0]))

struct auth_db {
  sqlite3 *db;
  sqlite3_stmt *data_version; /* PRAGMA data_version, prepared once */
  int64_t last_version;       /* what it said last; -1 before the first call */
};

static int fail(struct auth_db *db, const char *what) {
  /* SQLite's message names the failure, never a value bound. */
  fprintf(stderr, "turnd: auth.db: %s: %s\n", what, sqlite3_errmsg(db->db));
  return -1;
}

static int exec(struct auth_db *db, const char *sql) {
  return sqlite3_exec(db->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

static int user_version(struct auth_db *db) {
  sqlite3_stmt *s;
  int v = -1;
  if (sqlite3_prepare_v2(db->db, "PRAGMA user_version", -1, &s, NULL) == SQLITE_OK) {
    if (sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
  }
  return v;
}

static int migrate(struct auth_db *db, char *err, size_t cap) {
  if (user_version(db) == SCHEMA_VERSION) return 0;
  /* The version again inside the write transaction: two processes that open a
   * new folder at once (turnd starting, a script running `turnd pair`) both
   * see 0 before it, and only the first may migrate. */
  if (exec(db, "BEGIN IMMEDIATE") != 0) goto failed;
  int v = user_version(db);
  if (v < 0 || v > SCHEMA_VERSION) {
    snprintf(err, cap, "%s",
             v < 0 ? "cannot read auth.db's schema version"
                   : "auth.db was written by a newer turnd");
    exec(db, "ROLLBACK");
    return -1;
  }
  for (; v < SCHEMA_VERSION; v++)
    if (exec(db, migrations[v]) != 0) goto failed;
  char sql[64];
  snprintf(sql, sizeof sql, "PRAGMA user_version = %d", SCHEMA_VERSION);
  if (exec(db, sql) != 0 || exec(db, "COMMIT") != 0) goto failed;
  return 0;
failed:
  snprintf(err, cap, "cannot set up auth.db: %s", sqlite3_errmsg(db->db));
  exec(db, "ROLLBACK");
  return -1;
}

/* Switches to WAL. Another process switching at the same moment makes this
 * fail with "locked" without a busy handler's wait, so it is retried for up to
 * about a second; it runs only when the database is opened. */
static int use_wal(struct auth_db *db) {
  for (int tries = 0; tries < 50; tries++) {
    if (exec(db, "PRAGMA journal_mode = WAL") == 0) return 0;
    int code = sqlite3_errcode(db->db);
    if (code != SQLITE_BUSY && code != SQLITE_LOCKED) return -1;
    sqlite3_sleep(20);
  }
  return -1;
}

struct auth_db *auth_db_open(const char *dir, int busy_ms, char *err, size_t cap) {
  err[0] = '\0';
  char path[4096];
  if ((size_t)snprintf(path, sizeof path, "%s/auth.db", dir) >= sizeof path) {
    snprintf(err, cap, "the data folder's path is too long");
    return NULL;
  }
  /* Created 0600 before SQLite opens it: hashes only, but nobody else's business. */
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    snprintf(err, cap, "cannot open %s", path);
    return NULL;
  }
  close(fd);
  struct auth_db *db = calloc(1, sizeof *db);
  if (db == NULL) {
    snprintf(err, cap, "out of memory");
    return NULL;
  }
  db->last_version = -1;
  if (sqlite3_open_v2(path, &db->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
      SQLITE_OK) {
    snprintf(err, cap, "cannot open %s: %s", path, sqlite3_errmsg(db->db));
    auth_db_close(db);
    return NULL;
  }
  /* Writers hold the lock for a moment only (one small transaction each). */
  sqlite3_busy_timeout(db->db, 2000);
  if (use_wal(db) != 0 || exec(db, "PRAGMA synchronous = FULL") != 0 ||
      migrate(db, err, cap) != 0 ||
      sqlite3_prepare_v2(db->db, "PRAGMA data_version", -1, &db->data_version, NULL) !=
          SQLITE_OK) {
    if (err[0] == '\0')
      snprintf(err, cap, "cannot set up %s: %s", path, sqlite3_errmsg(db->db));
    auth_db_close(db);
    return NULL;
  }
  sqlite3_busy_timeout(db->db, busy_ms);
  return db;
}

void auth_db_close(struct auth_db *db) {
  if (db == NULL) return;
  sqlite3_finalize(db->data_version);
  sqlite3_close(db->db);
  free(db);
}

/* Prepares sql or says why not. */
static sqlite3_stmt *prepare(struct auth_db *db, const char *sql) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db->db, sql, -1, &s, NULL) != SQLITE_OK) {
    fail(db, "prepare");
    return NULL;
  }
  return s;
}

/* Steps a statement that returns no row; SQLITE_DONE, or the error code. */
static int run(sqlite3_stmt *s) {
  int rc = sqlite3_step(s);
  sqlite3_finalize(s);
  return rc;
}

bool auth_db_name_ok(const char *name) {
  size_t len = strlen(name);
  if (len == 0 || len > 64) return false;
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f) return false;
  return true;
}

int auth_db_device_add(struct auth_db *db, const char *name,
                       const unsigned char hash[CREDENTIAL_HASH_LEN], uint64_t now_ms) {
  sqlite3_stmt *s = prepare(db, "INSERT INTO devices (name, token_hash, created_ms)"
                                " VALUES (?1, ?2, ?3)");
  if (s == NULL) return -1;
  sqlite3_bind_text(s, 1, name, -1, SQLITE_TRANSIENT);
  sqlite3_bind_blob(s, 2, hash, CREDENTIAL_HASH_LEN, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 3, (sqlite3_int64)now_ms);
  int rc = run(s);
  if (rc == SQLITE_DONE) return 0;
  if (rc == SQLITE_CONSTRAINT) return 1; /* the name (a token hash cannot repeat) */
  return fail(db, "add a device");
}

int auth_db_device_named(struct auth_db *db, const char *name) {
  sqlite3_stmt *s = prepare(db, "SELECT 1 FROM devices WHERE name = ?1");
  if (s == NULL) return -1;
  sqlite3_bind_text(s, 1, name, -1, SQLITE_TRANSIENT);
  int rc = run(s);
  if (rc == SQLITE_ROW) return 1;
  return rc == SQLITE_DONE ? 0 : fail(db, "look up a device");
}

int auth_db_device_remove(struct auth_db *db, const char *name) {
  sqlite3_stmt *s = prepare(db, "DELETE FROM devices WHERE name = ?1");
  if (s == NULL) return -1;
  sqlite3_bind_text(s, 1, name, -1, SQLITE_TRANSIENT);
  if (run(s) != SQLITE_DONE) return fail(db, "remove a device");
  return sqlite3_changes(db->db) > 0 ? 0 : 1;
}

int auth_db_devices_each(struct auth_db *db, auth_device_cb *cb, void *ctx) {
  sqlite3_stmt *s = prepare(db, "SELECT id, name, token_hash, created_ms, last_seen_ms"
                                " FROM devices ORDER BY id");
  if (s == NULL) return -1;
  int rv = 0, rc;
  while (rv == 0 && (rc = sqlite3_step(s)) == SQLITE_ROW) {
    if (sqlite3_column_bytes(s, 2) != CREDENTIAL_HASH_LEN) continue;
    rv = cb(ctx, sqlite3_column_int64(s, 0), (const char *)sqlite3_column_text(s, 1),
            sqlite3_column_blob(s, 2), (uint64_t)sqlite3_column_int64(s, 3),
            (uint64_t)sqlite3_column_int64(s, 4));
  }
  if (rv == 0 && rc != SQLITE_DONE) rv = fail(db, "read the devices");
  sqlite3_finalize(s);
  return rv;
}

int auth_db_device_seen(struct auth_db *db, int64_t id, uint64_t now_ms) {
  sqlite3_stmt *s = prepare(db, "UPDATE devices SET last_seen_ms = ?2 WHERE id = ?1");
  if (s == NULL) return -1;
  sqlite3_bind_int64(s, 1, id);
  sqlite3_bind_int64(s, 2, (sqlite3_int64)now_ms);
  int rc = run(s);
  return rc == SQLITE_DONE || rc == SQLITE_BUSY ? 0 : fail(db, "record a device seen");
}

int auth_db_code_add(struct auth_db *db, const unsigned char hash[CREDENTIAL_HASH_LEN],
                     uint64_t expires_ms, uint64_t now_ms) {
  sqlite3_stmt *s = prepare(db, "DELETE FROM pair_codes WHERE expires_ms <= ?1");
  if (s == NULL) return -1;
  sqlite3_bind_int64(s, 1, (sqlite3_int64)now_ms);
  if (run(s) != SQLITE_DONE) return fail(db, "drop expired codes");
  s = prepare(db, "INSERT OR REPLACE INTO pair_codes VALUES (?1, ?2)");
  if (s == NULL) return -1;
  sqlite3_bind_blob(s, 1, hash, CREDENTIAL_HASH_LEN, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 2, (sqlite3_int64)expires_ms);
  return run(s) == SQLITE_DONE ? 0 : fail(db, "add a pairing code");
}

/* Runs sql, whose ?1 is a code's hash and ?2 the time now, on the codes that
 * have not expired. Returns run()'s SQLite code, or -1 when sql did not prepare
 * (already reported). */
static int run_on_live_code(struct auth_db *db, const char *sql,
                            const unsigned char hash[CREDENTIAL_HASH_LEN],
                            uint64_t now_ms) {
  sqlite3_stmt *s = prepare(db, sql);
  if (s == NULL) return -1;
  sqlite3_bind_blob(s, 1, hash, CREDENTIAL_HASH_LEN, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 2, (sqlite3_int64)now_ms);
  return run(s);
}

int auth_db_code_valid(struct auth_db *db, const unsigned char hash[CREDENTIAL_HASH_LEN],
                       uint64_t now_ms) {
  int rc = run_on_live_code(db,
                            "SELECT 1 FROM pair_codes WHERE code_hash = ?1"
                            " AND expires_ms > ?2",
                            hash, now_ms);
  if (rc < 0) return -1;
  if (rc == SQLITE_ROW) return 1;
  return rc == SQLITE_DONE ? 0 : fail(db, "check a pairing code");
}

int auth_db_code_take(struct auth_db *db, const unsigned char hash[CREDENTIAL_HASH_LEN],
                      uint64_t now_ms) {
  /* One statement: two pairings with the same code cannot both take it. */
  int rc = run_on_live_code(db,
                            "DELETE FROM pair_codes WHERE code_hash = ?1"
                            " AND expires_ms > ?2",
                            hash, now_ms);
  if (rc < 0) return -1;
  if (rc != SQLITE_DONE) return fail(db, "use a pairing code");
  return sqlite3_changes(db->db) > 0 ? 1 : 0;
}

int auth_db_get(struct auth_db *db, const char *name, char *out, size_t cap) {
  sqlite3_stmt *s = prepare(db, "SELECT value FROM settings WHERE name = ?1");
  if (s == NULL) return -1;
  sqlite3_bind_text(s, 1, name, -1, SQLITE_TRANSIENT);
  int rc = sqlite3_step(s), rv = 0;
  if (rc == SQLITE_ROW) {
    size_t len = (size_t)sqlite3_column_bytes(s, 0);
    const unsigned char *v = sqlite3_column_text(s, 0);
    if (v != NULL && len < cap) {
      memcpy(out, v, len + 1);
      rv = 1;
    }
  } else if (rc != SQLITE_DONE) {
    rv = fail(db, "read a setting");
  }
  sqlite3_finalize(s);
  return rv;
}

int auth_db_set(struct auth_db *db, const char *name, const char *value) {
  sqlite3_stmt *s =
      prepare(db, value != NULL ? "INSERT OR REPLACE INTO settings VALUES (?1, ?2)"
                                : "DELETE FROM settings WHERE name = ?1");
  if (s == NULL) return -1;
  sqlite3_bind_text(s, 1, name, -1, SQLITE_TRANSIENT);
  if (value != NULL) sqlite3_bind_text(s, 2, value, -1, SQLITE_TRANSIENT);
  return run(s) == SQLITE_DONE ? 0 : fail(db, "write a setting");
}

void auth_db_change_missed(struct auth_db *db) {
  db->last_version = -1;
}

int auth_db_changed(struct auth_db *db) {
  int rc = sqlite3_step(db->data_version);
  int64_t v = rc == SQLITE_ROW ? sqlite3_column_int64(db->data_version, 0) : -1;
  sqlite3_reset(db->data_version);
  if (v < 0) return fail(db, "check for changes");
  bool changed = v != db->last_version;
  db->last_version = v;
  return changed ? 1 : 0;
}
