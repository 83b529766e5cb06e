/* The store on SQLite (see store.h). The loop's connection sets up the schema
 * and then only reads; writes are queued and carried out by the writer
 * (store_write.c). A lock file keeps a second turnd away from the same data
 * folder (the database itself stays readable, so the sqlite3 shell can inspect
 * or back it up while turnd runs). Statements are prepared once. */
#include "store_impl.h"

#include "store_write.h"
#include "turn/turn.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

/* Schema migrations: migrations[v] brings a database from user_version v to
 * v + 1. Append only; a released step never changes. */
static const char *const migrations[] = {
    /* 0 -> 1: sessions, their messages, turns and their events in chunks. */
    "CREATE TABLE sessions ("
    "  id TEXT PRIMARY KEY, title TEXT NOT NULL, channel TEXT NOT NULL,"
    "  created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL,"
    "  message_count INTEGER NOT NULL);"
    "CREATE TABLE messages ("
    "  session TEXT NOT NULL, n INTEGER NOT NULL, turn TEXT NOT NULL,"
    "  at_ms INTEGER NOT NULL, body TEXT NOT NULL,"
    "  PRIMARY KEY (session, n)) WITHOUT ROWID;"
    "CREATE TABLE turns ("
    "  id TEXT PRIMARY KEY, session TEXT NOT NULL, started_ms INTEGER NOT NULL,"
    "  ended INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX turns_by_session ON turns (session, started_ms);"
    "CREATE INDEX turns_unended ON turns (id) WHERE ended = 0;"
    "CREATE TABLE events ("
    "  turn TEXT NOT NULL, first_seq INTEGER NOT NULL, n INTEGER NOT NULL,"
    "  at_ms INTEGER NOT NULL, lines BLOB NOT NULL,"
    "  PRIMARY KEY (turn, first_seq)) WITHOUT ROWID;",
    /* 1 -> 2: the last hand-over the database carried out, so that at start-up
     * the journal's later frames, and only those, are carried out again. */
    "CREATE TABLE journal (gen INTEGER NOT NULL);"
    "INSERT INTO journal (gen) VALUES (0);",
    /* 2 -> 3: a long message is stored in parts as it grows (its front, in
     * message_parts), and its row, written when it is complete, holds the rest
     * and the number of parts before it. */
    "ALTER TABLE messages ADD COLUMN parts INTEGER NOT NULL DEFAULT 0;"
    "CREATE TABLE message_parts ("
    "  session TEXT NOT NULL, n INTEGER NOT NULL, part INTEGER NOT NULL,"
    "  body BLOB NOT NULL, UNIQUE (session, n, part));",
};
#define SCHEMA_VERSION ((int)(sizeof migrations / sizeof migrations[0]))

enum stmt_id { ST_SESSIONS, ST_TURN_EVENTS, ST_TURN_FIND, ST_UNENDED, ST_COUNT };

/* The reads, on the loop's connection (the writes are in store_write.c). */
static const char *const stmt_sql[ST_COUNT] = {
    [ST_SESSIONS] =
        "SELECT id, title, created_ms, updated_ms, message_count FROM sessions",
    /* From the chunk that holds seq ?2 on. */
    [ST_TURN_EVENTS] = "SELECT turn, first_seq, n, at_ms, lines FROM events"
                       " WHERE turn = ?1 AND first_seq >= coalesce((SELECT max(first_seq)"
                       " FROM events WHERE turn = ?1 AND first_seq <= ?2), 0)"
                       " ORDER BY first_seq",
    /* With its event count: the last chunk's end, found through the key. */
    [ST_TURN_FIND] = "SELECT coalesce((SELECT first_seq + n FROM events WHERE turn = ?1"
                     " ORDER BY first_seq DESC LIMIT 1), 0) FROM turns WHERE id = ?1",
    [ST_UNENDED] =
        "SELECT t.id, t.session, coalesce((SELECT max(first_seq + n)"
        " FROM events WHERE turn = t.id), 0), (SELECT count(*) FROM messages"
        " WHERE session = t.session AND turn = t.id), NOT EXISTS (SELECT 1"
        " FROM turns l JOIN messages m ON m.session = l.session AND m.turn = l.id"
        " WHERE l.session = t.session AND l.rowid > t.rowid)"
        " FROM turns t WHERE t.ended = 0",
};

