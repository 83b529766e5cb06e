/* The store's writer thread and checkpointer (see store_write.h). */
#include "store_write.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

static const char *const write_sql[WRITE__COUNT] = {
    [WRITE_SESSION_PUT] = "INSERT INTO sessions (id, title, channel, created_ms,"
                          " updated_ms, message_count) VALUES (?1, ?2, 'web', ?4, ?5, ?6)"
                          " ON CONFLICT (id) DO UPDATE SET title = ?2, updated_ms = ?5,"
                          " message_count = ?6",
    [WRITE_MESSAGE_ADD] = "INSERT INTO messages (session, n, turn, at_ms, body)"
                          " VALUES (?1, ?4, ?2, ?5, ?3)",
    [WRITE_TURN_ADD] = "INSERT INTO turns (id, session, started_ms) VALUES (?1, ?2, ?4)",
    [WRITE_EVENTS_ADD] = "INSERT INTO events (turn, first_seq, n, at_ms, lines)"
                         " VALUES (?1, ?4, ?5, ?6, ?7)",
    [WRITE_TURN_ENDED] = "UPDATE turns SET ended = 1 WHERE id = ?1",
};
/* Every statement binds the strings as ?1..?3, the numbers as ?4..?6 and the
 * blob as ?7: one binding routine serves them all. */
static const char *const write_what[WRITE__COUNT] = {
    [WRITE_SESSION_PUT] = "session", [WRITE_MESSAGE_ADD] = "message",
    [WRITE_TURN_ADD] = "turn",       [WRITE_EVENTS_ADD] = "events",
    [WRITE_TURN_ENDED] = "turn end",
};

/* The checkpointer is asked to copy the log back into the database each time
 * it grew by this many frames (pages). */
#define CHECKPOINT_PAGES 2000
/* A log this long (about 32 MiB) is checkpointed by the writer itself: with no
 * commit running beside it, that checkpoint reaches the log's end (unless a
 * reader still needs old frames), and the next commit starts the log over. */
#define WAL_CAP_FRAMES (4 * CHECKPOINT_PAGES)
/* Past this (about 64 MiB), when the disk is too slow for the checkpointer to
 * keep up, the writer waits for the checkpointer's run to end rather than let
 * the log grow: the log's hard bound. */
#define WAL_HARD_FRAMES (2 * WAL_CAP_FRAMES)

/* Asks the checkpointer for a run. */
static void checkpointer_ask(struct checkpointer *cp) {
  pthread_mutex_lock(&cp->lock);
  cp->due = true;
  pthread_cond_signal(&cp->wake);
  pthread_mutex_unlock(&cp->lock);
}

/* Whether the checkpointer is neither running nor asked to; with wait, it
 * waits until so. */
static bool checkpointer_idle(struct checkpointer *cp, bool wait) {
  pthread_mutex_lock(&cp->lock);
  while (wait && (cp->due || cp->running))
    pthread_cond_wait(&cp->done, &cp->lock);
  bool idle = !cp->due && !cp->running;
  pthread_mutex_unlock(&cp->lock);
  return idle;
}

static void say(sqlite3 *db, const char *what) {
  /* SQLite's message names the failure, never the values bound. */
  fprintf(stderr, "turnd: store: %s: %s\n", what, sqlite3_errmsg(db));
}

static int exec(sqlite3 *db, const char *sql) {
  char *msg = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK) return 0;
  sqlite3_free(msg);
  return -1;
}

/* ------------------------------------------------------------ checkpointer */

