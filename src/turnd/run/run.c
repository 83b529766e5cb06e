/* Runs and their followers. The agent is pumped until it has to wait; every event
 * it emits gets its seq here, is appended to the run's log, goes through the
 * order checker, and is handed to the followers. A follower only remembers how
 * far into the turn's bytes it has been served, so readers that join late or
 * re-attach share one log, and each holds at most one slice of it in flight.
 * The log is a window: lines the store has and every reader has been handed
 * leave memory, and a reader that needs older lines reads them from the store
 * until it reaches the window. */
#include "run.h"

#include "clock.h"
#include "daemon.h"
#include "loop_prio.h"
#include "random_hex.h"
#include "store/store.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Bytes of one turn's events: far past any real turn. Past the soft cap the
 * turn ends with an error; the slack is room for the results of the calls it
 * closes (a reply's, at most AGENT_MAX_CALLS), that error and the end. */
#define RUN_LOG_SOFT_CAP (64u << 20)
#define RUN_LOG_CAP      (RUN_LOG_SOFT_CAP + (64u << 10))
/* Agent steps, and bytes of events, per pump: a turn with much to say at once
 * (a script without waits) says it in pieces, and between two pieces the loop
 * serves everything else that is ready, new requests included (run_resume). */
#define PUMP_STEPS 1000
#define PUMP_BYTES (256u * 1024u)
/* Bytes of the log handed to a reader at a time, and slices handed to one
 * reader in one go: then the next waits for the socket's written callback, in a
 * later pass of the loop, so that a fast reader of a fast turn does not keep the
 * loop to itself. */
#define READER_SLICE (64u * 1024u)
#define FLUSH_SLICES 4
/* Bytes of a turn a reader may lag behind its committed lines and still be
 * handed them from memory; further behind, it reads them from the store
 * (replay_slice), so that a slow reader costs its turn no more than this. */
#define READER_LAG_MAX (1u << 20)
/* Bytes of a turn not yet committed past which its pump waits for the store:
 * those lines must stay in memory until the store can serve them, and every
 * other turn's end waits behind them for its commit (the writer carries out
 * hand-overs in order): with 4 MiB, a small turn's end beside a big one waited
 * up to 170 ms; with 1 MiB, 27-45 ms, for a tenth less of the big one's speed. */
#define RUN_UNCOMMITTED_MAX (1u << 20)
/* A live turn's log gives back what it grew for once it holds less than a
 * quarter of it, from this size on (below, the churn would cost more). */
#define LOG_SHRINK_MIN (1u << 20)
/* Bytes of ended turns kept in memory for re-attaching readers, besides the
 * --retain time limit; older ones are replayed from the store. */
#define RETAIN_BYTES (64u << 20)

struct follower {
  struct run *run;        /* the run we read; it outlives us */
  struct reader_out *out; /* where its lines go (run.h) */
  size_t next_off;        /* first byte of the turn not yet handed over (an
                             offset from the turn's first byte, like
                             line_end, always where a line starts, so
                             that the store can serve from there);
                             SIZE_MAX until the run reaches start_seq */
  uint64_t start_seq;     /* the first seq asked for (after + 1) */
  bool writing;           /* a slice is in the socket's buffer; its
                             written callback hands over the next */
  int64_t device;         /* the paired device reading (auth.h): when it
                             is unpaired, the stream stops */
  struct follower *next;
};

/* ---------------------------------------------------------------- followers */

static void follower_detach(struct follower *f) {
  struct follower **p = &f->run->followers;
  while (*p != NULL && *p != f)
    p = &(*p)->next;
  if (*p == f) *p = f->next;
  free(f);
}

void run_reader_gone(struct follower *f) {
  follower_detach(f);
}

/* Ends f's answer, whole. */
static void follower_finish(struct follower *f) {
  struct reader_out *out = f->out;
  follower_detach(f);
  out->ops->end(out);
}

/* The turn ended short of the seq f waits for, and its 200 went long ago: the
 * answer is cut off rather than ended, so that the client sees no answer that
 * looks whole, comes back with the same after, and gets 409 after_past_end
 * with the turn's last seq (http_turns.c). */
static void follower_abort(struct follower *f) {
  struct reader_out *out = f->out;
  follower_detach(f);
  out->ops->cut(out);
}

static void follower_flush(struct follower *f);

/* The lines readers may be handed: those a crash cannot take back (the journal
 * or the database holds them), but a turn's end only once it is committed, so
 * that a client that has the end finds all of the turn in the session's
 * history. The turn's first line is the exception: it only names the turn, and
 * a client wants that at once (to cancel, to re-attach) rather than after the
 * iteration's hand-over. A crash before that leaves a turn the store never
 * heard of: re-attaching to it is 404, not a different line. */
static uint64_t lines_shown(const struct run *r) {
  uint64_t n = r->durable;
  if (r->ended && !r->gave_up && n == r->n_events && r->committed < n) n--;
  return n > 0 ? n : r->n_events > 0 ? 1 : 0;
}

/* The number of lines that end at or before byte off of the turn: where off is
 * where a line starts, that line's seq. */
static uint64_t lines_before(const struct run *r, size_t off) {
  uint64_t lo = 0, hi = r->n_events;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (r->line_end[mid] <= off)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Where a reader's slice from byte from (a line start) ends: at the last line
 * end within READER_SLICE bytes, or the end of the one line if it is longer,
 * and never past visible (a line end). Slices end between lines so that a
 * reader left behind by the window goes on from the store at a seq. */
static size_t slice_end(const struct run *r, size_t from, size_t visible) {
  if (visible - from <= READER_SLICE) return visible;
  uint64_t n = lines_before(r, from + READER_SLICE); /* < the lines visible */
  size_t end = n == 0 ? 0 : r->line_end[n - 1];
  return end > from ? end : r->line_end[n];
}

/* The slice handed over last has left turnd's buffer: hand over the next. */
void run_reader_written(struct follower *f) {
  f->writing = false;
  follower_flush(f);
}

/* Hands f the next slice of the log it is owed, at most READER_SLICE bytes and
 * only once the previous slice was written: a reader costs at most one slice of
 * buffer however slow it is, and a fast one gets the turn as it comes. Once the
 * run has ended and f has everything, the answer is finished. write_now: the
 * slice is written to the socket here, else when the loop finds it writable.
 * Returns true when the slice left at once and f may be handed the next now (f
 * is alive); false when there is nothing more now, the slice waits for the
 * socket, or f is gone. */
static bool flush_slice(struct follower *f, bool write_now) {
  struct run *r = f->run;
  if (f->writing) return false;
  uint64_t seen = lines_shown(r);
  if (f->next_off == SIZE_MAX && seen >= f->start_seq)
    f->next_off = r->line_end[f->start_seq - 1]; /* start_seq > 0 here */
  if (f->next_off == SIZE_MAX) { /* the reader has not reached start_seq */
    if (r->ended && r->n_events < f->start_seq) follower_abort(f);
    return false;
  }
  size_t visible = seen == 0 ? 0 : r->line_end[seen - 1];
  struct evbuffer *buf = NULL;
  if (f->next_off < r->log_base) {
    /* Lines that left memory: from the store, up to the window. */
    uint64_t from = lines_before(r, f->next_off), seq = from;
    buf = evbuffer_new();
    if (buf == NULL || replay_slice(r->d, r->id, &seq, r->log_base_seq, buf) != 0 ||
        seq == from) {
      if (buf != NULL) evbuffer_free(buf);
      follower_finish(f); /* the store failed: the reader may come back */
      return false;
    }
    f->next_off = r->line_end[seq - 1];
  } else if (f->next_off < visible) {
    size_t end = slice_end(r, f->next_off, visible);
    buf = evbuffer_new();
    if (buf == NULL || evbuffer_add(buf, r->log.data + (f->next_off - r->log_base),
                                    end - f->next_off) != 0) {
      if (buf != NULL) evbuffer_free(buf);
      return false; /* out of memory: the next commit or slice tries again */
    }
    f->next_off = end;
  } else {
    if (r->ended && r->committed == r->n_events) follower_finish(f);
    return false;
  }
  if (r->ended && r->committed == r->n_events && f->next_off == visible) {
    /* The last slice: the answer's end goes with it, in the same write. */
    f->out->ops->send(f->out, buf, false);
    evbuffer_free(buf);
    follower_finish(f);
    return false;
  }
  f->writing = true;
  f->out->ops->send(f->out, buf, true);
  evbuffer_free(buf);
  if (!write_now || !f->out->ops->write_now(f->out))
    return false; /* run_reader_written comes */
  f->writing = false;
  return true;
}

static void follower_flush(struct follower *f) {
  for (unsigned n = 1; flush_slice(f, n < FLUSH_SLICES); n++)
    ;
}

int run_follow(struct run *r, struct reader_out *out, uint64_t next_seq, int64_t device) {
  struct follower *f = calloc(1, sizeof *f);
  if (f == NULL) return -1;
  f->device = device;
  f->run = r;
  f->out = out;
  out->reader = f;
  /* A reader may ask for a seq the turn has not reached yet: it gets nothing
   * until then. */
  f->start_seq = next_seq;
  f->next_off = next_seq == 0 ? 0 : SIZE_MAX;
  f->next = r->followers;
  r->followers = f;
  out->ops->start(out);
  follower_flush(f);
  return 0;
}

/* --------------------------------------------------------------------- runs */

static void arm(struct run *r, uint64_t ms) {
  struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)((ms % 1000) * 1000)};
  evtimer_add(r->timer, &tv);
}