/* The reads of a session's conversation and history, on a reader's connection
 * (store_reader_*): the loop makes neither. */
static const char messages_sql[] = "SELECT n, turn, at_ms, body, parts FROM messages"
                                   " WHERE session = ?1 ORDER BY n";
/* The front of a message stored in parts, in order. */
static const char message_parts_sql[] = "SELECT body FROM message_parts"
                                        " WHERE session = ?1 AND n = ?2 AND part < ?3"
                                        " ORDER BY part";
static const char session_events_sql[] =
    "SELECT e.turn, e.first_seq, e.n, e.at_ms, e.lines"
    " FROM turns t JOIN events e ON e.turn = t.id WHERE t.session = ?1"
    " ORDER BY t.rowid, e.first_seq"; /* the turns as they started */

struct sqlite_store {
  struct store base; /* first: what the store's callers hold */
  char path[4096];   /* DIR/turnd.db */
  int lock_fd;       /* DIR/turnd.lock, flock'ed while we run; the kernel drops the lock
                        when the process dies, however it dies */
  sqlite3 *db;       /* the loop's connection: the schema at start-up, then reads */
  sqlite3_stmt *stmt[ST_COUNT];
  struct writer writer;
  bool writer_started;
  struct write_list open; /* queued since the last store_commit() */
  bool open_urgent;       /* open holds a turn's end: commit it without delay */
};

static void say(sqlite3 *db, const char *what) {
  /* SQLite's message names the failure, never the values bound. */
  fprintf(stderr, "turnd: store: %s: %s\n", what, sqlite3_errmsg(db));
}

static int exec(struct sqlite_store *st, const char *sql) {
  char *msg = NULL;
  if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) == SQLITE_OK) return 0;
  sqlite3_free(msg);
  return -1;
}

