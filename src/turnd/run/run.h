/* What the run wing offers: live turns (run.c, with run_model.c and
 * run_tool.c), their hand-over to the store (run_persist.c), sessions
 * (session.c) and a turn's lines read back from the store (replay.c).
 *
 * A run is a turn inside turnd: its agent, every event it emitted (encoded, in
 * order, each checked by libturn's order checker first), and the readers
 * following it. A run is independent of any connection: readers come and go,
 * the agent goes on. */
#ifndef TURND_RUN_H
#define TURND_RUN_H

#include "agent/agent.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct turnd;
struct session;
struct evbuffer;
struct follower;
struct model_call;
struct request_job;
struct tool_proc;

struct run {
  struct turnd *d;         /* the daemon, which lists us */
  struct session *session; /* borrowed; sessions outlive runs */
  char id[40];             /* "t-" + 12 hex digits of Unix ms + 10 random ones */
  struct agent agent;      /* the turn's core */
  turn_order *order;       /* every event goes through it before it is kept */
  turn_buf log;            /* the lines from log_base_seq on, each with its "\n" */
  size_t log_base;         /* bytes of the turn before log.data[0]: those lines
                              are in the store only */
  uint64_t log_base_seq;   /* the first seq in log */
  uint32_t *line_end;      /* line_end[seq]: bytes of the turn up to the end of
                              that line (from its first byte, window or not) */
  size_t cap_lines;
  uint64_t n_events;          /* events so far: the next seq */
  bool ended;                 /* the end event is in log */
  bool shed;                  /* ended, its agent and order checker freed */
  size_t approvals_asked;     /* shed: the agent's count, for late answers */
  size_t kept_bytes;          /* ended: its memory, in d->ended_bytes */
  struct event *timer;        /* owned: the agent's waits, then the retain timer */
  struct event *resume;       /* owned: the pump goes on after its budget, at the
                                 priority of new requests (run_pump) */
  size_t live_counted;        /* not ended: its log's memory, in d->live_bytes */
  bool paused;                /* the pump waits for the store to take lines
                                 (too much of the turn is in memory): on
                                 d->paused, resumed from run_persist.c's reap */
  struct run *next_paused;    /* in d->paused */
  struct follower *followers; /* readers streaming this run */
  uint64_t stored;            /* events handed to the store: seq < stored */
  uint64_t durable;           /* events the journal or the database holds, which
                                 readers see (the end once committed) */
  uint64_t committed;         /* events the store committed: durable >= committed */
  bool release_due;           /* retained long enough; waits for the commit */
  bool released;              /* on d->closing: freed at the end of the iteration */
  bool gave_up;               /* ended without its end event (run_give_up) */
  unsigned in_flight;         /* chunks handed to the store with r as owner, not
                                 yet reaped: r may not be freed before */
  uint64_t unstored_end;      /* out of memory: events before it the store never
                                 got, committed as far as r goes once no chunk
                                 before them is in flight */
  struct model_call *call;    /* the external model's call in flight, or NULL */
  struct request_job *build;  /* its request being built (request_build.h), or NULL */
  struct tool_proc *tool;     /* the owner's tool running for it, or NULL */
  bool at_barrier;            /* waits for the store before a model call */
  uint64_t barrier_gen;       /* ... until the writer is done with this hand-over */
  struct run *next_barrier;   /* in d->barrier */
  bool dirty;                 /* stored < n_events, and we are on d->dirty */
  struct run *next_dirty;     /* in d->dirty */
  bool handed;                /* events queued for the next hand-over: on d->handed */
  struct run *next_handed;    /* in d->handed */
  struct run *next, *prev;    /* in the daemon's list (next: also in closing) */
  struct run *ended_next;     /* in the daemon's ended runs, oldest first */
};

/* Starts a turn for text in session (busy: the turn ends at once with "busy").
 * Returns the run, or NULL when out of memory. */
struct run *run_start(struct turnd *d, struct session *s, const char *text);
struct run *run_find(struct turnd *d, const char *id);
/* The turn id of an approval request ("<turn>.a<k>") into turn[0..cap).
 * Returns 0, or -1 when request has no such form. */
int run_request_turn(const char *request, char *turn, size_t cap);
/* The run an approval request belongs to, or NULL. */
struct run *run_of_request(struct turnd *d, const char *request);

/* Where a reader's lines go, as the run sees it: http/ makes one of a
 * streaming answer (http_follow.h), so that the run knows no HTTP. */
struct follower;
struct reader_out_ops;
struct reader_out {
  const struct reader_out_ops *ops;
  struct follower *reader; /* set by run_follow: what the out hands back */
};
struct reader_out_ops {
  /* The stream begins (its status line); the out now tells the run of its
   * client's going (run_reader_gone). */
  void (*start)(struct reader_out *o);
  /* Hands buf's bytes over (buf is emptied). With written, the out calls
   * run_reader_written once they have left turnd's buffer. */
  void (*send)(struct reader_out *o, struct evbuffer *buf, bool written);
  /* Writes what was handed over to the socket now: true when all of it went,
   * and then no run_reader_written comes for it. */
  bool (*write_now)(struct reader_out *o);
  /* Ends the stream whole, or cuts it off so that the client can tell it from
   * a whole one. Either frees o. */
  void (*end)(struct reader_out *o);
  void (*cut)(struct reader_out *o);
};
/* Streams the run to out from seq next_seq on, then follows it to its end, for
 * the paired device `device` (auth.h). Returns 0, or -1 (out not started: its
 * owner answers). The out may be ended before this returns. */