static void *checkpoint_main(void *arg) {
  struct checkpointer *cp = arg;
  pthread_mutex_lock(&cp->lock);
  for (;;) {
    while (!cp->due && !cp->stop)
      pthread_cond_wait(&cp->wake, &cp->lock);
    if (cp->stop) break;
    cp->due = false;
    cp->running = true;
    pthread_mutex_unlock(&cp->lock);
    /* PASSIVE: copies what no reader needs and never waits for the writer. */
    sqlite3_wal_checkpoint_v2(cp->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    pthread_mutex_lock(&cp->lock);
    cp->running = false;
    pthread_cond_broadcast(&cp->done);
  }
  pthread_mutex_unlock(&cp->lock);
  return NULL;
}

/* sqlite3_wal_hook: runs on the writer's thread after each commit, with the
 * frames now in the log (fewer than before once the log started over).
 *
 * Below WAL_CAP_FRAMES the checkpointer is asked for a run once per
 * CHECKPOINT_PAGES of growth (each run syncs the disk twice). At the cap the
 * writer must checkpoint itself, and how long it pauses is what that checkpoint
 * has left to copy and sync; so first the checkpointer, once idle, is asked for
 * a run (catching_up), and once that run is over the writer copies only what
 * was committed during it. Only the writer asks, so the checkpointer is idle
 * again only once the run it asked for is over. If a reader still held frames,
 * the log did not start over and the next commit asks again. */
static int on_wal_commit(void *arg, sqlite3 *db, const char *name, int pages) {
  (void)name;
  struct checkpointer *cp = arg;
  if (pages < cp->last_pages) { /* the log started over */
    cp->ask_at = CHECKPOINT_PAGES;
    cp->catching_up = false;
  }
  cp->last_pages = pages;
  if (pages >= WAL_CAP_FRAMES) {
    if (!checkpointer_idle(cp, pages >= WAL_HARD_FRAMES))
      return SQLITE_OK; /* the next commit looks again */
    if (!cp->catching_up && pages < WAL_HARD_FRAMES) {
      cp->catching_up = true;
      checkpointer_ask(cp);
    } else {
      cp->catching_up = false;
      sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    }
    return SQLITE_OK;
  }
  if (pages < cp->ask_at) return SQLITE_OK;
  cp->ask_at = pages + CHECKPOINT_PAGES;
  checkpointer_ask(cp);
  return SQLITE_OK;
}

static int checkpointer_start(struct checkpointer *cp, const char *path) {
  /* A connection that has not read yet does not know the database is in WAL
   * mode, and its checkpoints do nothing: it reads once here. */
  cp->ask_at = CHECKPOINT_PAGES;
  if (sqlite3_open_v2(path, &cp->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
          SQLITE_OK ||
      exec(cp->db, "SELECT 1 FROM sqlite_schema LIMIT 1") != 0)
    return -1;
  if (pthread_mutex_init(&cp->lock, NULL) != 0) return -1;
  if (pthread_cond_init(&cp->wake, NULL) != 0) {
    pthread_mutex_destroy(&cp->lock);
    return -1;
  }
  if (pthread_cond_init(&cp->done, NULL) != 0) {
    pthread_cond_destroy(&cp->wake);
    pthread_mutex_destroy(&cp->lock);
    return -1;
  }
  if (pthread_create(&cp->thread, NULL, checkpoint_main, cp) != 0) {
    pthread_cond_destroy(&cp->done);
    pthread_cond_destroy(&cp->wake);
    pthread_mutex_destroy(&cp->lock);
    return -1;
  }
  cp->started = true;
  return 0;
}

static void checkpointer_stop(struct checkpointer *cp) {
  if (cp->started) {
    pthread_mutex_lock(&cp->lock);
    cp->stop = true;
    pthread_cond_signal(&cp->wake);
    pthread_mutex_unlock(&cp->lock);
    pthread_join(cp->thread, NULL);
    pthread_cond_destroy(&cp->done);
    pthread_cond_destroy(&cp->wake);
    pthread_mutex_destroy(&cp->lock);
    cp->started = false;
  }
  sqlite3_close(cp->db);
  cp->db = NULL;
}

/* ------------------------------------------------------------------ writer */

static void list_append(struct write_list *to, struct write_list *from) {
  if (from->first == NULL) return;
  if (to->first == NULL)
    to->first = from->first;
  else
    to->last->next = from->first;
  to->last = from->last;
  from->first = from->last = NULL;
}

void write_list_free(struct write_list *l) {
  while (l->first != NULL) {
    struct write *next = l->first->next;
    free(l->first);
    l->first = next;
  }
  l->last = NULL;
}

static void carry_out(struct writer *w, struct write *wr) {
  sqlite3_stmt *s = w->stmt[wr->kind];
  for (int i = 0; i < 3; i++)
    if (wr->s[i] != NULL) sqlite3_bind_text(s, 1 + i, wr->s[i], -1, SQLITE_STATIC);
  for (int i = 0; i < 3; i++)
    sqlite3_bind_int64(s, 4 + i, (sqlite3_int64)wr->num[i]);
  if (wr->blob != NULL) sqlite3_bind_blob64(s, 7, wr->blob, wr->blob_len, SQLITE_STATIC);
  int rc = sqlite3_step(s);
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  if (rc != SQLITE_DONE) say(w->db, write_what[wr->kind]);
}

/* All of batch in one transaction. A write the database refuses is said and
 * skipped; a commit it refuses takes the whole batch back (also said). Either
 * way the batch is done: the loop shows its events, which is all it can do. */
static int step_once(sqlite3_stmt *s) {
  int rc = sqlite3_step(s);
  sqlite3_reset(s);
  return rc == SQLITE_DONE ? 0 : -1;
}

static void carry_out_batch(struct writer *w, struct write_list *batch) {
  bool ok = step_once(w->begin) == 0;
  if (!ok) say(w->db, "begin");
  for (struct write *wr = batch->first; wr != NULL && ok; wr = wr->next)
    carry_out(w, wr);
  if (ok && step_once(w->commit) != 0) {
    say(w->db, "commit");
    exec(w->db, "ROLLBACK");
  }
}

static void *writer_main(void *arg) {
  struct writer *w = arg;
  pthread_mutex_lock(&w->lock);
  for (;;) {
    while (w->queue.first == NULL && !w->stop)
      pthread_cond_wait(&w->wake, &w->lock);
    if (w->queue.first == NULL) break; /* stop, and nothing left */
    struct write_list batch = w->queue;
    uint64_t gen = w->handed_gen; /* the batch holds every hand-over up to it */
    w->queue.first = w->queue.last = NULL;
    w->busy = true;
    pthread_mutex_unlock(&w->lock);
    carry_out_batch(w, &batch);
    pthread_mutex_lock(&w->lock);
    list_append(&w->done, &batch);
    w->done_gen = gen;
    w->busy = false;
    if (w->queue.first == NULL) pthread_cond_broadcast(&w->idle);
    /* The loop is told with the lock released: woken, it takes the lock at
     * once (writer_take_done), and would otherwise sleep on it and wake the
     * writer again, several thread switches per commit instead of one. */
    pthread_mutex_unlock(&w->lock);
    uint64_t one = 1;
    /* Cannot fail: the loop drains the counter long before it could overflow. */
    ssize_t n = write(w->done_fd, &one, sizeof one);
    (void)n;
    pthread_mutex_lock(&w->lock);
  }
  w->busy = false;
  pthread_cond_broadcast(&w->idle);
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

int writer_start(struct writer *w, const char *path, char *err, size_t cap) {
  memset(w, 0, sizeof *w);
  w->done_fd = -1;
  if (sqlite3_open_v2(path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
      SQLITE_OK) {
    snprintf(err, cap, "cannot open %s for writing", path);
    return -1;
  }
  /* synchronous is per connection. NORMAL in WAL mode loses nothing committed
   * when the process dies; only a power cut can take the last commits back. The
   * checkpointer checkpoints, off the writer's path (but see WAL_CAP_FRAMES). */
  if (exec(w->db, "PRAGMA synchronous = NORMAL") != 0 ||
      exec(w->db, "PRAGMA wal_autocheckpoint = 0") != 0) {
    snprintf(err, cap, "cannot set up %s: %s", path, sqlite3_errmsg(w->db));
    return -1;
  }
  for (int i = 0; i < WRITE__COUNT; i++)
    if (sqlite3_prepare_v3(w->db, write_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
                           &w->stmt[i], NULL) != SQLITE_OK) {
      snprintf(err, cap, "cannot prepare a statement: %s", sqlite3_errmsg(w->db));
      return -1;
    }
  if (sqlite3_prepare_v3(w->db, "BEGIN", -1, SQLITE_PREPARE_PERSISTENT, &w->begin,
                         NULL) != SQLITE_OK ||
      sqlite3_prepare_v3(w->db, "COMMIT", -1, SQLITE_PREPARE_PERSISTENT, &w->commit,
                         NULL) != SQLITE_OK) {
    snprintf(err, cap, "cannot prepare a statement: %s", sqlite3_errmsg(w->db));
    return -1;
  }
  if (checkpointer_start(&w->cp, path) != 0) {
    snprintf(err, cap, "cannot start the checkpointer for %s", path);
    return -1;
  }
  sqlite3_wal_hook(w->db, on_wal_commit, &w->cp);
  w->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (w->done_fd < 0) {
    snprintf(err, cap, "cannot create an eventfd: %s", strerror(errno));
    return -1;
  }
  if (pthread_mutex_init(&w->lock, NULL) != 0) goto no_thread;
  if (pthread_cond_init(&w->wake, NULL) != 0) {
    pthread_mutex_destroy(&w->lock);
    goto no_thread;
  }
  if (pthread_cond_init(&w->idle, NULL) != 0) {
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    goto no_thread;
  }
  if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
    pthread_cond_destroy(&w->idle);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    goto no_thread;
  }
  w->started = true;
  return 0;
no_thread:
  snprintf(err, cap, "cannot start the store's writer");
  return -1;
}

void writer_stop(struct writer *w) {
  if (w->started) {
    pthread_mutex_lock(&w->lock);
    w->stop = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL); /* it empties the queue first */
    pthread_cond_destroy(&w->idle);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    w->started = false;
  }
  write_list_free(&w->queue);
  write_list_free(&w->done);
  checkpointer_stop(&w->cp);
  for (int i = 0; i < WRITE__COUNT; i++) {
    sqlite3_finalize(w->stmt[i]);
    w->stmt[i] = NULL;
  }
  sqlite3_finalize(w->begin);
  sqlite3_finalize(w->commit);
  w->begin = w->commit = NULL;
  sqlite3_close(w->db);
  w->db = NULL;
  if (w->done_fd >= 0) close(w->done_fd);
  w->done_fd = -1;
}

uint64_t writer_hand(struct writer *w, struct write_list *l) {
  if (!w->started) return 0;
  pthread_mutex_lock(&w->lock);
  bool handed = l->first != NULL;
  if (handed) {
    list_append(&w->queue, l);
    w->handed_gen++;
  }
  uint64_t gen = w->handed_gen;
  pthread_mutex_unlock(&w->lock);
  /* Signalled with the lock released: a writer woken while the loop still
   * held it would at once sleep again on the lock. */
  if (handed) pthread_cond_signal(&w->wake);
  return gen;
}

uint64_t writer_done_gen(struct writer *w) {
  if (!w->started) return 0;
  pthread_mutex_lock(&w->lock);
  uint64_t gen = w->done_gen;
  pthread_mutex_unlock(&w->lock);
  return gen;
}

void writer_wait(struct writer *w) {
  if (!w->started) return;
  pthread_mutex_lock(&w->lock);
  while (w->queue.first != NULL || w->busy)
    pthread_cond_wait(&w->idle, &w->lock);
  pthread_mutex_unlock(&w->lock);
}

void writer_take_done(struct writer *w, struct write_list *out) {
  out->first = out->last = NULL;
  if (!w->started) return;
  uint64_t count;
  ssize_t n = read(w->done_fd, &count, sizeof count); /* EAGAIN: nothing new */
  (void)n;
  pthread_mutex_lock(&w->lock);
  *out = w->done;
  w->done.first = w->done.last = NULL;
  pthread_mutex_unlock(&w->lock);
}