static void unpause(struct run *r);
static bool must_wait_for_store(const struct run *r);

static void run_free(struct run *r) {
  while (r->followers != NULL)
    follower_finish(r->followers);
  run_model_stop(r);
  run_tool_stop(r);
  persist_run_last(r);
  if (r->ended) r->d->ended_bytes -= r->kept_bytes;
  r->d->live_bytes -= r->live_counted;
  unpause(r);
  if (r->session->running == r) r->session->running = NULL;
  agent_fini(&r->agent);
  turn_order_free(r->order);
  turn_buf_fini(&r->log);
  free(r->line_end);
  if (r->timer != NULL) event_free(r->timer);
  if (r->resume != NULL) event_free(r->resume);
  free(r);
}

/* Ended and kept for --retain seconds: then it goes, unless someone still reads
 * or the store has yet to commit its last lines (then it goes once it has). It
 * leaves the daemon's list at once (no route finds it any more: they read the
 * store) and is freed at the hand-over step (run_persist.c), never inside its own
 * timer's callback. */
static void run_release(struct run *r) {
  if (r->released) return; /* its timer was already due when it was trimmed */
  if (r->followers != NULL) {
    arm(r, 1000);
    return;
  }
  if (r->committed < r->n_events || r->in_flight > 0) {
    r->release_due = true; /* run_committed comes back here */
    return;
  }
  struct turnd *d = r->d;
  if (r->prev != NULL)
    r->prev->next = r->next;
  else
    d->runs = r->next;
  if (r->next != NULL) r->next->prev = r->prev;
  /* Retain timers fire in the order the runs ended: r is nearly always first. */
  struct run **q = &d->ended_first;
  while (*q != r)
    q = &(*q)->ended_next;
  *q = r->ended_next;
  if (d->ended_last == r) d->ended_last = NULL;
  if (d->ended_last == NULL)
    for (struct run *e = d->ended_first; e != NULL; e = e->ended_next)
      d->ended_last = e;
  idmap_del(&r->d->run_ids, r->id);
  evtimer_del(r->timer);
  r->released = true;
  /* Uncounted at once, so that run_trim releases no more than it must. */
  d->ended_bytes -= r->kept_bytes;
  r->kept_bytes = 0;
  r->next = r->d->closing;
  r->d->closing = r;
  persist_soon(r->d);
}

