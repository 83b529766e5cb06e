/* The store: sessions, their messages and every event of every turn, in one
 * SQLite database (DIR/turnd.db) in WAL mode. Writes are queued and cost the
 * caller a copy; store_commit() appends what was queued to the journal
 * (DIR/turnd.journal-0 and -1: one write(2), no sync) and hands it to a writer
 * thread, which carries out everything handed to it since its last commit in
 * one transaction (a group commit), at most COMMIT_DELAY_MS later (at once when
 * asked), and then makes store_fd() readable; store_reap() tells the owner of
 * each batch of events that it is committed. What was journaled survives a
 * kill -9: at the next start the journal's frames that the database had not
 * committed are carried out first. Nothing here blocks on SQLite or the disk
 * but start-up, store_sync() and store_close(), and store_commit()'s append.
 *
 * Events are kept in runs of lines ("chunks"): all the events one turn emitted
 * in one loop iteration are one row, which keeps the row count far below the
 * event count on a fast stream. The chunk's time stands for each of its events:
 * they came within the same iteration. */
#ifndef TURND_STORE_H
#define TURND_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store;

/* Opens or creates DIR/turnd.db and brings its schema to this version. Returns
 * the store, or NULL with the reason in err[0..cap) (a database written by a
 * newer turnd is refused, not changed). */
struct store *store_open(const char *dir, char *err, size_t cap);
/* Commits what is queued, waits for it and closes; the owners of those events are
 * not told. Accepts NULL. */
void store_close(struct store *st);

/* Writes. Each copies its arguments into the queue and returns 0, or -1 when out
 * of memory. A write the database refuses later is said on stderr (without the
 * data) and skipped. */
int store_session_put(struct store *st, const char *id, const char *title,
                      uint64_t created_ms, uint64_t updated_ms, uint64_t message_count);
/* Message n of the session; parts: how many parts of its front were stored
 * before it (store_message_part), json being the rest. */
int store_message_add(struct store *st, const char *session, uint64_t n, const char *turn,
                      uint64_t at_ms, const char *json, uint64_t parts);
/* Part number `part` (from 0) of message n's front, bytes[0..len): a long
 * message goes to the store as it grows, never in one piece. The parts of a
 * message whose row never came (its turn was cut off) are dropped at the next
 * start, and the reads join a message's parts and its row into one text. */
int store_message_part(struct store *st, const char *session, uint64_t n, uint64_t part,
                       const char *bytes, size_t len);
int store_turn_add(struct store *st, const char *turn, const char *session,
                   uint64_t started_ms);
/* lines[0..len): events first_seq .. first_seq + n - 1, each with its "\n".
 * owner (borrowed; may be NULL) is handed back by store_reap once they are done,
 * and must stay valid until then. */
int store_events_add(struct store *st, const char *turn, uint64_t first_seq, uint64_t n,
                     uint64_t at_ms, const char *lines, size_t len, void *owner);
int store_turn_ended(struct store *st, const char *turn);
/* Journals what was queued and hands it to the writer; returns once it is
 * journaled. now: the writer commits it without delay (so does it when a turn's
 * end is queued). Returns the number of the hand-over that holds everything
 * queued so far. */
uint64_t store_commit(struct store *st, bool now);
/* Whether everything handed over so far is in the journal: false once an append
 * failed (said on stderr), and then only committed writes survive a crash. */
bool store_journaled(const struct store *st);
/* The last hand-over the writer is done with: every write queued before it is
 * committed (or was refused). */
uint64_t store_committed(struct store *st);
/* Readable once handed writes are done: then call store_reap. */
int store_fd(const struct store *st);
/* Gives back the page cache of the loop's connection (the reads of turns
 * replayed from the store), for a loop that has gone quiet. */
void store_release_memory(struct store *st);
/* Events store_events_add handed over with owner are done: committed, or refused
 * by the database (said on stderr) and so never to be. end_seq is first_seq + n. */
typedef void store_done_cb(void *ctx, void *owner, uint64_t end_seq);
/* Calls cb (NULL: nobody) for each batch of events done since the last call, in
 * the order they were queued. */
void store_reap(struct store *st, store_done_cb *cb, void *ctx);
/* Hands what was queued to the writer and blocks until it is done (start-up). */
void store_sync(struct store *st);

/* Reads; they see what the writer has committed, not what waits in the queue. Callbacks
 * get borrowed strings, valid during the call, and must not call the store; a non-zero
 * return from a callback stops the walk and is returned. A database error returns -1. */
typedef int store_session_cb(void *ctx, const char *id, const char *title,
                             uint64_t created_ms, uint64_t updated_ms,
                             uint64_t message_count);
int store_sessions_each(struct store *st, store_session_cb *cb, void *ctx);

/* A message of a session, in order. */
typedef int store_message_cb(void *ctx, uint64_t n, const char *turn, uint64_t at_ms,
                             const char *json);
/* A chunk of a turn's events, in seq order. */
typedef int store_chunk_cb(void *ctx, const char *turn, uint64_t first_seq, uint64_t n,
                           uint64_t at_ms, const char *lines, size_t len);
/* A connection of its own that reads a session's messages and events, for a
 * thread other than the loop (the request builder's): it sees what the writer
 * committed, as the loop's reads do. One thread at a time may use it. Returns
 * NULL when it cannot be opened (said on stderr). */
struct store_reader;
struct store_reader *store_reader_open(const struct store *st);
void store_reader_close(struct store_reader *r); /* accepts NULL */
/* The session's messages in order. */
int store_reader_messages_each(struct store_reader *r, const char *session,
                               store_message_cb *cb, void *ctx);
/* The event chunks of every turn of the session (turn by turn in the order they
 * started, each turn's chunks in seq order), then its messages, from one
 * snapshot of the store (one read transaction). */
int store_reader_history_each(struct store_reader *r, const char *session,
                              store_chunk_cb *chunk_cb, store_message_cb *message_cb,
                              void *ctx);
/* The turn's chunks that hold events at or after seq, in order, until cb stops
 * the walk. */
int store_turn_events_each(struct store *st, const char *turn, uint64_t seq,
                           store_chunk_cb *cb, void *ctx);

/* Whether the turn is known: 1, 0 when unknown, -1 on a database error. */
int store_turn_exists(struct store *st, const char *turn);
/* The same, and when it is known, the number of its events the store holds
 * (its last seq + 1; 0 for none) into *n_events (may be NULL). */
int store_turn_find(struct store *st, const char *turn, uint64_t *n_events);

/* Turns that were running when turnd stopped without ending them (a crash, a
 * kill -9, or a turn that gave up on the store): for each, cb gets the turn,
 * its session, the next seq, how many of the session's messages belong to the
 * turn and whether its messages are the session's last (no later turn stored
 * any; a turn refused as busy stores none). The caller appends the events that
 * end it and marks it ended (cb may write and read: the list is read before
 * the first call). */
typedef int store_unended_cb(void *ctx, const char *turn, const char *session,
                             uint64_t next_seq, uint64_t messages, bool latest);
int store_unended_each(struct store *st, store_unended_cb *cb, void *ctx);

#endif
