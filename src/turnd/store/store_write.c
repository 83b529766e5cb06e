/* The store's writer thread and checkpointer (see store_write.h). */
#include "store_write.h"

#include "thread_sched.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

static const char *const write_sql[WRITE__COUNT] = {
    [WRITE_SESSION_PUT] = "INSERT INTO sessions (id, title, channel, created_ms,"
                          " updated_ms, message_count) VALUES (?1, ?2, 'web', ?4, ?5, ?6)"
                          " ON CONFLICT (id) DO UPDATE SET title = ?2, updated_ms = ?5,"
                          " message_count = ?6",
    [WRITE_MESSAGE_ADD] = "INSERT INTO messages (session, n, turn, at_ms, body, parts)"
                          " VALUES (?1, ?4, ?2, ?5, ?3, ?6)",
    [WRITE_TURN_ADD] = "INSERT INTO turns (id, session, started_ms) VALUES (?1, ?2, ?4)",
    [WRITE_EVENTS_ADD] = "INSERT INTO events (turn, first_seq, n, at_ms, lines)"
                         " VALUES (?1, ?4, ?5, ?6, ?7)",
    [WRITE_TURN_ENDED] = "UPDATE turns SET ended = 1 WHERE id = ?1",
    /* OR REPLACE: a turn that gave up on the store mid-message leaves parts
     * where the session's next message is numbered; they are replaced, or lie
     * past that message's count and are never read. */
    [WRITE_MESSAGE_PART] = "INSERT OR REPLACE INTO message_parts (session, n, part, body)"
                           " VALUES (?1, ?4, ?5, ?7)",
};
/* Every statement binds the strings as ?1..?3, the numbers as ?4..?6 and the
 * blob as ?7: one binding routine serves them all. */
static const char *const write_what[WRITE__COUNT] = {
    [WRITE_SESSION_PUT] = "session", [WRITE_MESSAGE_ADD] = "message",
    [WRITE_TURN_ADD] = "turn",       [WRITE_EVENTS_ADD] = "events",
    [WRITE_TURN_ENDED] = "turn end", [WRITE_MESSAGE_PART] = "message part",
};

/* How long hand-overs gather before the writer commits them, when the journal
 * holds them meanwhile: the longer, the fewer commits, and a commit costs about
 * the same for one turn's delta as for a hundred turns' (each turn's events sit
 * on a page of their own, written whole). */
#define COMMIT_DELAY_MS 50
/* ... unless this much is queued: then it commits at once. */
#define COMMIT_BYTES (8u << 20)

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
  background_thread_begin("ckpt");
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

/* sqlite3_wal_hook: runs on the writer's thread inside each commit, with the
 * frames now in the log (fewer than before once the log started over). What
 * they call for is done by wal_after_commit once the loop has been told of
 * the commit: a checkpoint of the writer's own would hold that news up. */
static int on_wal_commit(void *arg, sqlite3 *db, const char *name, int pages) {
  (void)db;
  (void)name;
  struct checkpointer *cp = arg;
  cp->commit_pages = pages;
  return SQLITE_OK;
}

/* After a commit whose log had `pages` frames.
 *
 * Below WAL_CAP_FRAMES the checkpointer is asked for a run once per
 * CHECKPOINT_PAGES of growth (each run syncs the disk twice). At the cap the
 * writer must checkpoint itself, and how long it pauses is what that checkpoint
 * has left to copy and sync; so first the checkpointer, once idle, is asked for
 * a run (catching_up), and once that run is over the writer copies only what
 * was committed during it. Only the writer asks, so the checkpointer is idle
 * again only once the run it asked for is over. If a reader still held frames,
 * the log did not start over and the next commit asks again. */