static int user_version(struct sqlite_store *st) {
  sqlite3_stmt *s;
  int v = -1;
  if (sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK)
    return -1;
  if (sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_int(s, 0);
  sqlite3_finalize(s);
  return v;
}

/* Brings the schema to SCHEMA_VERSION in one transaction: all steps or none. */
static int migrate(struct sqlite_store *st, char *err, size_t cap) {
  int v = user_version(st);
  if (v < 0) {
    snprintf(err, cap, "cannot read the schema version: %s", sqlite3_errmsg(st->db));
    return -1;
  }
  if (v > SCHEMA_VERSION) {
    snprintf(err, cap, "the database has schema version %d, newer than this turnd (%d)",
             v, SCHEMA_VERSION);
    return -1;
  }
  if (v == SCHEMA_VERSION) return 0;
  if (exec(st, "BEGIN IMMEDIATE") != 0) goto fail;
  for (; v < SCHEMA_VERSION; v++)
    if (exec(st, migrations[v]) != 0) goto fail;
  char sql[64];
  snprintf(sql, sizeof sql, "PRAGMA user_version = %d", SCHEMA_VERSION);
  if (exec(st, sql) != 0 || exec(st, "COMMIT") != 0) goto fail;
  return 0;
fail:
  snprintf(err, cap, "cannot bring the schema to version %d: %s", SCHEMA_VERSION,
           sqlite3_errmsg(st->db));
  exec(st, "ROLLBACK");
  return -1;
}

static const struct store_ops sqlite_ops;
static void sqlite_close(struct store *base);
static uint64_t sqlite_commit(struct store *base, bool now);

struct store *sqlite_store_open(const char *dir, char *err, size_t cap) {
  struct sqlite_store *st = calloc(1, sizeof *st);
  if (st == NULL) {
    snprintf(err, cap, "out of memory");
    return NULL;
  }
  st->base.ops = &sqlite_ops;
  st->lock_fd = -1;
  char path[4096];
  snprintf(path, sizeof path, "%s/turnd.lock", dir);
  st->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (st->lock_fd < 0 || flock(st->lock_fd, LOCK_EX | LOCK_NB) != 0) {
    snprintf(err, cap, "%s: %s", path,
             errno == EWOULDBLOCK ? "another turnd uses this data folder"
                                  : strerror(errno));
    sqlite_close(&st->base);
    return NULL;
  }
  snprintf(path, sizeof path, "%s/turnd.db", dir);
  snprintf(st->path, sizeof st->path, "%s", path);
  /* Created 0600 before SQLite opens it (its log and shared memory then get
   * the same mode): the conversations are the owner's alone, even in a folder
   * others may list. Files an older turnd made with the umask's mode lose what
   * they gave others. */
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    snprintf(err, cap, "cannot open %s: %s", path, strerror(errno));
    sqlite_close(&st->base);
    return NULL;
  }
  close(fd);
  static const char *const files[] = {"", "-wal", "-shm"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char file[4200];
    snprintf(file, sizeof file, "%s%s", path, files[i]);
    /* Through the open file, and only our own regular file: never through a
     * link, which could name anyone's file (and turnd may run as root). */
    int f = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (f < 0) continue;
    struct stat sb;
    if (fstat(f, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == geteuid() &&
        (sb.st_mode & 077) != 0)
      (void)fchmod(f, sb.st_mode & 0700);
    close(f);
  }
  if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
      SQLITE_OK) {
    snprintf(err, cap, "cannot open %s: %s", path,
             st->db != NULL ? sqlite3_errmsg(st->db) : "out of memory");
    sqlite_close(&st->base);
    return NULL;
  }
  /* WAL: readers never wait for the writer, nor it for them. */
  if (exec(st, "PRAGMA journal_mode = WAL") != 0) {
    snprintf(err, cap, "cannot set up %s: %s", path, sqlite3_errmsg(st->db));
    sqlite_close(&st->base);
    return NULL;
  }
  if (migrate(st, err, cap) != 0) {
    sqlite_close(&st->base);
    return NULL;
  }
  for (int i = 0; i < ST_COUNT; i++)
    if (sqlite3_prepare_v3(st->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
                           &st->stmt[i], NULL) != SQLITE_OK) {
      snprintf(err, cap, "cannot prepare a statement: %s", sqlite3_errmsg(st->db));
      sqlite_close(&st->base);
      return NULL;
    }
  /* This connection only reads from now on, so it never checkpoints. */
  st->writer_started = true; /* writer_stop is safe on a half-started writer */
  if (writer_start(&st->writer, path, dir, err, cap) != 0) {
    sqlite_close(&st->base);
    return NULL;
  }
  return &st->base;
}

static void sqlite_close(struct store *base) {
  struct sqlite_store *st = (struct sqlite_store *)base;
  if (st->writer_started) {
    sqlite_commit(&st->base, true);
    writer_stop(&st->writer); /* carries out what it was handed first */
  }
  write_list_free(&st->open);
  for (int i = 0; i < ST_COUNT; i++)
    sqlite3_finalize(st->stmt[i]);
  sqlite3_close(st->db);
  if (st->lock_fd >= 0) close(st->lock_fd);
  free(st);
}

/* ------------------------------------------------------------------ writes */

/* Queues a write of kind with up to three strings (NULL: none) and a blob, all
 * copied. Returns 0, or -1 when out of memory (said on stderr). */
static int queue(struct sqlite_store *st, enum write_kind kind, const char *s0,
                 const char *s1, const char *s2, uint64_t n0, uint64_t n1, uint64_t n2,
                 const void *blob, size_t blob_len, void *owner) {
  const char *const s[3] = {s0, s1, s2};
  size_t len[3];
  for (int i = 0; i < 3; i++)
    len[i] = s[i] != NULL ? strlen(s[i]) : 0;
  const uint64_t num[3] = {n0, n1, n2};
  struct write *wr = write_new(kind, s, len, num, blob, blob_len, owner);
  if (wr == NULL) {
    fprintf(stderr, "turnd: store: out of memory; a write is lost\n");
    return -1;
  }
  if (st->open.first == NULL)
    st->open.first = wr;
  else
    st->open.last->next = wr;
  st->open.last = wr;
  return 0;
}

