/* The seam behind store.h (internal to the store): a store is a table of
 * operations, and store.c's functions call through it. The SQLite store
 * (store_sqlite.c) is one implementation; another (a server database, say)
 * fills the same table and is chosen in store_open. */
#ifndef TURND_STORE_IMPL_H
#define TURND_STORE_IMPL_H

#include "store.h"

struct store_ops {
  void (*close)(struct store *st);
  uint64_t (*commit)(struct store *st, bool now);
  bool (*journaled)(const struct store *st);
  uint64_t (*committed)(struct store *st);
  int (*fd)(const struct store *st);
  void (*release_memory)(struct store *st);
  void (*reap)(struct store *st, store_done_cb *cb, void *ctx);
  void (*sync)(struct store *st);
  int (*session_put)(struct store *st, const char *id, const char *title,
                     uint64_t created_ms, uint64_t updated_ms, uint64_t message_count);
  int (*message_add)(struct store *st, const char *session, uint64_t n, const char *turn,
                     uint64_t at_ms, const char *json, uint64_t parts);
  int (*message_part)(struct store *st, const char *session, uint64_t n, uint64_t part,
                      const char *bytes, size_t len);
  int (*turn_add)(struct store *st, const char *turn, const char *session,
                  uint64_t started_ms);
  int (*events_add)(struct store *st, const char *turn, uint64_t first_seq, uint64_t n,
                    uint64_t at_ms, const char *lines, size_t len, void *owner);
  int (*turn_ended)(struct store *st, const char *turn);
  int (*sessions_each)(struct store *st, store_session_cb *cb, void *ctx);
  int (*turn_events_each)(struct store *st, const char *turn, uint64_t seq,
                          store_chunk_cb *cb, void *ctx);
  int (*turn_find)(struct store *st, const char *turn, uint64_t *n_events);
  int (*turn_exists)(struct store *st, const char *turn);
  int (*unended_each)(struct store *st, store_unended_cb *cb, void *ctx);
  struct store_reader *(*reader_open)(const struct store *st);
  void (*reader_close)(struct store_reader *r);
  int (*reader_messages_each)(struct store_reader *r, const char *session,
                              store_message_cb *cb, void *ctx);
  int (*reader_history_each)(struct store_reader *r, const char *session,
                             store_chunk_cb *chunk_cb, store_message_cb *message_cb,
                             void *ctx);
};

/* What every implementation's store and reader begin with. */
struct store {
  const struct store_ops *ops;
};
struct store_reader {
  const struct store_ops *ops;
};

/* The SQLite store in DIR (store_sqlite.c). */
struct store *sqlite_store_open(const char *dir, char *err, size_t cap);

#endif
