/* load_run: slots and their turns. Each of the `concurrency` slots runs turns one
 * after another, on one connection (load_conn) for as long as turnd keeps it
 * alive. Every read lands in one 64 KiB buffer, so the generator touches each byte
 * once and keeps nothing of a stream but the head of its current line. */
#include "load_run.h"

#include "load_conn.h"
#include "load_proc.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define READ_BYTES   (64u * 1024u) /* turnd hands a reader 64 KiB slices */
#define ERRORS_SHOWN 5             /* failures described on stderr; the rest counted */

struct run;

struct conn {
  struct run *run;       /* the run it belongs to */
  struct load_conn conn; /* the slot's connection, kept alive between turns */
  bool in_turn;        /* a turn is assigned to the slot; false while on the idle stack */
  bool pending;        /* counted in run->pending: no byte of the answer yet */
  bool live;           /* counted in run->live: a 200 answer is streaming */
  uint64_t t_start_ns; /* the turn was assigned: its timeout counts from here */
  uint64_t t_first_ns; /* its first body byte; 0 until then */
  uint64_t t_body_ns;  /* the last read that brought body bytes */
  uint64_t max_gap_ns; /* the longest time between two such reads */
  struct load_lines lines;
};

struct run {
  const struct load_config *cfg; /* borrowed from the caller */
  struct load_result *res;       /* filled as turns end */
  struct event_base *base;
  struct load_client client; /* the slots' connections share it */
  struct event *tick;        /* every sample_ms: memory, timeouts, progress */
  struct conn *conns;        /* cfg->concurrency slots */
  unsigned *idle;            /* slots without a turn, a stack of indexes */
  unsigned n_idle;
  unsigned pending;       /* requests sent (or connecting) without an answer byte */
  unsigned live;          /* 200 answers streaming now */
  unsigned hold;          /* live turns that make the hold: min(concurrency, turns) */
  uint64_t done;          /* turns ended, well or not */
  uint64_t t_begin_ns;    /* the first request */
  uint64_t t_end_ns;      /* the last answer */
  uint64_t t_read_ns;     /* when the bytes being fed were read */
  uint64_t t_progress_ns; /* the last progress line */
  unsigned errors_shown;  /* failures described on stderr so far */
  bool scheduling;        /* schedule() is on the stack */
  char buf[READ_BYTES];   /* every read lands here; nothing is kept past the feed */
};

const char *load_run_strerror(enum load_run_error e) {
  switch (e) {
#define LOAD_RUN_MSG(name, msg) \
  case LOAD_RUN_E_##name:       \
    return msg;
    LOAD_RUN_ERRORS(LOAD_RUN_MSG)
#undef LOAD_RUN_MSG
  case LOAD_RUN_E__COUNT:
    break;
  }
  return "unknown error";
}

static void schedule(struct run *run);

/* The slot's turn is over (e < 0: it ended well). Records it, hands the slot back
 * and starts what may start now. */
static void turn_end(struct conn *c, int e) {
  struct run *run = c->run;
  struct load_result *res = run->res;
  uint64_t now = load_conn_now_ns();
  if (c->pending) run->pending--;
  if (c->live) run->live--;
  c->pending = c->live = false;
  int status = c->conn.answer.status;
  if (e < 0 && status != 200) e = LOAD_RUN_E_STATUS;
  enum load_lines_fault fault = LOAD_LINES_OK;
  if (e < 0) {
    fault = load_lines_finish(&c->lines);
    if (fault != LOAD_LINES_OK) e = LOAD_RUN_E_STREAM;
  }
  res->events += c->lines.events;
  res->body_bytes += c->lines.bytes;
  if (status == 200 && c->t_first_ns != 0) {
    res->ttfb_ns[res->n_ttfb++] = c->t_first_ns - c->conn.t_send_ns;
    res->gap_ns[res->n_turn] = c->max_gap_ns;
    res->turn_ns[res->n_turn++] = now - c->conn.t_send_ns;
  }
  if (e < 0) {
    if (res->ok == 0 || c->lines.events < res->min_events)
      res->min_events = c->lines.events;
    if (c->lines.events > res->max_events) res->max_events = c->lines.events;
    res->ok++;
  } else {
    res->errors[e]++;
    if (e == LOAD_RUN_E_STREAM) res->faults[fault]++;
    if (e == LOAD_RUN_E_STATUS && res->bad_status == 0) res->bad_status = status;
    if (run->errors_shown++ < ERRORS_SHOWN) {
      char check[200] = "";
      if (fault == LOAD_LINES_CHECK)
        turn_error_format(&c->lines.check_err, check, sizeof check);
      fprintf(stderr, "bench-load: a turn failed: %s%s%s%s (status %d, %llu events)\n",
              load_run_strerror((enum load_run_error)e),
              e == LOAD_RUN_E_STREAM ? ": " : "",
              e == LOAD_RUN_E_STREAM ? load_lines_strfault(fault) : "",
              check[0] != '\0' ? check : "", status, (unsigned long long)c->lines.events);
    }
  }
  load_lines_fini(&c->lines);
  c->in_turn = false;
  /* load_conn closed it already unless turnd keeps it alive */
  if (e >= 0 || !run->cfg->keep_alive) load_conn_close(&c->conn);
  run->idle[run->n_idle++] = (unsigned)(c - run->conns);
  if (++run->done == run->cfg->turns) {
    run->t_end_ns = now;
    event_base_loopbreak(run->base);
    return;
  }
  schedule(run);
}

