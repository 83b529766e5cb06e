/* DIR/turnd.db's write-ahead log (src/turnd/store/store.c, store_write.c): under
 * steady writes it stays bounded, its frames reach the database file while the
 * store is open, and what was written reads back whole, through the loop's
 * connection or a reader of its own (the kind the request builder's thread
 * uses; here on the test's thread). Each test has a fresh folder. */
#define _XOPEN_SOURCE 700 /* mkdtemp */

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "turnd/store/store.h"

#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* One chunk: 40 KiB of lines, about ten pages of the database. */
#define CHUNK_BYTES (40 * 1024)
/* Chunks the first test writes: about 120 MiB (some 130 MiB of log frames),
 * well past the log's hard bound, so a log that is never started over shows. */
#define CHUNKS 3000
/* The log's hard bound (WAL_HARD_FRAMES pages of 4 KiB and their headers:
 * about 64 MiB) and a commit's worth. When the disk keeps up the log stays
 * near 32 MiB (WAL_CAP_FRAMES), but how near depends on the disk's speed. */
#define WAL_BOUND_BYTES (66L * 1024 * 1024)

struct fixture {
  char dir[64];
  struct store *st;
  char *lines;
};

static int setup(void **state) {
  struct fixture *fx = calloc(1, sizeof *fx);
  if (fx == NULL) return -1;
  snprintf(fx->dir, sizeof fx->dir, "/tmp/turnd-store-XXXXXX");
  if (mkdtemp(fx->dir) == NULL) return -1;
  char err[256];
  fx->st = store_open(fx->dir, err, sizeof err);
  fx->lines = malloc(CHUNK_BYTES);
  *state = fx;
  if (fx->st == NULL || fx->lines == NULL) return -1;
  /* 40 one-line events of 1 KiB: enough to fill pages, checkable on read. */
  for (size_t i = 0; i < CHUNK_BYTES; i++)
    fx->lines[i] = (i + 1) % 1024 == 0 ? '\n' : (char)('a' + i % 26);
  return store_turn_add(fx->st, "t-1", "s-1", 1) == 0 ? 0 : -1;
}

static int teardown(void **state) {
  struct fixture *fx = *state;
  store_close(fx->st);
  static const char *const files[] = {"turnd.db",   "turnd.db-wal",    "turnd.db-shm",
                                      "turnd.lock", "turnd.journal-0", "turnd.journal-1"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", fx->dir, files[i]);
    remove(path);
  }
  rmdir(fx->dir);
  free(fx->lines);
  free(fx);
  return 0;
}

/* The store's files are the owner's alone, whatever the umask and the folder:
 * 0600, its log, shared memory and journal too. */
static void the_files_are_the_owners_alone(void **state) {
  struct fixture *fx = *state;
  static const char *const files[] = {"turnd.db", "turnd.db-wal", "turnd.db-shm",
                                      "turnd.journal-0", "turnd.journal-1"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", fx->dir, files[i]);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    if ((sb.st_mode & 077) != 0) fail_msg("%s has mode %o", files[i], sb.st_mode & 0777);
  }
}

/* Files an older turnd left readable by others (made with the umask's 0644)
 * are the owner's alone once the store opens them again. */
static void older_files_are_made_the_owners_alone(void **state) {
  struct fixture *fx = *state;
  static const char *const files[] = {"turnd.db", "turnd.db-wal", "turnd.db-shm"};
  char path[128];
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", fx->dir, files[i]);
    assert_int_equal(chmod(path, 0644), 0);
  }
  store_close(fx->st);
  char err[256];
  fx->st = store_open(fx->dir, err, sizeof err);
  assert_non_null(fx->st);
  the_files_are_the_owners_alone(state);
}

/* A link in the store's place is never followed to change a file's mode: it
 * could name anyone's file, and turnd may run as root. */