/* glibc's malloc keeps what is freed for reuse, and of a big turn's memory
 * (its reply, the message made of it, the store's copies) most stayed resident
 * for good: freed in the middle of the heap, or in another thread's arena. A
 * second after turns are released, what is free goes back to the system. */
#define TRIM_DELAY_MS 1000

static void on_trim(evutil_socket_t fd, short events, void *arg) {
  (void)fd;
  (void)events;
  struct turnd *d = arg;
  store_release_memory(d->store);
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

static void trim_soon(struct turnd *d) {
  if (d->trim_ev == NULL) {
    d->trim_ev = evtimer_new(d->base, on_trim, d);
    if (d->trim_ev == NULL) return;
  }
  if (evtimer_pending(d->trim_ev, NULL)) return;
  struct timeval tv = {TRIM_DELAY_MS / 1000, (TRIM_DELAY_MS % 1000) * 1000};
  evtimer_add(d->trim_ev, &tv);
}

void run_free_closing(struct turnd *d) {
  if (d->closing == NULL) return;
  while (d->closing != NULL) {
    struct run *r = d->closing;
    d->closing = r->next;
    run_free(r);
  }
  trim_soon(d);
}

static void on_timer(evutil_socket_t fd, short events, void *arg) {
  (void)fd;
  (void)events;
  struct run *r = arg;
  if (r->ended)
    run_release(r);
  else
    run_pump(r);
}

static void trim_log(struct run *r);

static void flush_followers(struct run *r) {
  struct follower *f = r->followers;
  while (f != NULL) {
    struct follower *next = f->next; /* flush may free f */
    follower_flush(f);
    f = next;
  }
}

void run_durable(struct run *r, uint64_t end_seq) {
  if (end_seq <= r->durable) return;
  r->durable = end_seq;
  flush_followers(r);
}

void run_committed(struct run *r, uint64_t end_seq) {
  if (r->in_flight == 0 && r->unstored_end > end_seq) end_seq = r->unstored_end;
  if (end_seq > r->committed) {
    r->committed = end_seq;
    if (end_seq > r->durable) r->durable = end_seq;
    flush_followers(r);
    trim_log(r);
  }
  if (r->paused && !must_wait_for_store(r)) {
    unpause(r);
    event_active(r->resume, 0, 0);
  }
  if (r->release_due && r->committed == r->n_events && r->in_flight == 0) {
    r->release_due = false;
    arm(r, 0); /* released from its timer, as ever */
  }
}

/* What an ended run holds: itself, its log and the index of its lines. */
static size_t kept_bytes(const struct run *r) {
  return sizeof *r + r->log.alloc + r->cap_lines * sizeof *r->line_end;
}

/* Counts an ended run's memory again, once it changed. */
static void recount(struct run *r) {
  r->d->ended_bytes -= r->kept_bytes;
  r->kept_bytes = kept_bytes(r);
  r->d->ended_bytes += r->kept_bytes;
}

/* Counts a live run's log in d->live_bytes again, once its size changed. */
static void live_recount(struct run *r) {
  if (r->ended) return;
  r->d->live_bytes -= r->live_counted;
  r->live_counted = r->log.alloc;
  r->d->live_bytes += r->live_counted;
}

static size_t live_limit(const struct turnd *d) {
  return (size_t)d->opt->live_memory_mib << 20;
}

/* Drops from memory the lines that are committed and that every reader has been
 * handed, but for readers far behind (READER_LAG_MAX), or any reader while live
 * turns hold more than --live-memory: those read what they lack from the
 * store. */
static void trim_log(struct run *r) {
  if (r->committed <= r->log_base_seq) return;
  /* The window may start at the first line not yet committed, and no later
   * than the first byte a reader close behind has yet to be handed. */
  size_t cut = r->line_end[r->committed - 1];
  size_t lag_from = cut > READER_LAG_MAX ? cut - READER_LAG_MAX : 0;
  bool tight = r->d->live_bytes >= live_limit(r->d);
  for (struct follower *f = r->followers; f != NULL && !tight; f = f->next)
    if (f->next_off != SIZE_MAX && f->next_off >= r->log_base &&
        f->next_off >= lag_from && f->next_off < cut)
      cut = f->next_off;
  /* ... on a line boundary: the last line end at or before cut. */
  uint64_t lo = r->log_base_seq, hi = r->committed; /* the line count is in [lo, hi] */
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo + 1) / 2; /* a seq count: lines before it */
    if (r->line_end[mid - 1] <= cut)
      lo = mid;
    else
      hi = mid - 1;
  }
  if (lo == r->log_base_seq) return;
  size_t drop = r->line_end[lo - 1] - r->log_base;
  /* What stays is moved to the front: worth it once half the window goes. */
  if (drop * 2 < r->log.len) return;
  memmove(r->log.data, r->log.data + drop, r->log.len - drop);
  r->log.len -= drop;
  r->log_base += drop;
  r->log_base_seq = lo;
  if (r->shed && !r->released) { /* it will not grow again: what it holds goes */
    (void)turn_buf_shrink(&r->log);
    recount(r);
  } else if (!r->ended && r->log.alloc >= LOG_SHRINK_MIN &&
             r->log.alloc / 4 > r->log.len) {
    (void)turn_buf_shrink(&r->log); /* out of memory: it stays as big */
    live_recount(r);
  }
}