static uint64_t sqlite_commit(struct store *base, bool now) {
  struct sqlite_store *st = (struct sqlite_store *)base;
  bool urgent = now || st->open_urgent;
  st->open_urgent = false;
  return writer_hand(&st->writer, &st->open, urgent);
}

static bool sqlite_journaled(const struct store *base) {
  const struct sqlite_store *st = (const struct sqlite_store *)base;
  return writer_journaled(&st->writer);
}

static uint64_t sqlite_committed(struct store *base) {
  struct sqlite_store *st = (struct sqlite_store *)base;
  return writer_done_gen(&st->writer);
}

static int sqlite_fd(const struct store *base) {
  const struct sqlite_store *st = (const struct sqlite_store *)base;
  return st->writer.done_fd;
}

static void sqlite_release_memory(struct store *base) {
  struct sqlite_store *st = (struct sqlite_store *)base;
  sqlite3_db_release_memory(st->db);
}

static void sqlite_reap(struct store *base, store_done_cb *cb, void *ctx) {
  struct sqlite_store *st = (struct sqlite_store *)base;
  struct write_list done;
  writer_take_done(&st->writer, &done);
  for (struct write *wr = done.first; wr != NULL; wr = wr->next)
    if (wr->kind == WRITE_EVENTS_ADD && cb != NULL)
      cb(ctx, wr->owner, wr->num[0] + wr->num[1]);
  write_list_free(&done);
}

static void sqlite_sync(struct store *base) {
  struct sqlite_store *st = (struct sqlite_store *)base;
  sqlite_commit(&st->base, true);
  writer_wait(&st->writer);
}

static int sqlite_session_put(struct store *base, const char *id, const char *title,
                              uint64_t created_ms, uint64_t updated_ms,
                              uint64_t message_count) {
  struct sqlite_store *st = (struct sqlite_store *)base;
  return queue(st, WRITE_SESSION_PUT, id, title, NULL, created_ms, updated_ms,
               message_count, NULL, 0, NULL);
}

static int sqlite_message_add(struct store *base, const char *session, uint64_t n,
                              const char *turn, uint64_t at_ms, const char *json,
                              uint64_t parts) {
  struct sqlite_store *st = (struct sqlite_store *)base;
  return queue(st, WRITE_MESSAGE_ADD, session, turn, json, n, at_ms, parts, NULL, 0,
               NULL);
}

static int sqlite_message_part(struct store *base, const char *session, uint64_t n,
                               uint64_t part, const char *bytes, size_t len) {
  struct sqlite_store *st = (struct sqlite_store *)base;
  return queue(st, WRITE_MESSAGE_PART, session, NULL, NULL, n, part, 0, bytes, len, NULL);
}

static int sqlite_turn_add(struct store *base, const char *turn, const char *session,
                           uint64_t started_ms) {
  struct sqlite_store *st = (struct sqlite_store *)base;
  return queue(st, WRITE_TURN_ADD, turn, session, NULL, started_ms, 0, 0, NULL, 0, NULL);
}

static int sqlite_events_add(struct store *base, const char *turn, uint64_t first_seq,
                             uint64_t n, uint64_t at_ms, const char *lines, size_t len,
                             void *owner) {
  struct sqlite_store *st = (struct sqlite_store *)base;
  return queue(st, WRITE_EVENTS_ADD, turn, NULL, NULL, first_seq, n, at_ms, lines, len,
               owner);
}

static int sqlite_turn_ended(struct store *base, const char *turn) {
  struct sqlite_store *st = (struct sqlite_store *)base;
  /* A reader is shown a turn's end only once it is committed (run.c), so that
   * the session's history then has all of the turn: no delay. */
  st->open_urgent = true;
  return queue(st, WRITE_TURN_ENDED, turn, NULL, NULL, 0, 0, 0, NULL, 0, NULL);
}

