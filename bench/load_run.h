/* load_run: one load run against a running turnd: keeps `concurrency` turns open at
 * once until `turns` have ended, on one libevent loop, and collects what the report
 * needs: counts, every first-byte and whole-turn time, and turnd's memory and CPU
 * sampled through /proc. The run does all the I/O; load.c only reads options and
 * prints. */
#ifndef BENCH_LOAD_RUN_H
#define BENCH_LOAD_RUN_H

#include "load_lines.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Why a turn failed; a turn counts once, under its first failure. */
#define LOAD_RUN_ERRORS(X)                                        \
  X(CONNECT, "could not connect")                                 \
  X(STATUS, "answered with a status other than 200")              \
  X(HTTP, "answer was not HTTP/1.1 this client reads")            \
  X(CLOSED, "connection closed or reset before the answer's end") \
  X(TIMEOUT, "turn took longer than --timeout")                   \
  X(STREAM, "stream failed the line check")

enum load_run_error {
#define LOAD_RUN_ENUM(name, msg) LOAD_RUN_E_##name,
  LOAD_RUN_ERRORS(LOAD_RUN_ENUM)
#undef LOAD_RUN_ENUM
      LOAD_RUN_E__COUNT
};

struct load_config {
  struct sockaddr_storage addr; /* turnd's address */
  socklen_t addr_len;
  const char *request; /* the whole HTTP request, sent as is for every turn; borrowed */
  size_t request_len;
  uint64_t turns;       /* turns to run in all */
  unsigned concurrency; /* turns open at once */
  unsigned max_pending; /* requests in flight without an answer byte yet */
  bool keep_alive;      /* reuse a connection for the slot's next turn */
  bool full_check;      /* every line through libturn's reader and checker */
  unsigned timeout_ms;  /* a turn taking longer fails */
  unsigned sample_ms;   /* how often turnd's memory is read */
  pid_t pid;            /* turnd's pid, or 0: no memory or CPU figures */
  bool progress;        /* a line on stderr every second */
};

struct load_result {
  uint64_t started;                      /* turns sent at least once */
  uint64_t ok;                           /* turns that ended well */
  uint64_t errors[LOAD_RUN_E__COUNT];    /* failed turns by first failure */
  uint64_t faults[LOAD_LINES_NOMEM + 1]; /* STREAM errors by fault */
  int bad_status;                        /* the first status other than 200 */
  uint64_t events;                       /* event lines received in all */
  uint64_t body_bytes;                   /* NDJSON bytes received in all */
  uint64_t min_events, max_events;       /* per turn that ended well */
  uint64_t connections;                  /* connections opened */
  uint64_t retries;                      /* turns re-sent: kept-alive conn gone */
  unsigned max_live;                     /* most 200 answers streaming at once */
  uint64_t *ttfb_ns;                     /* request sent -> first body byte */
  uint64_t *turn_ns;                     /* request sent -> answer complete */
  uint64_t *gap_ns;                      /* the longest wait between two reads of
                                            the answer's body: a follower's stall */
  size_t n_ttfb, n_turn;                 /* entries used, one per 200 answer */
  double wall_s;                         /* first request to last answer */
  double self_cpu_s;                     /* the generator's CPU time */
  double turnd_cpu_s;                    /* turnd's CPU time in the run; < 0 unknown */
  bool mem_known;                        /* the memory figures below are set */
  uint64_t rss_before_kib;               /* VmRSS before the first request */
  uint64_t rss_peak_kib;                 /* highest VmRSS sampled in the run */
  uint64_t rss_hold_kib;                 /* highest while every slot streamed; 0 none */
  uint64_t rss_after_kib;                /* VmRSS once every turn had ended */
  uint64_t hwm_after_kib;                /* VmHWM then: the peak between samples too */
};

/* Runs the load described by cfg (borrowed) and fills *res, which the caller
 * frees with load_result_free. Returns 0, or -1 when the run could not be set up
 * (out of memory, no event loop), then *res holds nothing to free. Failed turns
 * are counted in *res, not returned. */
int load_run(const struct load_config *cfg, struct load_result *res);
void load_result_free(struct load_result *res);
/* The message of an error. */
const char *load_run_strerror(enum load_run_error e);

#endif
