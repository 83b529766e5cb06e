/* What turnd hands the store, and when: runs mark themselves dirty as they emit,
 * and one commit step at the end of the loop iteration (at most every 10 ms)
 * writes each dirty run's new events as one chunk and commits everything since
 * the last commit at once (the writes of messages and sessions join the same
 * transaction). At start-up it loads the sessions and ends the turns a crash
 * left running. */
#ifndef TURND_PERSIST_H
#define TURND_PERSIST_H

struct turnd;
struct run;
struct session;
struct convo_message;

/* Opens the store in the data folder, loads its sessions, ends the turns that
 * were running when turnd last died. Returns 0, or -1 after saying why on
 * stderr. */
int persist_start(struct turnd *d);
/* Commits what is left and closes the store (after every run is freed). */
void persist_stop(struct turnd *d);

/* Asks for a commit at the end of this loop iteration, or 10 ms after the last. */
void persist_soon(struct turnd *d);
/* r has events the store has not got yet. */
void persist_run_dirty(struct run *r);
/* Hands every dirty run's events to the store now, before a read that must see
 * them; the commit stays at the end of the iteration. */
void persist_pending(struct turnd *d);
/* Hands r's events to the store now (r is about to be freed). */
void persist_run_now(struct run *r);
/* A new turn (before its first event is marked dirty). */
void persist_turn_started(struct run *r);
/* A message of r's conversation: it is numbered in r's session, which it
 * updates. Takes m->json. */
void persist_message(struct run *r, struct convo_message *m);
/* The session row as it is now (new, or its title, time or count changed). */
void persist_session(struct turnd *d, const struct session *s);

#endif