/* ------------------------------------------------------------------- reads */

static void bind_text(sqlite3_stmt *s, int i, const char *text) {
  sqlite3_bind_text(s, i, text, -1, SQLITE_STATIC);
}

static void bind_u64(sqlite3_stmt *s, int i, uint64_t v) {
  sqlite3_bind_int64(s, i, (sqlite3_int64)v);
}

static uint64_t col_u64(sqlite3_stmt *s, int i) {
  return (uint64_t)sqlite3_column_int64(s, i);
}

static const char *col_text(sqlite3_stmt *s, int i) {
  const unsigned char *t = sqlite3_column_text(s, i);
  return t != NULL ? (const char *)t : "";
}

/* Steps s to its end, calling row for each row. Returns 0, row's non-zero
 * return, or -1 on a database error. */
static int walk(sqlite3_stmt *s, int (*row)(sqlite3_stmt *, void *), void *ctx) {
  int rc, out = 0;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW)
    if ((out = row(s, ctx)) != 0) break;
  if (out == 0 && rc != SQLITE_DONE) {
    say(sqlite3_db_handle(s), "read");
    out = -1;
  }
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  return out;
}

struct session_walk {
  store_session_cb *cb;
  void *ctx;
};

static int session_row(sqlite3_stmt *s, void *arg) {
  struct session_walk *w = arg;
  return w->cb(w->ctx, col_text(s, 0), col_text(s, 1), col_u64(s, 2), col_u64(s, 3),
               col_u64(s, 4));
}

static int sqlite_sessions_each(struct store *base, store_session_cb *cb, void *ctx) {
  struct sqlite_store *st = (struct sqlite_store *)base;
  struct session_walk w = {cb, ctx};
  return walk(st->stmt[ST_SESSIONS], session_row, &w);
}

struct message_walk {
  store_message_cb *cb;
  void *ctx;
  sqlite3_stmt *parts; /* message_parts_sql, on the same connection */
  const char *session;
};

/* A message stored in parts being joined: its parts so far, and how many. */
struct joining {
  turn_buf text;
  uint64_t found;
};

static int part_row(sqlite3_stmt *s, void *arg) {
  struct joining *j = arg;
  const void *body = sqlite3_column_blob(s, 0);
  size_t len = (size_t)sqlite3_column_bytes(s, 0);
  if (len > 0 && turn_buf_append(&j->text, body, len) != TURN_OK) return -1;
  j->found++;
  return 0;
}

/* A message stored in parts: its parts, then the rest its row holds, joined
 * into *out (malloc'd, NUL-ended). Returns 0; 1 when a part is missing (its
 * write was refused, as a message's can be: the message is skipped); -1 on a
 * database error or out of memory. */
static int join_parts(struct message_walk *w, uint64_t n, uint64_t parts,
                      const char *rest, char **out) {
  bind_text(w->parts, 1, w->session);
  bind_u64(w->parts, 2, n);
  bind_u64(w->parts, 3, parts);
  struct joining j = {.found = 0};
  turn_buf_init(&j.text, SIZE_MAX, NULL);
  int rc = walk(w->parts, part_row, &j);
  if (rc == 0 && j.found != parts) {
    fprintf(stderr, "turnd: store: a message stored in parts lacks one; it is skipped\n");
    rc = 1;
  }
  if (rc == 0 && turn_buf_append(&j.text, rest, strlen(rest) + 1) != TURN_OK) rc = -1;
  if (rc != 0) {
    turn_buf_fini(&j.text);
    return rc;
  }
  *out = j.text.data; /* malloc'd: turn_buf's default allocator */
  return 0;
}

static int message_row(sqlite3_stmt *s, void *arg) {
  struct message_walk *w = arg;
  uint64_t n = col_u64(s, 0), parts = col_u64(s, 4);
  if (parts == 0) return w->cb(w->ctx, n, col_text(s, 1), col_u64(s, 2), col_text(s, 3));
  char *whole = NULL;
  int rc = join_parts(w, n, parts, col_text(s, 3), &whole);
  if (rc != 0) return rc > 0 ? 0 : -1;
  rc = w->cb(w->ctx, n, col_text(s, 1), col_u64(s, 2), whole);
  free(whole);
  return rc;
}

