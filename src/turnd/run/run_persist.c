/* Handing runs, messages and sessions to the store (see run.h). The store is
 * written only from here, so what belongs to one iteration's transaction is in
 * one place. */
#include "run.h"

#include "agent/call_close.h"
#include "clock.h"
#include "daemon.h"
#include "loop_prio.h"
#include "store/store.h"

#include <event2/event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A message's front goes to the store in parts of at least this size: a few
 * per megabytes of reply, and at most this much of a reply held in memory
 * besides its events. */
#define MESSAGE_PART_BYTES (1u << 20)

/* Hands what was queued to the store (now: to be committed without delay).
 * Once the journal has it, the runs whose events went with it show them. */
static uint64_t hand_over(struct turnd *d, bool now) {
  uint64_t gen = store_commit(d->store, now);
  bool journaled = store_journaled(d->store);
  while (d->handed != NULL) {
    struct run *r = d->handed;
    d->handed = r->next_handed;
    r->handed = false;
    if (journaled) run_durable(r, r->stored);
  }
  return gen;
}

/* The end-of-iteration step: what this iteration wrote goes to the writer. */
static void on_commit(evutil_socket_t fd, short events, void *arg) {
  (void)fd;
  (void)events;
  struct turnd *d = arg;
  d->commit_armed = false;
  persist_pending(d);
  bool now = d->commit_urgent;
  d->commit_urgent = false;
  hand_over(d, now);
  run_free_closing(d);
}

static void on_done(void *ctx, void *owner, uint64_t end_seq) {
  (void)ctx;
  struct run *r = owner;
  if (r == NULL) return;
  r->in_flight--;
  run_committed(r, end_seq);
}

/* Runs whose barrier the writer has passed go on (each may start a call that
 * waits again: the list is taken first). */
static void pass_barriers(struct turnd *d) {
  uint64_t done = store_committed(d->store);
  struct run **p = &d->barrier;
  while (*p != NULL) {
    struct run *r = *p;
    if (r->barrier_gen > done) {
      p = &r->next_barrier;
      continue;
    }
    *p = r->next_barrier;
    r->at_barrier = false;
    run_barrier_passed(r);
  }
}

/* The writer committed: those events may leave memory (and readers be shown
 * them, if the journal could not take them). */
static void on_reap(evutil_socket_t fd, short events, void *arg) {
  (void)fd;
  (void)events;
  struct turnd *d = arg;
  store_reap(d->store, on_done, d);
  pass_barriers(d);
  run_resume_paused(d);
  run_free_closing(d);
}

bool persist_barrier(struct run *r) {
  struct turnd *d = r->d;
  persist_pending(d);
  /* Its runs are shown their events at the end of the iteration (on_commit),
   * not from inside r's step. */
  uint64_t gen = store_commit(d->store, true);
  if (store_committed(d->store) >= gen) return true;
  r->barrier_gen = gen;
  r->at_barrier = true;
  r->next_barrier = d->barrier;
  d->barrier = r;
  return false;
}

void persist_barrier_leave(struct run *r) {
  if (!r->at_barrier) return;
  struct run **p = &r->d->barrier;
  while (*p != r)
    p = &(*p)->next_barrier;
  *p = r->next_barrier;
  r->at_barrier = false;
}

void persist_pending(struct turnd *d) {
  while (d->dirty != NULL)
    persist_run_now(d->dirty);
}

/* The end-of-iteration step: also where released runs are freed (run.c). It is
 * activated, not timed: it runs after the stream's callbacks already due in
 * this iteration (loop_prio.h), so their writes go to the journal and the
 * writer together; a callback of the lower priority that runs after it asks
 * for it again. The writer groups further: it commits what was handed over in
 * the last COMMIT_DELAY_MS together. */
void persist_soon(struct turnd *d) {
  if (d->commit_armed) return;
  d->commit_armed = true;
  event_active(d->commit_ev, 0, 0);
}

void persist_run_dirty(struct run *r) {
  if (!r->dirty) {
    r->dirty = true;
    r->next_dirty = r->d->dirty;
    r->d->dirty = r;
  }
  persist_soon(r->d);
}