static void wal_after_commit(struct checkpointer *cp, sqlite3 *db, int pages) {
  if (pages < cp->last_pages) { /* the log started over */
    cp->ask_at = CHECKPOINT_PAGES;
    cp->catching_up = false;
  }
  cp->last_pages = pages;
  if (pages >= WAL_CAP_FRAMES) {
    if (!checkpointer_idle(cp, pages >= WAL_HARD_FRAMES))
      return; /* the next commit looks again */
    if (!cp->catching_up && pages < WAL_HARD_FRAMES) {
      cp->catching_up = true;
      checkpointer_ask(cp);
    } else {
      cp->catching_up = false;
      sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    }
    return;
  }
  if (pages < cp->ask_at) return;
  cp->ask_at = pages + CHECKPOINT_PAGES;
  checkpointer_ask(cp);
}

/* What the last commit's log calls for, if it is not done yet. */
static void wal_settle(struct writer *w) {
  int pages = w->cp.commit_pages;
  if (pages < 0) return;
  w->cp.commit_pages = -1;
  wal_after_commit(&w->cp, w->db, pages);
}

static int checkpointer_start(struct checkpointer *cp, const char *path) {
  /* A connection that has not read yet does not know the database is in WAL
   * mode, and its checkpoints do nothing: it reads once here. */
  cp->ask_at = CHECKPOINT_PAGES;
  cp->commit_pages = -1;
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

static size_t write_bytes(const struct write *wr) {
  size_t n = wr->blob_len;
  for (int i = 0; i < 3; i++)
    n += wr->slen[i];
  return n;
}

static uint64_t monotonic_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
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

static int step_once(sqlite3_stmt *s) {
  int rc = sqlite3_step(s);
  sqlite3_reset(s);
  return rc == SQLITE_DONE ? 0 : -1;
}

/* All of batch in one transaction. A write the database refuses is said and
 * skipped; a commit it refuses takes the whole batch back (also said). Either
 * way the batch is done: the loop shows its events, which is all it can do.
 * The batch holds every hand-over up to gen: the database records gen in the
 * same transaction, so that at the next start the journal's frames after it,
 * and only those, are carried out again. */
static int carry_out_batch(struct writer *w, struct write_list *batch, uint64_t gen) {
  bool ok = step_once(w->begin) == 0;
  if (!ok) say(w->db, "begin");
  for (struct write *wr = batch->first; wr != NULL && ok; wr = wr->next)
    carry_out(w, wr);
  if (ok) {
    sqlite3_bind_int64(w->applied, 1, (sqlite3_int64)gen);
    if (step_once(w->applied) != 0) {
      /* Committed without its number, the batch would be carried out again
       * after a crash, an older session row over a newer one. */
      say(w->db, "hand-over number");
      ok = false;
    }
  }
  if (ok && step_once(w->commit) != 0) {
    say(w->db, "commit");
    ok = false;
  }
  if (!ok) exec(w->db, "ROLLBACK");
  return ok ? 0 : -1;
}

/* Waits, with w->lock held, until the queue's commit is due: at once when it is
 * urgent, when the store stops, when the journal does not hold everything or
 * when much is queued; else COMMIT_DELAY_MS after the queue was last empty. */
static void await_due(struct writer *w) {
  for (;;) {
    if (w->urgent || w->stop || !w->journaled || w->queued_bytes >= COMMIT_BYTES) return;
    uint64_t due = w->queued_at_ms + COMMIT_DELAY_MS, now = monotonic_ms();
    if (now >= due) return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + (due - now) * 1000000;
    ts.tv_sec += (time_t)(ns / 1000000000);
    ts.tv_nsec = (long)(ns % 1000000000);
    pthread_cond_timedwait(&w->wake, &w->lock, &ts);
  }
}

/* A writer with nothing to do for this long gives back its page cache. */
#define IDLE_RELEASE_MS 2000

static void *writer_main(void *arg) {
  struct writer *w = arg;
  background_thread_begin("writer");
  pthread_mutex_lock(&w->lock);
  bool cached = false; /* the connection's page cache holds pages of a batch */
  for (;;) {
    while (w->queue.first == NULL && !w->stop) {
      if (!cached) {
        pthread_cond_wait(&w->wake, &w->lock);
        continue;
      }
      /* Quiet for IDLE_RELEASE_MS: the cache (up to 2 MiB, filled by the
       * last batches, of big turns say) goes back, as the rest of turnd's
       * memory does once turns are released. It costs the next batch some
       * reads from the kernel's page cache. */
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      ts.tv_sec += IDLE_RELEASE_MS / 1000;
      if (pthread_cond_timedwait(&w->wake, &w->lock, &ts) != ETIMEDOUT ||
          w->queue.first != NULL || w->stop)
        continue;
      cached = false;
      pthread_mutex_unlock(&w->lock); /* the connection is the thread's own */
      sqlite3_db_release_memory(w->db);
#ifdef __GLIBC__
      malloc_trim(0); /* what it freed goes back to the system too */
#endif
      pthread_mutex_lock(&w->lock);
    }
    cached = true;
    if (w->queue.first == NULL) break; /* stop, and nothing left */
    await_due(w);
    struct write_list batch = w->queue;
    uint64_t gen = w->handed_gen; /* the batch holds every hand-over up to it */
    w->queue.first = w->queue.last = NULL;
    w->queued_bytes = 0;
    w->urgent = false;
    w->busy = true;
    pthread_mutex_unlock(&w->lock);
    /* Refused or not, the batch is done for the loop (its events are shown).
     * A refused one stays in the journal, and so does all that follows it: a
     * file emptied past it would leave a gap that the next start's replay
     * stops at, losing the later frames readers were shown. The next start
     * carries it out again. */
    if (carry_out_batch(w, &batch, gen) != 0 && !w->keep_journal) {
      w->keep_journal = true;
      fprintf(stderr, "turnd: store: a commit failed; the journal keeps everything from"
                      " now on, for the next start to carry out again\n");
    }
    if (!w->keep_journal) journal_release(&w->journal, gen);
    pthread_mutex_lock(&w->lock);
    write_list_append(&w->done, &batch);
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
    wal_settle(w);
    pthread_mutex_lock(&w->lock);
  }
  w->busy = false;
  pthread_cond_broadcast(&w->idle);
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

/* The last hand-over the database has carried out. */
static int applied_gen(sqlite3 *db, uint64_t *gen) {
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(db, "SELECT gen FROM journal", -1, &s, NULL) != SQLITE_OK)
    return -1;
  int rc = sqlite3_step(s) == SQLITE_ROW ? 0 : -1;
  if (rc == 0) *gen = (uint64_t)sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  return rc;
}

struct replay {
  struct write_list all;
  uint64_t gen;
};

static int replay_frame(void *ctx, uint64_t gen, struct write_list *l) {
  struct replay *rp = ctx;
  write_list_append(&rp->all, l);
  rp->gen = gen;
  return 0;
}

/* What the journal holds past the database's last hand-over is carried out in
 * one transaction; only then are the journal's files emptied. */
static int recover(struct writer *w, const char *dir, char *err, size_t cap) {
  struct replay rp = {{NULL, NULL}, 0};
  if (applied_gen(w->db, &rp.gen) != 0) {
    snprintf(err, cap, "cannot read the last hand-over's number: %s",
             sqlite3_errmsg(w->db));
    return -1;
  }
  uint64_t before = rp.gen;
  int rc = journal_replay(dir, rp.gen, replay_frame, &rp, err, cap);
  if (rc == 0 && rp.gen > before && carry_out_batch(w, &rp.all, rp.gen) != 0) {
    snprintf(err, cap, "cannot carry out the journal: %s", sqlite3_errmsg(w->db));
    rc = -1;
  }
  write_list_free(&rp.all);
  /* The parts of messages that were never completed (their turns were cut
   * off: the turns' events are what is rebuilt from) or that a later message
   * replaced. */
  if (rc == 0 &&
      exec(w->db, "DELETE FROM message_parts WHERE NOT EXISTS (SELECT 1"
                  " FROM messages m WHERE m.session = message_parts.session"
                  " AND m.n = message_parts.n AND message_parts.part < m.parts)") != 0) {
    snprintf(err, cap, "cannot drop unfinished messages: %s", sqlite3_errmsg(w->db));
    rc = -1;
  }
  if (rc != 0) return -1;
  w->handed_gen = w->done_gen = rp.gen;
  return journal_open(&w->journal, dir, err, cap);
}

int writer_start(struct writer *w, const char *path, const char *dir, char *err,
                 size_t cap) {
  memset(w, 0, sizeof *w);
  w->done_fd = -1;
  w->journal.fd[0] = w->journal.fd[1] = -1;
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
                         NULL) != SQLITE_OK ||
      sqlite3_prepare_v3(w->db, "UPDATE journal SET gen = ?1", -1,
                         SQLITE_PREPARE_PERSISTENT, &w->applied, NULL) != SQLITE_OK) {
    snprintf(err, cap, "cannot prepare a statement: %s", sqlite3_errmsg(w->db));
    return -1;
  }
  if (recover(w, dir, err, cap) != 0) return -1;
  w->journaled = true;
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
  /* The wait for a commit's due time is on the monotonic clock: a wall clock
   * set back would hold commits back as long. */
  pthread_condattr_t attr;
  if (pthread_condattr_init(&attr) != 0) goto no_thread;
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  if (pthread_mutex_init(&w->lock, NULL) != 0) {
    pthread_condattr_destroy(&attr);
    goto no_thread;
  }
  if (pthread_cond_init(&w->wake, &attr) != 0) {
    pthread_condattr_destroy(&attr);
    pthread_mutex_destroy(&w->lock);
    goto no_thread;
  }
  pthread_condattr_destroy(&attr);
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
  sqlite3_finalize(w->applied);
  w->begin = w->commit = w->applied = NULL;
  sqlite3_close(w->db);
  w->db = NULL;
  journal_close(&w->journal);
  if (w->done_fd >= 0) close(w->done_fd);
  w->done_fd = -1;
}