struct chunk_walk {
  store_chunk_cb *cb;
  void *ctx;
};

static int chunk_row(sqlite3_stmt *s, void *arg) {
  struct chunk_walk *w = arg;
  const void *blob = sqlite3_column_blob(s, 4);
  size_t len = (size_t)sqlite3_column_bytes(s, 4);
  return w->cb(w->ctx, col_text(s, 0), col_u64(s, 1), col_u64(s, 2), col_u64(s, 3),
               blob != NULL ? blob : "", len);
}

static int session_events_each(sqlite3_stmt *s, const char *session, store_chunk_cb *cb,
                               void *ctx) {
  struct chunk_walk w = {cb, ctx};
  bind_text(s, 1, session);
  return walk(s, chunk_row, &w);
}

static int sqlite_turn_events_each(struct store *base, const char *turn, uint64_t seq,
                                   store_chunk_cb *cb, void *ctx) {
  struct sqlite_store *st = (struct sqlite_store *)base;
  struct chunk_walk w = {cb, ctx};
  bind_text(st->stmt[ST_TURN_EVENTS], 1, turn);
  bind_u64(st->stmt[ST_TURN_EVENTS], 2, seq);
  return walk(st->stmt[ST_TURN_EVENTS], chunk_row, &w);
}

struct found {
  bool found;
  uint64_t n_events;
};

static int found_row(sqlite3_stmt *s, void *arg) {
  struct found *f = arg;
  f->found = true;
  f->n_events = col_u64(s, 0);
  return 0;
}

static int sqlite_turn_find(struct store *base, const char *turn, uint64_t *n_events) {
  struct sqlite_store *st = (struct sqlite_store *)base;
  struct found f = {false, 0};
  bind_text(st->stmt[ST_TURN_FIND], 1, turn);
  if (walk(st->stmt[ST_TURN_FIND], found_row, &f) != 0) return -1;
  if (f.found && n_events != NULL) *n_events = f.n_events;
  return f.found ? 1 : 0;
}

static int sqlite_turn_exists(struct store *base, const char *turn) {
  struct sqlite_store *st = (struct sqlite_store *)base;
  return sqlite_turn_find(&st->base, turn, NULL);
}

struct unended {
  char *turn, *session;
  uint64_t next_seq, messages;
  bool latest;
};

struct unended_list {
  struct unended *items;
  size_t n, cap;
};

static int unended_row(sqlite3_stmt *s, void *arg) {
  struct unended_list *l = arg;
  struct unended *grown = turn_grow(l->items, l->n, &l->cap, sizeof *grown, 8);
  if (grown == NULL) return -1;
  l->items = grown;
  struct unended *u = &l->items[l->n];
  u->turn = strdup(col_text(s, 0));
  u->session = strdup(col_text(s, 1));
  u->next_seq = col_u64(s, 2);
  u->messages = col_u64(s, 3);
  u->latest = col_u64(s, 4) != 0;
  if (u->turn == NULL || u->session == NULL) {
    free(u->turn);
    free(u->session);
    return -1;
  }
  l->n++;
  return 0;
}

static int sqlite_unended_each(struct store *base, store_unended_cb *cb, void *ctx) {
  struct sqlite_store *st = (struct sqlite_store *)base;
  /* Collected first: the callback writes to the table being read. */
  struct unended_list l = {NULL, 0, 0};
  int rc = walk(st->stmt[ST_UNENDED], unended_row, &l);
  for (size_t i = 0; i < l.n; i++) {
    if (rc == 0)
      rc = cb(ctx, l.items[i].turn, l.items[i].session, l.items[i].next_seq,
              l.items[i].messages, l.items[i].latest);
    free(l.items[i].turn);
    free(l.items[i].session);
  }
  free(l.items);
  return rc;
}

/* ------------------------------------------------------------ other readers */