static void hand_run(struct run *r, void *owner) {
  if (r->dirty) {
    struct run **p = &r->d->dirty;
    while (*p != r)
      p = &(*p)->next_dirty;
    *p = r->next_dirty;
    r->dirty = false;
  }
  if (owner == NULL && r->handed) { /* r is being freed: nobody to show */
    struct run **p = &r->d->handed;
    while (*p != r)
      p = &(*p)->next_handed;
    *p = r->next_handed;
    r->handed = false;
  }
  if (r->stored == r->n_events) return;
  /* Lines from stored on are in the log's window: it only drops stored lines. */
  size_t from = (r->stored == 0 ? 0 : r->line_end[r->stored - 1]) - r->log_base;
  size_t to = r->line_end[r->n_events - 1] - r->log_base;
  uint64_t first = r->stored;
  r->stored = r->n_events;
  if (store_events_add(r->d->store, r->id, first, r->n_events - first, turnd_now_ms(),
                       (const char *)r->log.data + from, to - from, owner) == 0) {
    if (owner != NULL) {
      r->in_flight++;
      if (!r->handed) {
        r->handed = true;
        r->next_handed = r->d->handed;
        r->d->handed = r;
      }
    }
  } else if (owner != NULL) {
    /* Out of memory: shown, though never stored. It counts as committed only
     * once the chunks before it are: their lines leave memory only once the
     * store has them, for the readers that will read them back. */
    r->unstored_end = r->n_events;
    if (r->in_flight == 0)
      run_committed(r, r->n_events);
    else
      run_durable(r, r->n_events);
  }
  if (r->ended && !r->gave_up) store_turn_ended(r->d->store, r->id);
  persist_soon(r->d);
}

void persist_run_now(struct run *r) {
  hand_run(r, r);
}

void persist_run_last(struct run *r) {
  hand_run(r, NULL);
}

void persist_turn_started(struct run *r) {
  store_turn_add(r->d->store, r->id, r->session->id, turnd_now_ms());
  persist_soon(r->d);
}

void persist_session(struct turnd *d, const struct session *s) {
  store_session_put(d->store, s->id, s->title, s->created_ms, s->updated_ms,
                    s->message_count);
  persist_soon(d);
}

void persist_message(struct run *r, struct convo_message *m) {
  struct session *s = r->session;
  if (store_message_add(r->d->store, s->id, s->message_count, r->id, m->at_ms, m->json,
                        m->parts) == 0) {
    s->message_count++;
    if (m->at_ms > s->updated_ms) s->updated_ms = m->at_ms;
    persist_session(r->d, s);
  }
  free(m->json);
  m->json = NULL;
}

void persist_message_front(struct run *r) {
  uint64_t part;
  turn_str front = agent_message_front(&r->agent, &part);
  if (front.len < MESSAGE_PART_BYTES) return;
  /* The message will be the session's next: the finished ones before it were
   * taken. A part the queue cannot take stays in the message, for the next try. */
  struct session *s = r->session;
  if (store_message_part(r->d->store, s->id, s->message_count, part, front.p,
                         front.len) == 0) {
    agent_message_front_taken(&r->agent);
    persist_soon(r->d);
  }
}

/* ------------------------------------------------------------- start-up */

static int load_session(void *ctx, const char *id, const char *title, uint64_t created_ms,
                        uint64_t updated_ms, uint64_t message_count) {
  return session_add_loaded(ctx, id, title, created_ms, updated_ms, message_count) != NULL
             ? 0
             : -1;
}

/* A cut-off turn read back from its events: the calls it left open
 * (call_close) and, for the session's latest turn, its messages rebuilt
 * (convo_recover). */
struct recovery {
  struct call_close calls;
  bool rebuild; /* the messages are rebuilt too */
  struct convo convo;
  turn_arena arena;
  uint64_t made;   /* messages of the turn so far, the user's first one counted */
  uint64_t stored; /* of those, the ones the store has */
  struct convo_message *found; /* the ones past stored, in order (owned) */
  size_t n_found, cap_found;
  uint64_t last_at_ms; /* the time of the last chunk of events */
};