uint64_t writer_hand(struct writer *w, struct write_list *l, bool urgent) {
  if (!w->started) return 0;
  bool handed = l->first != NULL;
  size_t bytes = 0;
  /* Journaled before the writer can see it, so that no commit comes first; the
   * hand-over's number is ours to give (only this thread hands over). */
  bool journaled = true;
  if (handed) {
    journaled = journal_append(&w->journal, w->handed_gen + 1, l) == 0;
    for (const struct write *wr = l->first; wr != NULL; wr = wr->next)
      bytes += write_bytes(wr);
  }
  pthread_mutex_lock(&w->lock);
  /* The writer waits on wake for a queue to become non-empty, and then for its
   * commit to fall due: it is woken only when either changes, not for every
   * hand-over that comes while it waits. */
  bool wake = false;
  if (handed) {
    if (w->queue.first == NULL) {
      w->queued_at_ms = monotonic_ms();
      wake = true;
    }
    write_list_append(&w->queue, l);
    w->handed_gen++;
    if (w->queued_bytes < COMMIT_BYTES && w->queued_bytes + bytes >= COMMIT_BYTES)
      wake = true;
    w->queued_bytes += bytes;
    if (!journaled && w->journaled) {
      w->journaled = false;
      wake = true;
    }
  }
  /* Urgent only while something waits: what the writer holds is committed
   * without delay already. */
  if (urgent && w->queue.first != NULL && !w->urgent) {
    w->urgent = true;
    wake = true;
  }
  uint64_t gen = w->handed_gen;
  pthread_mutex_unlock(&w->lock);
  /* Signalled with the lock released: a writer woken while the loop still
   * held it would at once sleep again on the lock. */
  if (wake) pthread_cond_signal(&w->wake);
  return gen;
}

bool writer_journaled(const struct writer *w) {
  /* Only the loop's thread sets it false (in writer_hand), and it is the one
   * asking. */
  return w->journaled;
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
  if (w->queue.first != NULL) {
    w->urgent = true;
    pthread_cond_signal(&w->wake);
  }
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
