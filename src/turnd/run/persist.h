/* What turnd hands the store, and when: runs mark themselves dirty as they emit,
 * and one step at the end of the loop iteration queues each dirty run's new
 * events as one chunk and hands everything queued since the last step (messages
 * and sessions too) to the store, which journals it at once and commits it
 * soon after. Once the journal has a chunk, readers see those events (a turn's
 * end: once it is committed), so what a reader saw survives a kill -9; once the
 * database has it, its run is told (run_committed) and the lines may leave
 * memory. At start-up it loads the sessions and ends the turns a crash left
 * running. */
#ifndef TURND_PERSIST_H
#define TURND_PERSIST_H

#include <stdbool.h>

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

/* Asks for the hand-over step at the end of this loop iteration. */
void persist_soon(struct turnd *d);
/* r has events the store has not got yet. */
void persist_run_dirty(struct run *r);
/* Queues every dirty run's events now (the hand-over is at the end of the
 * iteration). */
void persist_pending(struct turnd *d);
/* Queues r's events now; r is told when they are committed (r is leaving the
 * daemon's list and must stay in memory until then). */
void persist_run_now(struct run *r);
/* Queues r's events now, and nobody is told (r is being freed: shutting down). */
void persist_run_last(struct run *r);
/* A new turn (before its first event is marked dirty). */
void persist_turn_started(struct run *r);
/* A message of r's conversation: it is numbered in r's session, which it
 * updates. Takes m->json. */
void persist_message(struct run *r, struct convo_message *m);
/* The front of the message r's agent is building, once it is long: a long
 * reply goes to the store as it grows, so that it is never held whole nor
 * handed over in one piece (which for tens of megabytes held the loop up for
 * a large part of a second). Call after the messages are taken. */
void persist_message_front(struct run *r);
/* The session row as it is now (new, or its title, time or count changed). */
void persist_session(struct turnd *d, const struct session *s);

/* Before r reads its session's conversation from the store: hands everything
 * queued to the writer. Returns true when all of it is committed already, else
 * false, and run_barrier_passed(r) is called once it is. */
bool persist_barrier(struct run *r);
/* r no longer waits at its barrier (it is being freed). */
void persist_barrier_leave(struct run *r);

#endif
