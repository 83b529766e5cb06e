/* The store's journal (internal to the writer): every hand-over of writes is
 * appended to DIR/turnd.journal-0 or -1 with one write(2) on the loop's thread,
 * before the writer commits it to SQLite. Once that write has returned the
 * writes are in the kernel's page cache and survive a kill -9, as a WAL commit
 * at synchronous=NORMAL does, so readers may be shown events without waiting
 * for SQLite, and the writer may gather many hand-overs into one commit.
 *
 * Each hand-over is one frame, numbered by its hand-over number (gen), which
 * the database keeps, in the transaction that carried it out, as the last one
 * applied. At start-up the frames past it are carried out again, in order; a
 * frame cut short by a crash, or one whose hash does not match, ends the file.
 * Two files take turns: once the one in use passes JOURNAL_SWITCH_BYTES and the
 * other is empty, appends move to the other, and the writer empties a file once
 * everything in it is committed. */
#ifndef TURND_STORE_JOURNAL_H
#define TURND_STORE_JOURNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct write_list;

struct journal {
  char path[2][4200];
  int fd[2];            /* open for appending; -1 when closed */
  int cur;              /* the file appended to (the loop's thread sets it) */
  bool on;              /* appends work: false after a failed one, or before open */
  pthread_mutex_t lock; /* guards size and last_gen between loop and writer */
  size_t size[2];       /* bytes in each file */
  uint64_t last_gen[2]; /* the last hand-over appended to each (0: none) */
  bool emptying;        /* the writer is emptying the file not in use */
  bool lock_made;
};

/* Called for each frame to carry out again at start-up, in order: l holds its
 * writes (owners NULL); the callee takes them. Returns 0, or -1 to stop. */
typedef int journal_replay_cb(void *ctx, uint64_t gen, struct write_list *l);

/* Reads DIR's journal files and calls cb for every whole frame after
 * applied_gen, in order, up to the first gap. Returns 0, or -1 with the reason
 * in err[0..cap) (cb's -1 included). The files are left as they are. */
int journal_replay(const char *dir, uint64_t applied_gen, journal_replay_cb *cb,
                   void *ctx, char *err, size_t cap);
/* The same over files already read: data[i][0..len[i]) for each of n_files
 * (NULL with 0: none). cb's lists are the callee's; every other byte is
 * borrowed for the call. A frame whose body does not read as writes is -1. */
int journal_parse(const unsigned char *const data[], const size_t len[], size_t n_files,
                  uint64_t applied_gen, journal_replay_cb *cb, void *ctx, char *err,
                  size_t cap);
/* Empties DIR's journal files (everything in them must be committed) and opens
 * the first for appending. Returns 0, or -1 with the reason in err[0..cap). */
int journal_open(struct journal *j, const char *dir, char *err, size_t cap);
/* Closes the files (their frames stay for the next start). Safe on a zeroed or
 * half-opened journal. */
void journal_close(struct journal *j);
/* Appends hand-over gen (the loop's thread only). Returns 0 once the frame is
 * in the file; -1 when it could not be written (said on stderr once): the
 * journal is then off for good and appends do nothing. */
int journal_append(struct journal *j, uint64_t gen, const struct write_list *l);
/* Everything up to committed_gen is in the database: the file not in use is
 * emptied if it holds nothing later (the writer's thread). */
void journal_release(struct journal *j, uint64_t committed_gen);

#endif