int run_follow(struct run *r, struct reader_out *out, uint64_t next_seq, int64_t device);
/* From the out: its client went away (the reader is gone; the out frees itself),
 * or what was handed over with written has left turnd's buffer. */
void run_reader_gone(struct follower *f);
void run_reader_written(struct follower *f);
/* Ends the answers of every reader whose device still_paired() refuses. */
void run_drop_followers(struct turnd *d, bool (*still_paired)(void *ctx, int64_t device),
                        void *ctx);

/* The store's journal holds r's events before end_seq (run_persist.c): a crash can
 * no longer take them back, and readers are handed them. */
void run_durable(struct run *r, uint64_t end_seq);
/* The store committed r's events before end_seq (run_persist.c): readers are handed
 * them, and lines every reader has got leave memory. */
void run_committed(struct run *r, uint64_t end_seq);
/* Steps r's agent as far as it goes now, doing what it asks (run.c). */
void run_pump(struct run *r);
/* The store took lines: paused runs whose memory now allows go on (run.c). */
void run_resume_paused(struct turnd *d);

/* The agent asks for a model call (run_model.c): it starts once everything the
 * session said is committed. */
void run_model_call(struct run *r);
/* Everything r's session said so far is committed (run_persist.c): its model call
 * starts. */
void run_barrier_passed(struct run *r);
/* r's turn is over or r is going: its call, if any, stops (run_model.c). */
void run_model_stop(struct run *r);
/* The body of a provider call for the session's messages, read with
 * d->request_reader (request_build_fn: runs on the builder's thread; cfg is the
 * struct turnd, read only). */
char *run_model_request(const void *cfg, const char *session);

/* The agent asks for the owner's tool (run_tool.c); its events come back
 * through run_pump. */
void run_tool_start(struct run *r, const struct agent_call *call,
                    const struct tool_def *tool);
/* r's turn is over or r is going: its tool, if one runs, is killed. */
void run_tool_stop(struct run *r);

/* The owner asked to stop. Changes nothing once the run has ended. */
void run_cancel(struct run *r);
/* The owner's decision on request: 0 taken, 1 not waiting any more (decided or
 * expired), -1 unknown to this run. */
int run_decide(struct run *r, const char *request, turn_decision d);
/* What approval request is to r: unknown, waiting, or waiting for a step-up. */
enum agent_approval run_approval_of(struct run *r, const char *request);
/* The owner's step-up for request passed (the call is approved) or failed.
 * Returns 0, or -1 when the request does not wait for one any more. */
int run_step_up(struct run *r, const char *request, bool passed);

/* turnd is stopping: every running turn ends now as interrupted, and its readers
 * get that end (the loop must still run for it to reach them). */
void run_interrupt_all(struct turnd *d);
/* Frees the runs released during this loop iteration (see run_persist.c's end of
 * iteration step). */
void run_free_closing(struct turnd *d);
/* Frees every run (at shutdown): followers' answers are ended first. */
void run_free_all(struct turnd *d);

/* -------------------------------------------- the hand-over to the store
 *
 * run_persist.c: what turnd hands the store, and when. Runs mark themselves
 * dirty as they emit, and one step at the end of the loop iteration queues each dirty
 * run's new events as one chunk and hands everything queued since the last step (messages
 * and sessions too) to the store, which journals it at once and commits it
 * soon after. Once the journal has a chunk, readers see those events (a turn's
 * end: once it is committed), so what a reader saw survives a kill -9; once the
 * database has it, its run is told (run_committed) and the lines may leave
 * memory. At start-up it loads the sessions and ends the turns a crash left
 * running. */

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

/* ---------------------------------------------------------------- sessions
 *
 * session.c: a conversation's identity and the one turn that may run in it.
 * All of them are held in memory (about a hundred bytes each), loaded from the
 * store at start-up; every change is written through to the store. */

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

/* ------------------------------------------------------------ stored lines
 *
 * replay.c: a turn's recorded lines read back from the store, a slice at a
 * time: for a turn that is no longer in memory (ended long ago, or before a
 * restart; http_replay.h streams those), and for a live turn's reader that
 * fell behind what the turn still holds. */

/* Appends to out the recorded lines of turn from seq *next_seq on, up to about a
 * slice (64 KiB) and before stop_seq, and advances *next_seq past them. Also
 * what a live turn's reader gets for the lines its turn no longer holds in
 * memory. Returns 0, or -1 when the store cannot be read. */
int replay_slice(struct turnd *d, const char *turn, uint64_t *next_seq, uint64_t stop_seq,
                 struct evbuffer *out);

#endif