struct sqlite_reader {
  struct store_reader base; /* first */
  sqlite3 *db;
  sqlite3_stmt *messages, *message_parts, *session_events;
};

static int messages_each(struct sqlite_reader *r, const char *session,
                         store_message_cb *cb, void *ctx) {
  struct message_walk w = {cb, ctx, r->message_parts, session};
  bind_text(r->messages, 1, session);
  return walk(r->messages, message_row, &w);
}

static void sqlite_reader_close(struct store_reader *base);

static struct store_reader *sqlite_reader_open(const struct store *base) {
  const struct sqlite_store *st = (const struct sqlite_store *)base;
  struct sqlite_reader *r = calloc(1, sizeof *r);
  if (r == NULL) return NULL;
  /* NOMUTEX: one thread at a time uses it, as the loop's own. It may wait
   * for a lock (a reader can meet one while the log is recovered or starts
   * over): it is not the loop. */
  if (sqlite3_open_v2(st->path, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                      NULL) != SQLITE_OK ||
      sqlite3_busy_timeout(r->db, 2000) != SQLITE_OK ||
      sqlite3_prepare_v3(r->db, messages_sql, -1, SQLITE_PREPARE_PERSISTENT, &r->messages,
                         NULL) != SQLITE_OK ||
      sqlite3_prepare_v3(r->db, message_parts_sql, -1, SQLITE_PREPARE_PERSISTENT,
                         &r->message_parts, NULL) != SQLITE_OK ||
      sqlite3_prepare_v3(r->db, session_events_sql, -1, SQLITE_PREPARE_PERSISTENT,
                         &r->session_events, NULL) != SQLITE_OK) {
    if (r->db != NULL) say(r->db, "open a reader");
    sqlite_reader_close(&r->base);
    return NULL;
  }
  r->base.ops = st->base.ops;
  return &r->base;
}

static void sqlite_reader_close(struct store_reader *base) {
  struct sqlite_reader *r = (struct sqlite_reader *)base;
  sqlite3_finalize(r->messages);
  sqlite3_finalize(r->message_parts);
  sqlite3_finalize(r->session_events);
  sqlite3_close(r->db);
  free(r);
}

static int sqlite_reader_messages_each(struct store_reader *base, const char *session,
                                       store_message_cb *cb, void *ctx) {
  struct sqlite_reader *r = (struct sqlite_reader *)base;
  return messages_each(r, session, cb, ctx);
}

static int sqlite_reader_history_each(struct store_reader *base, const char *session,
                                      store_chunk_cb *chunk_cb,
                                      store_message_cb *message_cb, void *ctx) {
  struct sqlite_reader *r = (struct sqlite_reader *)base;
  /* One read transaction: the writer commits between two statements otherwise,
   * and a message could come without the events around it. */
  if (sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
    say(r->db, "begin a read");
    return -1;
  }
  int rc = session_events_each(r->session_events, session, chunk_cb, ctx);
  if (rc == 0) rc = messages_each(r, session, message_cb, ctx);
  sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL); /* a read: nothing to lose */
  return rc;
}

static const struct store_ops sqlite_ops = {
    .close = sqlite_close,
    .commit = sqlite_commit,
    .journaled = sqlite_journaled,
    .committed = sqlite_committed,
    .fd = sqlite_fd,
    .release_memory = sqlite_release_memory,
    .reap = sqlite_reap,
    .sync = sqlite_sync,
    .session_put = sqlite_session_put,
    .message_add = sqlite_message_add,
    .message_part = sqlite_message_part,
    .turn_add = sqlite_turn_add,
    .events_add = sqlite_events_add,
    .turn_ended = sqlite_turn_ended,
    .sessions_each = sqlite_sessions_each,
    .turn_events_each = sqlite_turn_events_each,
    .turn_find = sqlite_turn_find,
    .turn_exists = sqlite_turn_exists,
    .unended_each = sqlite_unended_each,
    .reader_open = sqlite_reader_open,
    .reader_close = sqlite_reader_close,
    .reader_messages_each = sqlite_reader_messages_each,
    .reader_history_each = sqlite_reader_history_each,
};