/* Starts the slot's next turn on its kept-alive connection or a new one. */
static void turn_start(struct conn *c) {
  struct run *run = c->run;
  run->res->started++;
  c->in_turn = true;
  c->pending = true;
  run->pending++;
  c->t_start_ns = load_conn_now_ns();
  c->t_first_ns = c->t_body_ns = c->max_gap_ns = 0;
  if (load_lines_init(&c->lines, run->cfg->full_check) != 0) {
    fprintf(stderr, "bench-load: out of memory\n");
    exit(1);
  }
  load_conn_send(&c->conn, run->cfg->request, run->cfg->request_len);
}

/* Starts turns on idle slots while some are left to run, keeping at most
 * max_pending requests without an answer: a burst of a thousand connects would
 * overflow turnd's accept backlog and measure SYN retransmits, not turnd. */
static void schedule(struct run *run) {
  /* A turn that fails at once (no socket left) ends inside turn_start and calls
   * us again: the outer loop goes on instead, so the stack stays flat. */
  if (run->scheduling) return;
  run->scheduling = true;
  while (run->n_idle > 0 && run->res->started < run->cfg->turns &&
         run->pending < run->cfg->max_pending)
    turn_start(&run->conns[run->idle[--run->n_idle]]);
  run->scheduling = false;
}

static void turn_fail(struct conn *c, enum load_run_error e) {
  load_conn_close(&c->conn);
  turn_end(c, (int)e);
}

static void on_opened(void *ctx, int fd) {
  (void)fd;
  struct conn *c = ctx;
  c->run->res->connections++;
}

static void on_received(void *ctx) {
  struct conn *c = ctx;
  struct run *run = c->run;
  if (c->pending) {
    c->pending = false;
    run->pending--;
  }
  run->t_read_ns = load_conn_now_ns();
}

static void on_body(void *ctx, const char *data, size_t len) {
  struct conn *c = ctx;
  if (c->conn.answer.status != 200) return; /* an error's JSON: no events in it */
  uint64_t t = c->run->t_read_ns;
  if (c->t_first_ns == 0) c->t_first_ns = t;
  if (c->t_body_ns != 0 && t - c->t_body_ns > c->max_gap_ns)
    c->max_gap_ns = t - c->t_body_ns;
  c->t_body_ns = t;
  load_lines_feed(&c->lines, data, len);
}

static void on_fed(void *ctx, enum load_answer_state st) {
  struct conn *c = ctx;
  struct run *run = c->run;
  if (!c->live && c->conn.answer.status == 200) {
    c->live = true;
    if (++run->live > run->res->max_live) run->res->max_live = run->live;
  }
  if (st != LOAD_ANSWER_ERROR && st != LOAD_ANSWER_DONE)
    schedule(run); /* an answer began: a pending place is free */
}

static void on_end(void *ctx, enum load_conn_end e) {
  struct conn *c = ctx;
  switch (e) {
  case LOAD_CONN_DONE:
    turn_end(c, -1);
    break;
  case LOAD_CONN_E_STALE: /* no failure of the turn: it goes again on a new one */
    c->run->res->retries++;
    load_conn_send(&c->conn, c->run->cfg->request, c->run->cfg->request_len);
    break;
  case LOAD_CONN_E_NOMEM:
    fprintf(stderr, "bench-load: out of memory\n");
    exit(1);
  case LOAD_CONN_E_SOCKET:
  case LOAD_CONN_E_CONNECT:
    turn_end(c, LOAD_RUN_E_CONNECT);
    break;
  case LOAD_CONN_E_SEND:
  case LOAD_CONN_E_CLOSED:
    turn_end(c, LOAD_RUN_E_CLOSED);
    break;
  case LOAD_CONN_E_HTTP:
    turn_end(c, LOAD_RUN_E_HTTP);
    break;
  }
}

static const struct load_conn_ops conn_ops = {.opened = on_opened,
                                              .received = on_received,
                                              .body = on_body,
                                              .fed = on_fed,
                                              .end = on_end};

static void sample_memory(struct run *run) {
  uint64_t rss, hwm;
  if (run->cfg->pid == 0 || load_proc_mem(run->cfg->pid, &rss, &hwm) != 0) return;
  struct load_result *res = run->res;
  if (rss > res->rss_peak_kib) res->rss_peak_kib = rss;
  if (run->live >= run->hold && rss > res->rss_hold_kib) res->rss_hold_kib = rss;
}