static int recovered(void *ctx, struct convo_message *m) {
  struct recovery *rc = ctx;
  if (++rc->made <= rc->stored) { /* finished before the crash: stored then */
    free(m->json);
    return 0;
  }
  if (rc->n_found == rc->cap_found) {
    size_t cap = rc->cap_found == 0 ? 4 : rc->cap_found * 2;
    struct convo_message *grown = realloc(rc->found, cap * sizeof *grown);
    if (grown == NULL) {
      free(m->json);
      return -1;
    }
    rc->found = grown;
    rc->cap_found = cap;
  }
  rc->found[rc->n_found++] = *m;
  return 0;
}

static int recover_chunk(void *ctx, const char *turn, uint64_t first_seq, uint64_t n,
                         uint64_t at_ms, const char *lines, size_t len) {
  (void)turn;
  (void)first_seq;
  (void)n;
  struct recovery *rc = ctx;
  rc->last_at_ms = at_ms;
  if (call_close_feed(&rc->calls, &rc->arena, lines, len) != 0) return -1;
  return rc->rebuild
             ? convo_recover(&rc->convo, &rc->arena, lines, len, at_ms, recovered, rc)
             : 0;
}

/* What the turn said and did that never became a message (the reply it was
 * streaming, the results of calls that ran, and those its end gave) is stored
 * as the messages it would have been, as a cancel would have stored it:
 * readers were shown it, and the session's history and its next turn's model
 * go by messages. */
static int store_recovered(struct turnd *d, const char *turn, struct session *s,
                           struct recovery *rc) {
  convo_recover_finish(&rc->convo, rc->last_at_ms, rc->stored > rc->made);
  int err = 0;
  struct convo_message m;
  while (err == 0 && convo_take(&rc->convo, &m))
    err = recovered(rc, &m);
  for (size_t i = 0; i < rc->n_found; i++) {
    if (err == 0 &&
        store_message_add(d->store, s->id, s->message_count, turn, rc->found[i].at_ms,
                          rc->found[i].json, rc->found[i].parts) == 0) {
      s->message_count++;
      if (rc->found[i].at_ms > s->updated_ms) s->updated_ms = rc->found[i].at_ms;
    }
    free(rc->found[i].json);
  }
  if (rc->n_found > 0) persist_session(d, s);
  rc->n_found = 0;
  return err;
}

/* Appends ev, numbered seq, to lines. Returns 0 or -1. */
static int add_line(turn_buf *lines, turn_event *ev, uint64_t seq) {
  ev->seq = seq;
  return turn_event_encode(ev, lines) == TURN_OK && turn_buf_append(lines, "\n", 1) == 0
             ? 0
             : -1;
}

/* Bytes of the events that end a cut-off turn: its open calls' (at most a
 * reply's), a notice and the end. */
#define RECOVERY_LINES_CAP (1u << 20)

/* A turn a crash left without its end: each call it left open is closed as the
 * end of a live turn closes it, what it said is kept as messages (the closed
 * calls' results included, in the words readers get), then a notice says what
 * happened, then the end, as if turnd had been stopped. */
