/* The store's functions (see store.h), each through its implementation's
 * table (store_impl.h). */
#include "store_impl.h"

struct store *store_open(const char *dir, char *err, size_t cap) {
  return sqlite_store_open(dir, err, cap);
}

void store_close(struct store *st) {
  if (st != NULL) st->ops->close(st);
}

uint64_t store_commit(struct store *st, bool now) {
  return st->ops->commit(st, now);
}

bool store_journaled(const struct store *st) {
  return st->ops->journaled(st);
}

uint64_t store_committed(struct store *st) {
  return st->ops->committed(st);
}

int store_fd(const struct store *st) {
  return st->ops->fd(st);
}

void store_release_memory(struct store *st) {
  st->ops->release_memory(st);
}

void store_reap(struct store *st, store_done_cb *cb, void *ctx) {
  st->ops->reap(st, cb, ctx);
}

void store_sync(struct store *st) {
  st->ops->sync(st);
}

int store_session_put(struct store *st, const char *id, const char *title,
                      uint64_t created_ms, uint64_t updated_ms, uint64_t message_count) {
  return st->ops->session_put(st, id, title, created_ms, updated_ms, message_count);
}

int store_message_add(struct store *st, const char *session, uint64_t n, const char *turn,
                      uint64_t at_ms, const char *json, uint64_t parts) {
  return st->ops->message_add(st, session, n, turn, at_ms, json, parts);
}

int store_message_part(struct store *st, const char *session, uint64_t n, uint64_t part,
                       const char *bytes, size_t len) {
  return st->ops->message_part(st, session, n, part, bytes, len);
}

int store_turn_add(struct store *st, const char *turn, const char *session,
                   uint64_t started_ms) {
  return st->ops->turn_add(st, turn, session, started_ms);
}

int store_events_add(struct store *st, const char *turn, uint64_t first_seq, uint64_t n,
                     uint64_t at_ms, const char *lines, size_t len, void *owner) {
  return st->ops->events_add(st, turn, first_seq, n, at_ms, lines, len, owner);
}

int store_turn_ended(struct store *st, const char *turn) {
  return st->ops->turn_ended(st, turn);
}

int store_sessions_each(struct store *st, store_session_cb *cb, void *ctx) {
  return st->ops->sessions_each(st, cb, ctx);
}

int store_turn_events_each(struct store *st, const char *turn, uint64_t seq,
                           store_chunk_cb *cb, void *ctx) {
  return st->ops->turn_events_each(st, turn, seq, cb, ctx);
}

int store_turn_find(struct store *st, const char *turn, uint64_t *n_events) {
  return st->ops->turn_find(st, turn, n_events);
}

int store_turn_exists(struct store *st, const char *turn) {
  return st->ops->turn_exists(st, turn);
}

int store_unended_each(struct store *st, store_unended_cb *cb, void *ctx) {
  return st->ops->unended_each(st, cb, ctx);
}

struct store_reader *store_reader_open(const struct store *st) {
  return st->ops->reader_open(st);
}

void store_reader_close(struct store_reader *r) {
  if (r != NULL) r->ops->reader_close(r);
}

int store_reader_messages_each(struct store_reader *r, const char *session,
                               store_message_cb *cb, void *ctx) {
  return r->ops->reader_messages_each(r, session, cb, ctx);
}

int store_reader_history_each(struct store_reader *r, const char *session,
                              store_chunk_cb *chunk_cb, store_message_cb *message_cb,
                              void *ctx) {
  return r->ops->reader_history_each(r, session, chunk_cb, message_cb, ctx);
}