/* An ended run keeps only its lines, for readers who come back: its agent
 * (arena, buffers, conversation) and order checker go, and the log and its
 * index give back what they had grown for. A reply's log is reserved six times
 * over for escapes, and the agent is some 20 KiB more, so without this the
 * ended runs' memory was many times what RETAIN_BYTES counted. Called once the
 * agent has nothing left to hand over (its last messages are taken). */
static void run_shed(struct run *r) {
  if (!r->ended || r->shed) return;
  r->shed = true;
  r->approvals_asked = r->agent.approvals_asked;
  agent_fini(&r->agent);
  turn_order_free(r->order);
  r->order = NULL;
  (void)turn_buf_shrink(&r->log); /* out of memory: it stays as big */
  if (r->n_events > 0 && r->n_events < r->cap_lines) {
    uint32_t *fit = realloc(r->line_end, r->n_events * sizeof *fit);
    if (fit != NULL) {
      r->line_end = fit;
      r->cap_lines = r->n_events;
    }
  }
  recount(r);
}

/* The end is in (or the run gave up): it joins the ended runs, oldest first. */
static void mark_ended(struct run *r) {
  run_model_stop(r); /* a call still streaming is torn down */
  run_tool_stop(r);  /* and a tool still running is killed */
  r->d->live_bytes -= r->live_counted;
  r->live_counted = 0;
  unpause(r);
  r->ended = true;
  r->kept_bytes = 0;
  recount(r);
  r->ended_next = NULL;
  if (r->d->ended_last != NULL)
    r->d->ended_last->ended_next = r;
  else
    r->d->ended_first = r;
  r->d->ended_last = r;
}

