/* The store's queued writes (internal to the store): each one a record of its
 * kind with its values copied in, in lists handed from the loop to the journal
 * (store_journal.h) and the writer (store_write.h). */
#ifndef TURND_STORE_WRITE_LIST_H
#define TURND_STORE_WRITE_LIST_H

#include <stddef.h>
#include <stdint.h>

enum write_kind {
  WRITE_SESSION_PUT,
  WRITE_MESSAGE_ADD,
  WRITE_TURN_ADD,
  WRITE_EVENTS_ADD,
  WRITE_TURN_ENDED,
  WRITE_MESSAGE_PART,
  WRITE__COUNT
};

/* One queued write: its values are copied into text[], so the caller's buffers
 * are free once it is queued. */
struct write {
  struct write *next;
  enum write_kind kind;
  void *owner;      /* WRITE_EVENTS_ADD: handed back by store_reap; else NULL */
  uint64_t num[3];  /* the numbers, in the order the statement binds them */
  const char *s[3]; /* the strings (in text[]); NULL past the kind's count */
  size_t slen[3];   /* their lengths, without the NUL (0 for NULL) */
  const void *blob; /* the lines of WRITE_EVENTS_ADD, the bytes of WRITE_MESSAGE_PART
                       (in text[]) */
  size_t blob_len;
  char text[];
};

struct write_list {
  struct write *first, *last;
};

/* A write of kind with up to three strings (s[i] NULL: none; slen[i] bytes
 * each, a NUL is added) and a blob, all copied into it. Returns it (owned,
 * next NULL), or NULL when out of memory. */
struct write *write_new(enum write_kind kind, const char *const s[3],
                        const size_t slen[3], const uint64_t num[3], const void *blob,
                        size_t blob_len, void *owner);

/* Appends from's writes to to's (from is emptied). */
void write_list_append(struct write_list *to, struct write_list *from);
/* Frees every write of the list. */
void write_list_free(struct write_list *l);

#endif