static void links_are_not_followed_to_change_modes(void **state) {
  struct fixture *fx = *state;
  store_close(fx->st);
  char victim[128], link[128];
  snprintf(victim, sizeof victim, "%s/victim", fx->dir);
  snprintf(link, sizeof link, "%s/turnd.db-shm", fx->dir);
  FILE *f = fopen(victim, "w");
  assert_non_null(f);
  assert_int_equal(fclose(f), 0);
  assert_int_equal(chmod(victim, 0644), 0);
  remove(link);
  assert_int_equal(symlink(victim, link), 0);
  char err[256];
  fx->st = store_open(fx->dir, err, sizeof err); /* may refuse the link: no matter */
  struct stat sb;
  assert_int_equal(stat(victim, &sb), 0);
  remove(victim);
  assert_int_equal(sb.st_mode & 0777, 0644);
}

static long file_size(const struct fixture *fx, const char *name) {
  char path[128];
  snprintf(path, sizeof path, "%s/%s", fx->dir, name);
  struct stat sb;
  return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

/* Chunk i holds events 40 i .. 40 i + 39; each is committed alone, as a turn's
 * chunks are when its deltas come one per loop pass. */
static void write_chunks(struct fixture *fx, size_t from, size_t to) {
  for (size_t i = from; i < to; i++) {
    assert_int_equal(
        store_events_add(fx->st, "t-1", 40 * i, 40, 1, fx->lines, CHUNK_BYTES, NULL), 0);
    store_sync(fx->st);
  }
  store_reap(fx->st, NULL, NULL);
}

struct readback {
  const struct fixture *fx;
  uint64_t next_seq;
  size_t chunks;
};

static int check_chunk(void *ctx, const char *turn, uint64_t first_seq, uint64_t n,
                       uint64_t at_ms, const char *lines, size_t len) {
  (void)at_ms;
  struct readback *rb = ctx;
  assert_string_equal(turn, "t-1");
  assert_int_equal(first_seq, rb->next_seq);
  assert_int_equal(n, 40);
  assert_int_equal(len, CHUNK_BYTES);
  assert_memory_equal(lines, rb->fx->lines, CHUNK_BYTES);
  rb->next_seq += n;
  rb->chunks++;
  return 0;
}

/* A log that only grows would reach CHUNKS * CHUNK_BYTES: under writes that
 * never pause it is checkpointed to its end and started over. */
static void steady_writes_keep_the_log_bounded(void **state) {
  struct fixture *fx = *state;
  write_chunks(fx, 0, CHUNKS);
  long wal = file_size(fx, "turnd.db-wal");
  assert_true(wal > 0);
  assert_true(wal < WAL_BOUND_BYTES);
  struct readback rb = {.fx = fx};
  assert_int_equal(store_turn_events_each(fx->st, "t-1", 0, check_chunk, &rb), 0);
  assert_int_equal(rb.chunks, CHUNKS);
}

/* The checkpointer copies the log into the database while the store is open;
 * the writer's own checkpoint only starts past about 32 MiB of log, which 20
 * MiB does not reach. Its thread is waited for, one tenth of a second at a time. */
static void the_checkpointer_fills_the_database(void **state) {
  struct fixture *fx = *state;
  write_chunks(fx, 0, 500);
  long want = 8L * 1024 * 1024; /* the 2000 pages that ask for a checkpoint */
  for (int i = 0; i < 600 && file_size(fx, "turnd.db") < want; i++)
    nanosleep(&(struct timespec){.tv_nsec = 100 * 1000 * 1000}, NULL);
  assert_true(file_size(fx, "turnd.db") >= want);
  struct readback rb = {.fx = fx};
  assert_int_equal(store_turn_events_each(fx->st, "t-1", 0, check_chunk, &rb), 0);
  assert_int_equal(rb.chunks, 500);
}

/* The session's messages as a reader read them: "n:json;" each. */
static int collect_message(void *ctx, uint64_t n, const char *turn, uint64_t at_ms,
                           const char *json) {
  (void)turn;
  (void)at_ms;
  char *out = ctx;
  size_t len = strlen(out);
  snprintf(out + len, 256 - len, "%llu:%s;", (unsigned long long)n, json);
  return 0;
}

/* A chunk as a reader read it: "turn@first_seq+n;". */
static int collect_chunk(void *ctx, const char *turn, uint64_t first_seq, uint64_t n,
                         uint64_t at_ms, const char *lines, size_t len) {
  (void)at_ms;
  (void)lines;
  (void)len;
  char *out = ctx;
  size_t used = strlen(out);
  snprintf(out + used, 256 - used, "%s@%llu+%llu;", turn, (unsigned long long)first_seq,
           (unsigned long long)n);
  return 0;
}

/* A reader of its own (the request builder's) sees what the writer committed,
 * in order, only that session's, and what is committed after it opened; its
 * history gives the session's chunks, then its messages. */
static void a_reader_sees_committed_messages(void **state) {
  struct fixture *fx = *state;
  assert_int_equal(store_message_add(fx->st, "s-1", 0, "t-1", 1, "{\"a\":1}", 0), 0);
  assert_int_equal(store_message_add(fx->st, "s-2", 0, "t-2", 1, "{\"other\":1}", 0), 0);
  assert_int_equal(store_message_add(fx->st, "s-1", 1, "t-1", 2, "{\"b\":2}", 0), 0);
  store_sync(fx->st);
  struct store_reader *r = store_reader_open(fx->st);
  assert_non_null(r);
  char seen[256] = "";
  assert_int_equal(store_reader_messages_each(r, "s-1", collect_message, seen), 0);
  assert_string_equal(seen, "0:{\"a\":1};1:{\"b\":2};");
  assert_int_equal(store_message_add(fx->st, "s-1", 2, "t-3", 3, "{\"c\":3}", 0), 0);
  store_sync(fx->st);
  seen[0] = '\0';
  assert_int_equal(store_reader_messages_each(r, "s-1", collect_message, seen), 0);
  assert_string_equal(seen, "0:{\"a\":1};1:{\"b\":2};2:{\"c\":3};");
  seen[0] = '\0';
  assert_int_equal(store_reader_messages_each(r, "s-3", collect_message, seen), 0);
  assert_string_equal(seen, "");
  /* the history: the session's event chunks, then its messages */
  static const char line[] = "{\"v\":1}\n";
  assert_int_equal(store_events_add(fx->st, "t-1", 0, 1, 4, line, sizeof line - 1, NULL),
                   0);
  store_sync(fx->st);
  seen[0] = '\0';
  assert_int_equal(
      store_reader_history_each(r, "s-1", collect_chunk, collect_message, seen), 0);
  assert_string_equal(seen, "t-1@0+1;0:{\"a\":1};1:{\"b\":2};2:{\"c\":3};");
  store_reader_close(r);
}

/* An unended turn as store_unended_each gave it: "turn/session next=N m=M last=L;". */
static int collect_unended(void *ctx, const char *turn, const char *session,
                           uint64_t next_seq, uint64_t messages, bool latest) {
  char *out = ctx;
  size_t used = strlen(out);
  snprintf(out + used, 256 - used, "%s/%s next=%llu m=%llu last=%d;", turn, session,
           (unsigned long long)next_seq, (unsigned long long)messages, latest);
  return 0;
}

/* Turns left unended (a crash, or a turn that gave up on the store) come back
 * at the next start with what is needed to end them: the next seq, how many of
 * the session's messages are theirs, and whether those are the session's last.
 * They are not once a later turn of the session stored a message; a later turn
 * that stored none (refused as busy) or another session's turn does not count. */
static void unended_turns_know_whether_their_messages_are_last(void **state) {
  struct fixture *fx = *state; /* t-1 in s-1, started */
  static const char line[] = "{\"v\":1}\n";
  assert_int_equal(store_events_add(fx->st, "t-1", 0, 1, 1, line, sizeof line - 1, NULL),
                   0);
  assert_int_equal(store_message_add(fx->st, "s-1", 0, "t-1", 1, "{\"u\":1}", 0), 0);
  assert_int_equal(store_message_add(fx->st, "s-1", 1, "t-1", 2, "{\"a\":1}", 0), 0);
  assert_int_equal(store_turn_add(fx->st, "t-2", "s-1", 3), 0);
  assert_int_equal(store_message_add(fx->st, "s-1", 2, "t-2", 3, "{\"u\":2}", 0), 0);
  assert_int_equal(store_turn_ended(fx->st, "t-2"), 0);
  assert_int_equal(store_turn_add(fx->st, "t-3", "s-2", 4), 0);
  assert_int_equal(store_message_add(fx->st, "s-2", 0, "t-3", 4, "{\"u\":3}", 0), 0);
  assert_int_equal(store_turn_add(fx->st, "t-4", "s-2", 5), 0); /* refused as busy */
  assert_int_equal(store_turn_ended(fx->st, "t-4"), 0);
  assert_int_equal(store_turn_add(fx->st, "t-5", "s-1", 6), 0); /* ended, stored none */
  assert_int_equal(store_turn_ended(fx->st, "t-5"), 0);
  store_sync(fx->st);
  char seen[256] = "";
  assert_int_equal(store_unended_each(fx->st, collect_unended, seen), 0);
  assert_non_null(strstr(seen, "t-1/s-1 next=1 m=2 last=0;"));
  assert_non_null(strstr(seen, "t-3/s-2 next=0 m=1 last=1;"));
  assert_int_equal(strlen(seen),
                   strlen("t-1/s-1 next=1 m=2 last=0;t-3/s-2 next=0 m=1 last=1;"));
}

/* Runs write(st) in a child process on the fixture's folder and kills the child
 * as kill -9 would, right after: its writer gets no chance to commit what the
 * last store_commit handed over (it lets hand-overs gather first). The
 * fixture's store is closed first and opened again after. */
static void crash_after(struct fixture *fx, void (*write)(struct store *st)) {
  store_close(fx->st);
  fx->st = NULL;
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    char err[256];
    struct store *st = store_open(fx->dir, err, sizeof err);
    if (st == NULL) _exit(2);
    write(st);
    raise(SIGKILL);
    _exit(3);
  }
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

static void reopen(struct fixture *fx) {
  char err[256];
  fx->st = store_open(fx->dir, err, sizeof err);
  if (fx->st == NULL) fail_msg("store_open: %s", err);
}

static void one_hand_over(struct store *st) {
  store_turn_add(st, "t-9", "s-9", 1);
  store_events_add(st, "t-9", 0, 2, 1, "a\nb\n", 4, NULL);
  store_commit(st, false);
}

/* What was handed over is in the journal before it is committed, and a crash
 * in between loses none of it: the next start carries it out (the turn and
 * its events), then empties the journal. */
static void a_crash_before_the_commit_loses_nothing_handed_over(void **state) {
  struct fixture *fx = *state;
  crash_after(fx, one_hand_over);
  assert_true(file_size(fx, "turnd.journal-0") > 0);
  reopen(fx);
  char seen[256] = "";
  assert_int_equal(store_turn_events_each(fx->st, "t-9", 0, collect_chunk, seen), 0);
  assert_string_equal(seen, "t-9@0+2;");
  assert_int_equal(store_turn_exists(fx->st, "t-9"), 1);
  assert_int_equal(file_size(fx, "turnd.journal-0"), 0);
}

static void two_hand_overs(struct store *st) {
  store_turn_add(st, "t-9", "s-9", 1);
  store_events_add(st, "t-9", 0, 1, 1, "a\n", 2, NULL);
  store_commit(st, false);
  store_events_add(st, "t-9", 1, 1, 1, "b\n", 2, NULL);
  store_commit(st, false);
}

/* A frame the crash cut short (its write never returned, so nobody was shown
 * it) is dropped; the whole frames before it are carried out. */
static void a_frame_cut_short_is_dropped(void **state) {
  struct fixture *fx = *state;
  crash_after(fx, two_hand_overs);
  char path[128];
  snprintf(path, sizeof path, "%s/turnd.journal-0", fx->dir);
  long size = file_size(fx, "turnd.journal-0");
  assert_true(size > 1);
  assert_int_equal(truncate(path, size - 1), 0);
  reopen(fx);
  char seen[256] = "";
  assert_int_equal(store_turn_events_each(fx->st, "t-9", 0, collect_chunk, seen), 0);
  assert_string_equal(seen, "t-9@0+1;");
}

static void committed_then_more(struct store *st) {
  two_hand_overs(st);
  store_sync(st); /* both committed; the journal still holds them */
  store_events_add(st, "t-9", 2, 1, 1, "c\n", 2, NULL);
  store_commit(st, false);
}

static void one_more(struct store *st) {
  store_events_add(st, "t-9", 3, 1, 1, "d\n", 2, NULL);
  store_commit(st, false);
}

/* Opens the fixture's store again with stderr in a file, and returns what the
 * store said there (the first 255 bytes). */
static void reopen_quietly(struct fixture *fx, char said[256]) {
  char path[128];
  snprintf(path, sizeof path, "%s/said", fx->dir);
  fflush(stderr);
  int saved = dup(2);
  FILE *f = fopen(path, "w+");
  assert_non_null(f);
  dup2(fileno(f), 2);
  reopen(fx);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(f);
  size_t n = fread(said, 1, 255, f);
  said[n] = '\0';
  fclose(f);
  remove(path);
}

/* Frames the database committed before the crash are not carried out again
 * (each would be refused as a repeated row, and said); the later one is. The
 * numbers go on from one start to the next: a frame of the next run is not
 * taken for one already committed. */
static void committed_frames_are_not_carried_out_again(void **state) {
  struct fixture *fx = *state;
  crash_after(fx, committed_then_more);
  char said[256];
  reopen_quietly(fx, said);
  assert_string_equal(said, "");
  char seen[256] = "";
  assert_int_equal(store_turn_events_each(fx->st, "t-9", 0, collect_chunk, seen), 0);
  assert_string_equal(seen, "t-9@0+1;t-9@1+1;t-9@2+1;");
  crash_after(fx, one_more);
  reopen_quietly(fx, said);
  assert_string_equal(said, "");
  seen[0] = '\0';
  assert_int_equal(store_turn_events_each(fx->st, "t-9", 0, collect_chunk, seen), 0);
  assert_string_equal(seen, "t-9@0+1;t-9@1+1;t-9@2+1;t-9@3+1;");
}

/* A long message goes to the store in parts as it grows, over several
 * hand-overs, and its row comes last with the rest: a reader gets it whole,
 * in its place among messages stored in one piece, in the history too. */
static void a_message_stored_in_parts_reads_whole(void **state) {
  struct fixture *fx = *state;
  assert_int_equal(store_message_add(fx->st, "s-1", 0, "t-1", 1, "{\"a\":1}", 0), 0);
  assert_int_equal(store_message_part(fx->st, "s-1", 1, 0, "{\"b\":\"x", 7), 0);
  store_commit(fx->st, false);
  assert_int_equal(store_message_part(fx->st, "s-1", 1, 1, "yz", 2), 0);
  store_commit(fx->st, false);
  assert_int_equal(store_message_add(fx->st, "s-1", 1, "t-1", 2, "w\"}", 2), 0);
  assert_int_equal(store_message_add(fx->st, "s-1", 2, "t-1", 3, "{\"c\":3}", 0), 0);
  store_sync(fx->st);
  struct store_reader *r = store_reader_open(fx->st);
  assert_non_null(r);
  char seen[256] = "";
  assert_int_equal(store_reader_messages_each(r, "s-1", collect_message, seen), 0);
  assert_string_equal(seen, "0:{\"a\":1};1:{\"b\":\"xyzw\"};2:{\"c\":3};");
  seen[0] = '\0';
  assert_int_equal(
      store_reader_history_each(r, "s-1", collect_chunk, collect_message, seen), 0);
  assert_string_equal(seen, "0:{\"a\":1};1:{\"b\":\"xyzw\"};2:{\"c\":3};");
  store_reader_close(r);
}

/* A message whose part the database refused (here: never written) is skipped,
 * as a refused message is, and the messages after it still read. */
static void a_message_missing_a_part_is_skipped(void **state) {
  struct fixture *fx = *state;
  assert_int_equal(store_message_part(fx->st, "s-1", 0, 0, "{\"a\":", 5), 0);
  assert_int_equal(store_message_add(fx->st, "s-1", 0, "t-1", 1, "1}", 2), 0);
  assert_int_equal(store_message_add(fx->st, "s-1", 1, "t-1", 2, "{\"b\":2}", 0), 0);
  store_sync(fx->st);
  struct store_reader *r = store_reader_open(fx->st);
  assert_non_null(r);
  char seen[256] = "";
  assert_int_equal(store_reader_messages_each(r, "s-1", collect_message, seen), 0);
  assert_string_equal(seen, "1:{\"b\":2};");
  store_reader_close(r);
}

static void parts_of_an_unfinished_message(struct store *st) {
  store_message_part(st, "s-7", 0, 0, "{\"cut\":\"", 8);
  store_message_part(st, "s-7", 0, 1, "off", 3);
  store_sync(st); /* committed: only the start can drop them */
  store_message_part(st, "s-7", 0, 2, "more", 4);
  store_commit(st, false); /* journaled: the start carries it out first */
}

/* Rows of message_parts in the fixture's database. */
static int stored_parts(const struct fixture *fx) {
  char path[128];
  snprintf(path, sizeof path, "%s/turnd.db", fx->dir);
  sqlite3 *db;
  assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  sqlite3_stmt *s;
  assert_int_equal(
      sqlite3_prepare_v2(db, "SELECT count(*) FROM message_parts", -1, &s, NULL),
      SQLITE_OK);
  assert_int_equal(sqlite3_step(s), SQLITE_ROW);
  int n = sqlite3_column_int(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(db);
  return n;
}

/* A crash in the middle of a long message leaves its parts without their row
 * (the turn's events are what a start rebuilds the message from): the next
 * start drops them, committed or only journaled, so they take no room, and
 * the message rebuilt in their place reads as it was written. */
static void parts_without_their_message_are_dropped_at_the_next_start(void **state) {
  struct fixture *fx = *state;
  crash_after(fx, parts_of_an_unfinished_message);
  reopen(fx);
  assert_int_equal(stored_parts(fx), 0);
  assert_int_equal(store_message_add(fx->st, "s-7", 0, "t-7", 1, "{\"whole\":1}", 0), 0);
  store_sync(fx->st);
  struct store_reader *r = store_reader_open(fx->st);
  assert_non_null(r);
  char seen[256] = "";
  assert_int_equal(store_reader_messages_each(r, "s-7", collect_message, seen), 0);
  assert_string_equal(seen, "0:{\"whole\":1};");
  store_reader_close(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(steady_writes_keep_the_log_bounded, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(the_checkpointer_fills_the_database, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(a_reader_sees_committed_messages, setup, teardown),
      cmocka_unit_test_setup_teardown(a_message_stored_in_parts_reads_whole, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(a_message_missing_a_part_is_skipped, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          parts_without_their_message_are_dropped_at_the_next_start, setup, teardown),
      cmocka_unit_test_setup_teardown(the_files_are_the_owners_alone, setup, teardown),
      cmocka_unit_test_setup_teardown(older_files_are_made_the_owners_alone, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(links_are_not_followed_to_change_modes, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(unended_turns_know_whether_their_messages_are_last,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(a_crash_before_the_commit_loses_nothing_handed_over,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(a_frame_cut_short_is_dropped, setup, teardown),
      cmocka_unit_test_setup_teardown(committed_frames_are_not_carried_out_again, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