/* The run can keep no more: it ends here, its readers get what there is. */
static void run_give_up(struct run *r) {
  fprintf(stderr, "turnd: turn %s: an event could not be kept; the turn ends\n", r->id);
  persist_run_dirty(r); /* what it kept is stored and shown, so it can be released */
  r->gave_up = true;    /* the store keeps it unended: a restart ends it properly */
  mark_ended(r);
  if (r->session->running == r) r->session->running = NULL;
  while (r->followers != NULL)
    follower_finish(r->followers);
}

/* Encodes ev as the run's next line and checks it. Returns TURN_OK, or (nothing
 * kept) TURN_E_TOOBIG when the line would take the log past its hard cap, or
 * another error (out of memory). */
static int keep(struct run *r, turn_event *ev) {
  ev->seq = r->n_events;
  if (r->n_events == r->cap_lines) {
    size_t cap = r->cap_lines == 0 ? 64 : r->cap_lines * 2;
    uint32_t *grown = realloc(r->line_end, cap * sizeof *grown);
    if (grown == NULL) return TURN_E_NOMEM;
    r->line_end = grown;
    r->cap_lines = cap;
  }
  size_t saved = r->log.len;
  int rv = turn_event_encode(ev, &r->log);
  if (rv == TURN_OK) rv = turn_buf_append(&r->log, "\n", 1);
  if (rv != TURN_OK) {
    r->log.len = saved;
    return rv;
  }
  turn_error err;
  if (turn_order_step(r->order, ev, &err) != TURN_OK) {
    /* A bug in turnd: say so; the line still goes out, so tests that check the
     * stream with turncheck see it. */
    char msg[200];
    turn_error_format(&err, msg, sizeof msg);
    fprintf(stderr, "turnd: bug: turn %s seq %llu: %s\n", r->id,
            (unsigned long long)ev->seq, msg);
  }
  /* The turn's bytes stay under RUN_LOG_CAP < 4 GiB (run_append's soft cap). */
  r->line_end[r->n_events++] = (uint32_t)(r->log_base + r->log.len);
  return TURN_OK;
}

/* Gives ev its seq, keeps it and sends it to every follower. A turn that grows
 * past RUN_LOG_SOFT_CAP, or whose next event would take it past RUN_LOG_CAP,
 * ends with an error instead, so no event is ever lost from the middle: that
 * event is not kept, and the agent closes the calls readers saw open, then
 * says the error, then ends (agent_fail), in the slack above the soft cap. */
