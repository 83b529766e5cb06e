/* Sessions: a conversation's identity and the one turn that may run in it. Kept in
 * memory for now; the store will keep them across restarts. */
#ifndef TURND_SESSION_H
#define TURND_SESSION_H

#include <stdint.h>

struct turnd;
struct run;

struct session {
  char id[32]; /* "20261001-080000-abcd": UTC creation time + random */
  char *title; /* the first user text, shortened; owned */
  uint64_t created_ms, updated_ms;
  uint64_t message_count;
  struct run *running;  /* the turn in progress, or NULL: at most one (busy) */
  struct session *next; /* in turnd's list, newest first */
};

struct session *session_find(struct turnd *d, const char *id);
/* A new session titled after its first text. NULL when out of memory. */
struct session *session_create(struct turnd *d, const char *first_text);
void session_free_all(struct turnd *d);

#endif