static int end_unended(void *ctx, const char *turn, const char *session,
                       uint64_t next_seq, uint64_t messages, bool latest) {
  struct turnd *d = ctx;
  struct session *s = session_find(d, session);
  struct recovery rc;
  memset(&rc, 0, sizeof rc);
  call_close_init(&rc.calls);
  convo_init(&rc.convo);
  turn_arena_init(&rc.arena, NULL);
  /* Only a turn whose messages are the session's last gets more: one that
   * gave up on the store while turnd ran on has later turns' messages after
   * its own, and what it said went to the model of none of them. (A later
   * turn refused as busy stored none and does not count.) */
  rc.rebuild = s != NULL && latest;
  rc.made = 1; /* the user's text, stored as the turn started */
  rc.stored = messages;
  int err = store_turn_events_each(d->store, turn, 0, recover_chunk, &rc);
  turn_buf lines;
  turn_buf_init(&lines, RECOVERY_LINES_CAP, NULL);
  uint64_t seq = next_seq;
  turn_event ev;
  if (err == 0 && next_seq == 0) { /* not even its first event was kept */
    memset(&ev, 0, sizeof ev);
    ev.type = TURN_EV_TURN;
    ev.turn.turn = turn_str_c(turn);
    ev.turn.session = turn_str_c(session);
    err = add_line(&lines, &ev, seq++);
  }
  /* A reply that the store kept, or that results followed, had ended: its
   * calls ran one by one from then on. (A turn whose messages are not rebuilt
   * is taken to have ended its reply: its first open call is then said
   * stopped, and may have run in part, rather than never run.) */
  bool reply_complete =
      !rc.rebuild || rc.convo.open != CONVO_ASSISTANT || rc.stored > rc.made;
  while (err == 0 &&
         call_close_next(&rc.calls, "turnd stopped", reply_complete, &rc.arena, &ev)) {
    size_t at = lines.len;
    err = add_line(&lines, &ev, seq++);
    /* The model is told what readers are: the rebuild reads the same line. */
    if (err == 0 && rc.rebuild)
      err = convo_recover(&rc.convo, &rc.arena, (const char *)lines.data + at,
                          lines.len - at, rc.last_at_ms, recovered, &rc);
  }
  if (err == 0 && rc.rebuild) err = store_recovered(d, turn, s, &rc);
  if (err == 0) {
    memset(&ev, 0, sizeof ev);
    ev.type = TURN_EV_NOTICE;
    ev.notice.text = TURN_STR("turnd stopped while this turn was running");
    err = add_line(&lines, &ev, seq++);
  }
  if (err == 0) {
    memset(&ev, 0, sizeof ev);
    ev.type = TURN_EV_END;
    ev.end.stop_reason = TURN_STOP_INTERRUPT;
    err = add_line(&lines, &ev, seq++);
  }
  if (err == 0)
    err = store_events_add(d->store, turn, next_seq, seq - next_seq, turnd_now_ms(),
                           (const char *)lines.data, lines.len, NULL);
  if (err == 0) err = store_turn_ended(d->store, turn);
  turn_buf_fini(&lines);
  for (size_t i = 0; i < rc.n_found; i++)
    free(rc.found[i].json);
  free(rc.found);
  turn_arena_fini(&rc.arena);
  convo_fini(&rc.convo);
  call_close_fini(&rc.calls);
  return err;
}

int persist_start(struct turnd *d) {
  char err[512];
  d->store = store_open(d->opt->data_dir, err, sizeof err);
  if (d->store == NULL) {
    fprintf(stderr, "turnd: %s\n", err);
    return -1;
  }
  d->commit_ev = event_new(d->base, -1, 0, on_commit, d);
  d->reap_ev = event_new(d->base, store_fd(d->store), EV_READ | EV_PERSIST, on_reap, d);
  if (d->commit_ev == NULL || d->reap_ev == NULL ||
      event_priority_set(d->commit_ev, LOOP_PRIO_STREAM) != 0 ||
      event_priority_set(d->reap_ev, LOOP_PRIO_STREAM) != 0 ||
      event_add(d->reap_ev, NULL) != 0 ||
      store_sessions_each(d->store, load_session, d) != 0 ||
      store_unended_each(d->store, end_unended, d) != 0) {
    fprintf(stderr, "turnd: cannot read the store in %s\n", d->opt->data_dir);
    return -1;
  }
  store_sync(d->store); /* the interrupted turns are ended before anyone asks */
  store_reap(d->store, NULL, NULL);
  return 0;
}

void persist_stop(struct turnd *d) {
  if (d->store != NULL) persist_pending(d);
  if (d->reap_ev != NULL) event_free(d->reap_ev);
  d->reap_ev = NULL;
  store_close(d->store);
  d->store = NULL;
  if (d->commit_ev != NULL) event_free(d->commit_ev);
  d->commit_ev = NULL;
}