static void run_append(struct run *r, turn_event *ev) {
  if (r->ended) return;
  int rv = TURN_E_TOOBIG;
  if (r->log_base + r->log.len <= RUN_LOG_SOFT_CAP || ev->type == TURN_EV_END ||
      agent_failed(&r->agent))
    rv = keep(r, ev);
  if (rv == TURN_E_TOOBIG && ev->type != TURN_EV_END && !agent_failed(&r->agent)) {
    agent_fail(&r->agent, "the turn grew past the size turnd keeps", true);
    return; /* run_pump steps the agent on to its end */
  } else if (rv != TURN_OK) {
    run_give_up(r);
    return;
  }
  persist_run_dirty(r); /* its readers get it once it is journaled */
  if (ev->type == TURN_EV_END) {
    mark_ended(r);
    if (r->session->running == r) r->session->running = NULL;
    r->session->updated_ms = turnd_now_ms();
    persist_session(r->d, r->session);
  }
}

/* Ended runs past RETAIN_BYTES go, oldest first, except those still being read,
 * those whose last lines are not committed yet and keep (the one just ended). */
static void run_trim(struct turnd *d, struct run *keep_run) {
  while (d->ended_bytes > RETAIN_BYTES) {
    struct run *oldest = d->ended_first;
    while (oldest != NULL &&
           (oldest->followers != NULL || oldest->committed < oldest->n_events ||
            oldest->in_flight > 0 || oldest->released || oldest == keep_run))
      oldest = oldest->ended_next;
    if (oldest == NULL) return;
    run_release(oldest);
  }
}

/* Whether r's agent can be left between two steps and resumed later without
 * losing anything: nothing fed to it from outside (a model's event, a tool's
 * line) waits in it to be taken. */
static bool inbox_empty(const struct run *r) {
  return !r->agent.has_inbox && !r->agent.tool_has_event;
}

/* Whether r must wait for the store before it says more: too much of it is not
 * committed (those lines cannot leave memory), or live turns hold more than
 * --live-memory. Only a turn whose agent would go on by itself waits (a
 * script's): while a model call or a tool runs, what they send must be taken
 * as it comes (a model's stream is slow beside the store). */
static bool must_wait_for_store(const struct run *r) {
  if (r->call != NULL || r->tool != NULL || !inbox_empty(r) || r->agent.cancelled)
    return false; /* a cancelled turn has only its end to say */
  /* Only with lines of its own on the way to the store: their commit is what
   * wakes it (run_committed, or the reap's run_resume_paused). */
  size_t committed_end = r->committed == 0 ? 0 : r->line_end[r->committed - 1];
  size_t uncommitted = r->log_base + r->log.len - committed_end;
  if (uncommitted == 0) return false;
  size_t grown = r->log.alloc > r->live_counted ? r->log.alloc - r->live_counted : 0;
  return uncommitted >= RUN_UNCOMMITTED_MAX ||
         r->d->live_bytes + grown >= live_limit(r->d);
}

static void pause_for_store(struct run *r) {
  if (!r->paused) {
    r->paused = true;
    r->next_paused = r->d->paused;
    r->d->paused = r;
  }
  r->d->commit_urgent = true; /* the writer commits without its group delay */
  persist_soon(r->d);
}

static void unpause(struct run *r) {
  if (!r->paused) return;
  struct run **p = &r->d->paused;
  while (*p != r)
    p = &(*p)->next_paused;
  *p = r->next_paused;
  r->paused = false;
}

void run_resume_paused(struct turnd *d) {
  struct run **p = &d->paused;
  while (*p != NULL) {
    struct run *r = *p;
    if (must_wait_for_store(r)) {
      p = &r->next_paused;
      continue;
    }
    *p = r->next_paused;
    r->paused = false;
    event_active(r->resume, 0, 0);
  }
}

static void on_resume(evutil_socket_t fd, short events, void *arg) {
  (void)fd;
  (void)events;
  struct run *r = arg;
  if (!r->ended && !r->paused) run_pump(r);
}