static void on_tick(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  struct run *run = arg;
  sample_memory(run);
  uint64_t now = load_conn_now_ns();
  uint64_t limit = (uint64_t)run->cfg->timeout_ms * 1000000u;
  for (unsigned i = 0; i < run->cfg->concurrency; i++) {
    struct conn *c = &run->conns[i];
    if (c->in_turn && now - c->t_start_ns > limit) turn_fail(c, LOAD_RUN_E_TIMEOUT);
  }
  if (run->cfg->progress && now - run->t_progress_ns >= 1000000000u) {
    run->t_progress_ns = now;
    uint64_t failed = 0;
    for (int e = 0; e < LOAD_RUN_E__COUNT; e++)
      failed += run->res->errors[e];
    fprintf(stderr,
            "bench-load: %.1f s: %llu of %llu turns ended, %u live, %llu failed\n",
            (double)(now - run->t_begin_ns) / 1e9, (unsigned long long)run->done,
            (unsigned long long)run->cfg->turns, run->live, (unsigned long long)failed);
  }
}

static double cpu_self_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void load_result_free(struct load_result *res) {
  free(res->ttfb_ns);
  free(res->turn_ns);
  free(res->gap_ns);
  res->ttfb_ns = res->turn_ns = res->gap_ns = NULL;
}

int load_run(const struct load_config *cfg, struct load_result *res) {
  memset(res, 0, sizeof *res);
  res->turnd_cpu_s = -1;
  struct run *run = calloc(1, sizeof *run);
  if (run == NULL) return -1;
  run->cfg = cfg;
  run->res = res;
  run->hold = cfg->turns < cfg->concurrency ? (unsigned)cfg->turns : cfg->concurrency;
  run->base = event_base_new();
  run->client = (struct load_client){.base = run->base,
                                     .addr = cfg->addr,
                                     .addr_len = cfg->addr_len,
                                     .ops = &conn_ops,
                                     .buf = run->buf,
                                     .buf_cap = sizeof run->buf};
  run->conns = calloc(cfg->concurrency, sizeof *run->conns);
  run->idle = calloc(cfg->concurrency, sizeof *run->idle);
  res->ttfb_ns = calloc(cfg->turns, sizeof *res->ttfb_ns);
  res->turn_ns = calloc(cfg->turns, sizeof *res->turn_ns);
  res->gap_ns = calloc(cfg->turns, sizeof *res->gap_ns);
  if (run->base != NULL) run->tick = event_new(run->base, -1, EV_PERSIST, on_tick, run);
  if (run->base == NULL || run->tick == NULL || run->conns == NULL || run->idle == NULL ||
      res->ttfb_ns == NULL || res->turn_ns == NULL || res->gap_ns == NULL) {
    if (run->tick != NULL) event_free(run->tick);
    if (run->base != NULL) event_base_free(run->base);
    free(run->conns);
    free(run->idle);
    free(run);
    load_result_free(res);
    return -1;
  }
  /* The stack pops slot 0 first, so the slots start in order. */
  for (unsigned i = 0; i < cfg->concurrency; i++) {
    run->conns[i].run = run;
    load_conn_init(&run->conns[i].conn, &run->client, &run->conns[i]);
    run->idle[i] = cfg->concurrency - 1 - i;
  }
  run->n_idle = cfg->concurrency;

  uint64_t hwm;
  double turnd_before = 0;
  res->mem_known =
      cfg->pid != 0 && load_proc_mem(cfg->pid, &res->rss_before_kib, &hwm) == 0;
  bool cpu_known = cfg->pid != 0 && load_proc_cpu(cfg->pid, &turnd_before) == 0;
  double self_before = cpu_self_s();
  struct timeval tick = {(time_t)(cfg->sample_ms / 1000),
                         (suseconds_t)(cfg->sample_ms % 1000) * 1000};
  event_add(run->tick, &tick);
  run->t_begin_ns = run->t_progress_ns = load_conn_now_ns();
  if (cfg->turns > 0) {
    schedule(run);
    event_base_dispatch(run->base);
  } else {
    run->t_end_ns = run->t_begin_ns;
  }
  res->wall_s = (double)(run->t_end_ns - run->t_begin_ns) / 1e9;
  res->self_cpu_s = cpu_self_s() - self_before;
  double turnd_after;
  if (cpu_known && load_proc_cpu(cfg->pid, &turnd_after) == 0)
    res->turnd_cpu_s = turnd_after - turnd_before;
  if (res->mem_known) {
    res->mem_known =
        load_proc_mem(cfg->pid, &res->rss_after_kib, &res->hwm_after_kib) == 0;
  }

  for (unsigned i = 0; i < cfg->concurrency; i++)
    load_conn_close(&run->conns[i].conn);
  event_free(run->tick);
  event_base_free(run->base);
  free(run->conns);
  free(run->idle);
  free(run);
  return 0;
}
