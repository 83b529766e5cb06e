/* Sessions: a conversation's identity and the one turn that may run in it. All of
 * them are held in memory (about a hundred bytes each), loaded from the store at
 * start-up; every change is written through to the store. */
#ifndef TURND_SESSION_H
#define TURND_SESSION_H

#include <stdint.h>

struct turnd;
struct run;

struct session {
  char id[32]; /* "20261001-080000-abcd": UTC creation time + random */
  char *title; /* the first user text, shortened; owned */
  uint64_t created_ms, updated_ms;
  uint64_t message_count; /* messages stored: the next message's number */
  struct run *running;    /* the turn in progress, or NULL: at most one (busy) */
  struct session *next;   /* in turnd's list, newest first */
};

struct session *session_find(struct turnd *d, const char *id);
/* A new session titled after its first text (for the caller to store:
 * persist_session). NULL when out of memory. */
struct session *session_create(struct turnd *d, const char *first_text);
/* A session read back from the store at start-up (copies the strings). NULL when
 * out of memory. */
struct session *session_add_loaded(struct turnd *d, const char *id, const char *title,
                                   uint64_t created_ms, uint64_t updated_ms,
                                   uint64_t message_count);
void session_free_all(struct turnd *d);

#endif
