/* The store's writer (internal to store.c): writes are queued on the loop's
 * thread and carried out by a thread of its own, on a connection of its own, so
 * that neither SQLite's work nor the disk ever holds up the loop.
 *
 *   loop:    store_*_add  -> open batch  --store_commit-->  journal, then queue
 *   writer:  queue -> one transaction (all that is queued, however many
 *            batches: a group commit) -> done list, and the eventfd is written
 *   loop:    store_reap: done list -> the owners of events, then freed
 *
 * Each hand-over is appended to the journal (store_journal.h) before it is
 * queued, and survives a kill -9 from then on. So the writer need not commit at
 * once: it lets hand-overs gather for up to COMMIT_DELAY_MS, and commits at once
 * only when asked to (a hand-over marked urgent, writer_wait) or when the
 * journal is off.
 *
 * A second thread checkpoints the WAL with a third connection, so the writer
 * seldom waits for the checkpoint's syncs either. Under steady writes that
 * checkpoint never catches up with the log's end, and SQLite starts the log
 * over only once one has: past WAL_CAP_FRAMES the writer checkpoints itself,
 * between two of its commits, and past WAL_HARD_FRAMES it also waits for the
 * checkpointer first, which bounds the log whatever the disk's speed. */
#ifndef TURND_STORE_WRITE_H
#define TURND_STORE_WRITE_H

#include "store_journal.h"
#include "write_list.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct checkpointer {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake; /* due, or stop */
  pthread_cond_t done; /* a run ended */
  sqlite3 *db;         /* the thread's own connection */
  /* The writer's thread alone reads and sets these (see on_wal_commit). */
  int commit_pages; /* WAL frames after the last commit, until wal_after_commit
                       takes them; -1: none */
  int last_pages;   /* WAL frames after the last commit taken */
  int ask_at;       /* WAL frames at which the writer asks for the next run */
  bool catching_up; /* at the cap: the writer asked for a run and waits for its end */
  /* Guarded by lock. */
  bool running; /* a run is under way */
  bool due;     /* a run is asked for */
  bool stop;    /* the store is closing */
  bool started; /* thread runs; lock and wake are set up */
};

struct writer {
  sqlite3 *db; /* the writer thread's connection; nothing else touches it */
  sqlite3_stmt *stmt[WRITE__COUNT];
  sqlite3_stmt *begin, *commit; /* prepared once: each batch runs both */
  sqlite3_stmt *applied;        /* records the batch's last hand-over */
  struct journal journal;
  struct checkpointer cp;
  int done_fd; /* eventfd: readable while writes wait in done */
  pthread_t thread;
  pthread_mutex_t lock;    /* guards what follows */
  pthread_cond_t wake;     /* queue got writes, or stop */
  pthread_cond_t idle;     /* the writer took nothing and holds nothing */
  struct write_list queue; /* handed over, not yet taken */
  struct write_list done;  /* carried out (or refused), not yet reaped */
  uint64_t handed_gen;     /* the last hand-over's number (they go on from
                              one start to the next: the journal's frames
                              carry them) */
  uint64_t done_gen;       /* the last hand-over whose writes are all done */
  uint64_t queued_at_ms;   /* CLOCK_MONOTONIC when the queue last became
                              non-empty: the commit is due COMMIT_DELAY_MS on */
  size_t queued_bytes;     /* of the queue's writes' data */
  bool urgent;             /* commit what is queued without waiting */
  bool journaled;          /* every hand-over so far is in the journal */
  bool keep_journal;       /* a batch was refused: the journal is emptied no more
                              (the writer's thread alone reads and sets it) */
  bool busy;               /* the writer holds a batch */
  bool stop;
  bool started;
};

/* Opens the writer's connection to path (whose schema is current), carries out
 * what dir's journal holds past the database's last hand-over, and starts its
 * threads. Returns 0, or -1 with the reason in err[0..cap). */
int writer_start(struct writer *w, const char *path, const char *dir, char *err,
                 size_t cap);
/* Lets the writer finish what it was handed, stops it and frees what is left
 * (owners are not called). Safe on a writer that failed to start or is zeroed. */
void writer_stop(struct writer *w);
/* Appends the list to the journal and then to the writer's queue (the list is
 * emptied); urgent: the writer commits it without waiting. Returns the number of
 * the hand-over that holds everything queued so far. */
uint64_t writer_hand(struct writer *w, struct write_list *l, bool urgent);
/* Whether every hand-over so far is in the journal (then it survives a kill -9
 * before its commit). */
bool writer_journaled(const struct writer *w);
/* The last hand-over whose writes are all done. */
uint64_t writer_done_gen(struct writer *w);
/* Blocks until everything handed over is done. */
void writer_wait(struct writer *w);
/* Takes the done list (the eventfd is drained). */
void writer_take_done(struct writer *w, struct write_list *out);

#endif