/* Steps the agent within the budget (see run_pump). */
static void pump(struct run *r) {
  size_t start = r->log_base + r->log.len;
  bool out_of_budget = false;
  for (int steps = 0; !r->ended; steps++) {
    if (steps == PUMP_STEPS ||
        (r->log_base + r->log.len - start >= PUMP_BYTES && inbox_empty(r))) {
      out_of_budget = true;
      break;
    }
    if (must_wait_for_store(r)) {
      pause_for_store(r);
      return;
    }
    struct agent_action act;
    agent_next(&r->agent, turnd_now_ms(), &act);
    struct convo_message m;
    while (agent_take_message(&r->agent, &m))
      persist_message(r, &m);
    persist_message_front(r);
    switch (act.kind) {
    case AGENT_EMIT:
      run_append(r, &act.ev);
      break;
    case AGENT_WAIT:
      if (act.wait_ms == 0) break;
      agent_idle(&r->agent);
      arm(r, act.wait_ms);
      return;
    case AGENT_AWAIT:
      agent_idle(&r->agent);
      arm(r, act.wait_ms);
      return;
    case AGENT_MODEL_CALL:
      run_model_call(r); /* its events come back through run_pump */
      break;
    case AGENT_RUN_TOOL:
      run_tool_start(r, act.call, act.tool); /* its events come back through run_pump */
      break;
    case AGENT_AWAIT_TOOL:
      agent_idle(&r->agent);
      return;
    case AGENT_AWAIT_MODEL:
      if (act.wait_ms > 0) arm(r, act.wait_ms); /* coalesced text falls due */
      agent_idle(&r->agent);
      return;
    case AGENT_END:
      return;
    }
  }
  if (r->ended) {
    run_shed(r);
    arm(r, (uint64_t)r->d->opt->retain_s * 1000);
    run_trim(r->d, r);
  } else if (out_of_budget) {
    /* Not at the stream's priority: a turn that always has more to say would
     * keep new requests out for as long as it lasts. */
    event_active(r->resume, 0, 0);
  }
}

void run_pump(struct run *r) {
  pump(r);
  live_recount(r);
}

struct run *run_start(struct turnd *d, struct session *s, const char *text) {
  struct run *r = calloc(1, sizeof *r);
  if (r == NULL) return NULL;
  /* The time first: the store's tables are keyed by turn id, and ids that grow
   * with time make its inserts land on the same few pages instead of all over
   * the tree (a commit writes every page it touched). The random part keeps
   * turns of the same millisecond apart. */
  char hex[11];
  if (turnd_random_hex(hex, 5) != 0) {
    free(r);
    return NULL;
  }
  snprintf(r->id, sizeof r->id, "t-%012llx%s", (unsigned long long)turnd_now_ms(), hex);
  r->d = d;
  r->session = s;
  bool busy = s->running != NULL;
  bool locked = d->guard_view.locked;
  r->order = turn_order_new(NULL);
  r->timer = evtimer_new(d->base, on_timer, r);
  r->resume = event_new(d->base, -1, 0, on_resume, r);
  turn_buf_init(&r->log, RUN_LOG_CAP, NULL);
  /* Its timer lets coalesced text out: part of the stream (loop_prio.h). */
  if (r->order == NULL || r->timer == NULL || r->resume == NULL ||
      event_priority_set(r->timer, LOOP_PRIO_STREAM) != 0 ||
      event_priority_set(r->resume, LOOP_PRIO_OTHER) != 0 ||
      agent_init(&r->agent, d->model.external ? NULL : script_pick(&d->script, text),
                 text, r->id, s->id, d->opt->approval_timeout_s) != 0) {
    turn_order_free(r->order);
    if (r->timer != NULL) event_free(r->timer);
    if (r->resume != NULL) event_free(r->resume);
    free(r);
    return NULL;
  }
  if (d->model.external) agent_use_external_model(&r->agent);
  struct agent_limits limits = {d->opt->max_model_calls, d->opt->max_total_tokens,
                                d->opt->coalesce_ms};
  agent_set_limits(&r->agent, &limits);
  agent_set_tools(&r->agent, &d->toolset);
  agent_set_guard(&r->agent, &d->guard_view);
  if (idmap_put(&d->run_ids, r->id, r) != 0) {
    agent_fini(&r->agent);
    turn_order_free(r->order);
    event_free(r->timer);
    event_free(r->resume);
    free(r);
    return NULL;
  }
  r->next = d->runs;
  if (d->runs != NULL) d->runs->prev = r;
  d->runs = r;
  persist_turn_started(r);
  if (busy || locked) {
    /* Refused: the running turn is not disturbed, or the owner is away. This
     * one ends at once, and nothing of it reaches the model. */
    turn_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = TURN_EV_TURN;
    ev.turn.turn = turn_str_c(r->id);
    ev.turn.session = turn_str_c(s->id);
    run_append(r, &ev);
    if (locked) {
      memset(&ev, 0, sizeof ev);
      ev.type = TURN_EV_GUARD;
      ev.guard.action = turn_str_c("refused");
      ev.guard.message = turn_str_c("The backend is locked.");
      run_append(r, &ev);
    }
    memset(&ev, 0, sizeof ev);
    ev.type = TURN_EV_END;
    ev.end.stop_reason = locked ? TURN_STOP_LOCKED : TURN_STOP_BUSY;
    run_append(r, &ev);
    run_shed(r);
    arm(r, (uint64_t)d->opt->retain_s * 1000);
    run_trim(d, r);
    return r;
  }
  s->running = r;
  run_pump(r);
  return r;
}

