/* The store: sessions, their messages and every event of every turn, in one
 * SQLite database (DIR/turnd.db) in WAL mode. Writes go into a transaction that
 * stays open until store_commit(), which the daemon calls once per loop
 * iteration: many writes cost one commit, and a commit in WAL mode appends to the
 * log without waiting for the disk. What was committed survives a kill -9.
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
/* Commits what is pending and closes. Accepts NULL. */
void store_close(struct store *st);

/* Writes. Each borrows its arguments and returns 0, or -1 when the database
 * refused it (the reason went to stderr, without the data). */
int store_session_put(struct store *st, const char *id, const char *title,
                      uint64_t created_ms, uint64_t updated_ms, uint64_t message_count);
int store_message_add(struct store *st, const char *session, uint64_t n, const char *turn,
                      uint64_t at_ms, const char *json);
int store_turn_add(struct store *st, const char *turn, const char *session,
                   uint64_t started_ms);
/* lines[0..len): events first_seq .. first_seq + n - 1, each with its "\n". */
int store_events_add(struct store *st, const char *turn, uint64_t first_seq, uint64_t n,
                     uint64_t at_ms, const char *lines, size_t len);
int store_turn_ended(struct store *st, const char *turn);
/* Commits the open transaction, if any. Returns 0 or -1. */
int store_commit(struct store *st);

/* Reads; they see the writes not yet committed. Callbacks get borrowed strings,
 * valid during the call, and must not call the store; a non-zero return from a
 * callback stops the walk and is returned. A database error returns -1. */
typedef int store_session_cb(void *ctx, const char *id, const char *title,
                             uint64_t created_ms, uint64_t updated_ms,
                             uint64_t message_count);
int store_sessions_each(struct store *st, store_session_cb *cb, void *ctx);

typedef int store_message_cb(void *ctx, uint64_t n, const char *turn, uint64_t at_ms,
                             const char *json);
/* The session's messages in order. */
int store_messages_each(struct store *st, const char *session, store_message_cb *cb,
                        void *ctx);

typedef int store_chunk_cb(void *ctx, const char *turn, uint64_t first_seq, uint64_t n,
                           uint64_t at_ms, const char *lines, size_t len);
/* The event chunks of every turn of the session, turn by turn in the order they
 * started, each turn's chunks in seq order. */
int store_session_events_each(struct store *st, const char *session, store_chunk_cb *cb,
                              void *ctx);
/* The turn's chunks that hold events at or after seq, in order, until cb stops
 * the walk. */
int store_turn_events_each(struct store *st, const char *turn, uint64_t seq,
                           store_chunk_cb *cb, void *ctx);

/* Whether the turn is known: 1, 0 when unknown, -1 on a database error. */
int store_turn_exists(struct store *st, const char *turn);

/* Turns that were running when turnd stopped without ending them (a crash, a
 * kill -9): for each, cb gets the turn, its session and the next seq; the caller
 * appends the events that end it and marks it ended (cb may write: the list is
 * read before the first call). */
typedef int store_unended_cb(void *ctx, const char *turn, const char *session,
                             uint64_t next_seq);
int store_unended_each(struct store *st, store_unended_cb *cb, void *ctx);

#endif