struct run *run_find(struct turnd *d, const char *id) {
  return idmap_get(&d->run_ids, id);
}

int run_request_turn(const char *request, char *turn, size_t cap) {
  const char *dot = strrchr(request, '.');
  if (dot == NULL || (size_t)(dot - request) >= cap) return -1;
  memcpy(turn, request, (size_t)(dot - request));
  turn[dot - request] = '\0';
  return 0;
}

struct run *run_of_request(struct turnd *d, const char *request) {
  char id[sizeof d->runs->id];
  return run_request_turn(request, id, sizeof id) == 0 ? run_find(d, id) : NULL;
}

void run_cancel(struct run *r) {
  if (r->ended) return;
  agent_cancel(&r->agent, TURN_STOP_CANCELLED);
  evtimer_del(r->timer);
  run_pump(r);
}

int run_decide(struct run *r, const char *request, turn_decision d) {
  if (!r->ended && agent_decide(&r->agent, request, d, turnd_now_ms()) == 0) {
    evtimer_del(r->timer);
    run_pump(r);
    return 0;
  }
  /* Ours but not waiting: an approval this turn asked for earlier. */
  const char *a = strrchr(request, '.');
  if (a != NULL && a[1] == 'a' && a[2] >= '1' && a[2] <= '9') {
    char *end;
    unsigned long k = strtoul(a + 2, &end, 10);
    if (*end == '\0' && k <= (r->shed ? r->approvals_asked : r->agent.approvals_asked))
      return 1;
  }
  return -1;
}

enum agent_approval run_approval_of(struct run *r, const char *request) {
  return r->ended ? AGENT_APPROVAL_UNKNOWN
                  : agent_approval_of(&r->agent, request, turnd_now_ms());
}

int run_step_up(struct run *r, const char *request, bool passed) {
  if (r->ended || agent_step_up(&r->agent, request, passed, turnd_now_ms()) != 0)
    return -1;
  if (passed) evtimer_del(r->timer); /* the approval's timeout */
  run_pump(r);
  return 0;
}

void run_drop_followers(struct turnd *d, bool (*still_paired)(void *ctx, int64_t device),
                        void *ctx) {
  for (struct run *r = d->runs; r != NULL; r = r->next) {
    for (struct follower *f = r->followers, *next; f != NULL; f = next) {
      next = f->next;
      /* The answer ends without the turn's end: to the client, a dropped
       * connection, and its re-attach gets 401. */
      if (!still_paired(ctx, f->device)) follower_finish(f);
    }
  }
}

void run_interrupt_all(struct turnd *d) {
  for (struct run *r = d->runs; r != NULL; r = r->next) {
    if (r->ended) continue;
    evtimer_del(r->timer);
    agent_cancel(&r->agent, TURN_STOP_INTERRUPT);
    run_pump(r);
  }
}

void run_free_all(struct turnd *d) {
  run_interrupt_all(d);
  run_free_closing(d);
  while (d->runs != NULL) {
    struct run *r = d->runs;
    d->runs = r->next;
    run_free(r);
  }
  d->ended_first = d->ended_last = NULL;
  idmap_fini(&d->run_ids);
  if (d->trim_ev != NULL) event_free(d->trim_ev);
  d->trim_ev = NULL;
}
