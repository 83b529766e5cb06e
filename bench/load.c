/* bench-load: a load generator for a running turnd. It keeps C turns streaming at
 * once (POST /api/turns) until N have ended, counts and checks every event line of
 * every stream, and reports events/s, time to first byte and, given turnd's pid,
 * turnd's memory per live turn. This file reads the options and prints the report;
 * load_run.c does the run. Exit status: 0 when every turn ended well, 1 if not. */
#include "load_args.h"
#include "load_conn.h"
#include "load_run.h"
#include "load_stats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIB_PER_MIB 1024.0
#define FDS_SPARE   64 /* descriptors beyond one per slot: stdio, the loop, /proc */

static const char usage[] =
    "usage: bench-load [--url http://HOST:PORT] [--turns N] [--concurrency C]\n"
    "                  [--text TEXT] [--pid PID] [options]\n"
    "  --url          turnd's address (default http://127.0.0.1:8080)\n"
    "  --path         the route that starts a turn (default /api/turns)\n"
    "  --turns        turns to run in all (default 1000)\n"
    "  --concurrency  turns open at once, one connection each (default 100)\n"
    "  --text         the user's text of every turn (default \"hello\")\n"
    "  --pid          turnd's pid: report its memory (VmRSS, VmHWM) and CPU time\n"
    "  --sample-ms    how often turnd's memory is read (default 20)\n"
    "  --timeout      seconds a turn may take before it counts as failed (default 60)\n"
    "  --max-pending  requests in flight without an answer yet (default 100)\n"
    "  --no-keepalive a new connection for every turn\n"
    "  --check        also parse every line with libturn's reader and order checker\n"
    "  --progress     a progress line on stderr every second\n"
    "  --kv FILE      also write the figures as key=value lines to FILE\n"
    "  --label TEXT   a title for the report\n"
    "The environment's TURN_TOKEN, when set, is sent as the bearer token.\n";

struct options {
  const char *url;
  const char *path;
  const char *text;
  const char *kv_path;
  const char *label;
  char host[256];
  char port[8];
  struct load_config cfg;
};

/* Returns false with a message on stderr; exits 0 on --help. */
static bool parse_options(struct options *o, int argc, char **argv) {
  memset(o, 0, sizeof *o);
  o->url = "http://127.0.0.1:8080";
  o->path = "/api/turns";
  o->text = "hello";
  o->cfg.turns = 1000;
  o->cfg.concurrency = 100;
  o->cfg.max_pending = 100;
  o->cfg.keep_alive = true;
  o->cfg.timeout_ms = 60000;
  o->cfg.sample_ms = 20;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    uint64_t n;
    bool takes = true;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage, stdout);
      exit(0);
    } else if (strcmp(a, "--no-keepalive") == 0) {
      o->cfg.keep_alive = false;
      takes = false;
    } else if (strcmp(a, "--check") == 0) {
      o->cfg.full_check = true;
      takes = false;
    } else if (strcmp(a, "--progress") == 0) {
      o->cfg.progress = true;
      takes = false;
    } else if (v == NULL) {
      fprintf(stderr, "bench-load: %s needs a value\n", a);
      return false;
    } else if (strcmp(a, "--url") == 0) {
      o->url = v;
    } else if (strcmp(a, "--path") == 0) {
      o->path = v;
    } else if (strcmp(a, "--text") == 0) {
      o->text = v;
    } else if (strcmp(a, "--kv") == 0) {
      o->kv_path = v;
    } else if (strcmp(a, "--label") == 0) {
      o->label = v;
    } else if (strcmp(a, "--turns") == 0 && load_args_u64(v, 1, 100000000, &n)) {
      o->cfg.turns = n;
    } else if (strcmp(a, "--concurrency") == 0 && load_args_u64(v, 1, 1000000, &n)) {
      o->cfg.concurrency = (unsigned)n;
    } else if (strcmp(a, "--max-pending") == 0 && load_args_u64(v, 1, 1000000, &n)) {
      o->cfg.max_pending = (unsigned)n;
    } else if (strcmp(a, "--pid") == 0 && load_args_u64(v, 1, 1u << 30, &n)) {
      o->cfg.pid = (pid_t)n;
    } else if (strcmp(a, "--sample-ms") == 0 && load_args_u64(v, 1, 60000, &n)) {
      o->cfg.sample_ms = (unsigned)n;
    } else if (strcmp(a, "--timeout") == 0 && load_args_u64(v, 1, 86400, &n)) {
      o->cfg.timeout_ms = (unsigned)n * 1000;
    } else {
      fprintf(stderr, "bench-load: bad option or value: %s %s\n%s", a, v, usage);
      return false;
    }
    if (takes) i++;
  }
  if (!load_args_url(o->url, o->host, sizeof o->host, o->port, sizeof o->port)) {
    fprintf(stderr, "bench-load: --url must be http://HOST[:PORT]: %s\n", o->url);
    return false;
  }
  return true;
}

/* The request every turn sends: {"text": TEXT} with TEXT escaped as JSON.
 * Returns owned, or NULL when out of memory. */
static char *build_request(const struct options *o, size_t *len) {
  size_t tlen = strlen(o->text);
  char *body = malloc(tlen * 6 + 16); /* \u00XX is the longest escape: 6 bytes */
  if (body == NULL) return NULL;
  size_t b = 0;
  memcpy(body, "{\"text\":\"", 9);
  b = 9;
  for (size_t i = 0; i < tlen; i++) {
    unsigned char ch = (unsigned char)o->text[i];
    if (ch == '"' || ch == '\\') {
      body[b++] = '\\';
      body[b++] = (char)ch;
    } else if (ch < 0x20) {
      b += (size_t)snprintf(body + b, 7, "\\u%04x", ch);
    } else {
      body[b++] = (char)ch;
    }
  }
  memcpy(body + b, "\"}", 2);
  b += 2;
  size_t cap = b + strlen(o->path) + strlen(o->host) + 512;
  char *req = malloc(cap);
  if (req == NULL) {
    free(body);
    return NULL;
  }
  bool v6 = strchr(o->host, ':') != NULL;
  const char *token = getenv("TURN_TOKEN"); /* a paired device's, as turn reads it */
  int n = snprintf(req, cap,
                   "POST %s HTTP/1.1\r\nHost: %s%s%s:%s\r\n%s%s%s"
                   "Content-Type: application/json\r\nContent-Length: %zu\r\n%s\r\n",
                   o->path, v6 ? "[" : "", o->host, v6 ? "]" : "", o->port,
                   token != NULL ? "Authorization: Bearer " : "",
                   token != NULL ? token : "", token != NULL ? "\r\n" : "", b,
                   o->cfg.keep_alive ? "" : "Connection: close\r\n");
  if (n < 0 || (size_t)n + b >= cap) {
    free(body);
    free(req);
    return NULL;
  }
  memcpy(req + n, body, b);
  free(body);
  *len = (size_t)n + b;
  return req;
}

/* One descriptor per slot: raise the soft limit as far as the hard one allows. */
static void raise_fd_limit(unsigned concurrency) {
  uint64_t want = (uint64_t)concurrency + FDS_SPARE, got = load_stats_raise_fds(want);
  if (got < want)
    fprintf(stderr,
            "bench-load: only %llu file descriptors for %u connections; "
            "raise the hard limit (ulimit -Hn)\n",
            (unsigned long long)got, concurrency);
}

/* The figures the report and the kv file share. */
struct figures {
  uint64_t failed;
  double events_per_s, mb_per_s;
  double ttfb_p50, ttfb_p99, ttfb_max, turn_p50, turn_p99, turn_max; /* ms */
  /* ms: each turn's longest wait between two reads of its body */
  double gap_p50, gap_p99, gap_max;
  double kib_per_live; /* (hold peak - before) / hold turns; < 0 unknown */
  double kib_per_run;  /* (after - before) / turns: what an ended turn leaves */
  unsigned hold;       /* live turns that make the hold */
};

static void compute(const struct options *o, struct load_result *res, struct figures *f) {
  memset(f, 0, sizeof *f);
  for (int e = 0; e < LOAD_RUN_E__COUNT; e++)
    f->failed += res->errors[e];
  if (res->wall_s > 0) {
    f->events_per_s = (double)res->events / res->wall_s;
    f->mb_per_s = (double)res->body_bytes / 1e6 / res->wall_s;
  }
  load_stats_sort(res->ttfb_ns, res->n_ttfb);
  load_stats_sort(res->turn_ns, res->n_turn);
  f->ttfb_p50 = load_stats_pct_ms(res->ttfb_ns, res->n_ttfb, 50);
  f->ttfb_p99 = load_stats_pct_ms(res->ttfb_ns, res->n_ttfb, 99);
  f->ttfb_max = load_stats_pct_ms(res->ttfb_ns, res->n_ttfb, 100);
  f->turn_p50 = load_stats_pct_ms(res->turn_ns, res->n_turn, 50);
  f->turn_p99 = load_stats_pct_ms(res->turn_ns, res->n_turn, 99);
  f->turn_max = load_stats_pct_ms(res->turn_ns, res->n_turn, 100);
  load_stats_sort(res->gap_ns, res->n_turn);
  f->gap_p50 = load_stats_pct_ms(res->gap_ns, res->n_turn, 50);
  f->gap_p99 = load_stats_pct_ms(res->gap_ns, res->n_turn, 99);
  f->gap_max = load_stats_pct_ms(res->gap_ns, res->n_turn, 100);
  f->hold =
      o->cfg.turns < o->cfg.concurrency ? (unsigned)o->cfg.turns : o->cfg.concurrency;
  /* Per live turn only when every turn was live at once: otherwise the turns that
   * ended and that turnd keeps for re-attaching (--retain) are in the figure. */
  f->kib_per_live = -1;
  f->kib_per_run = -1;
  if (res->mem_known && res->rss_hold_kib != 0 && o->cfg.turns <= o->cfg.concurrency)
    f->kib_per_live = ((double)res->rss_hold_kib - (double)res->rss_before_kib) / f->hold;
  if (res->mem_known)
    f->kib_per_run =
        ((double)res->rss_after_kib - (double)res->rss_before_kib) / (double)o->cfg.turns;
}

static void report(const struct options *o, const struct load_result *res,
                   const struct figures *f) {
  const struct load_config *c = &o->cfg;
  if (o->label != NULL) printf("== %s\n", o->label);
  printf("turns        %llu asked, %llu ended well, %llu failed; %u at once, %u streamed "
         "at once at most\n",
         (unsigned long long)c->turns, (unsigned long long)res->ok,
         (unsigned long long)f->failed, c->concurrency, res->max_live);
  for (int e = 0; e < LOAD_RUN_E__COUNT; e++)
    if (res->errors[e] != 0)
      printf("  failed     %llu: %s\n", (unsigned long long)res->errors[e],
             load_run_strerror((enum load_run_error)e));
  for (int k = 1; k <= LOAD_LINES_NOMEM; k++)
    if (res->faults[k] != 0)
      printf("    stream   %llu: %s\n", (unsigned long long)res->faults[k],
             load_lines_strfault((enum load_lines_fault)k));
  if (res->bad_status != 0) printf("  first bad status: %d\n", res->bad_status);
  printf("connections  %llu opened (%s), %llu turns re-sent on a new one\n",
         (unsigned long long)res->connections,
         c->keep_alive ? "kept alive between turns" : "one per turn",
         (unsigned long long)res->retries);
  printf("events       %llu (%llu to %llu a turn), %.1f MB of NDJSON in %.2f s%s\n",
         (unsigned long long)res->events, (unsigned long long)res->min_events,
         (unsigned long long)res->max_events, (double)res->body_bytes / 1e6, res->wall_s,
         c->full_check ? ", every line parsed and order-checked" : "");
  printf("throughput   %.0f events/s, %.1f MB/s\n", f->events_per_s, f->mb_per_s);
  printf("first byte   p50 %.3f ms, p99 %.3f ms, max %.3f ms (request sent -> first "
         "body byte)\n",
         f->ttfb_p50, f->ttfb_p99, f->ttfb_max);
  printf("whole turn   p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", f->turn_p50, f->turn_p99,
         f->turn_max);
  printf("longest gap  p50 %.1f ms, p99 %.1f ms, max %.1f ms (each turn's longest wait "
         "between two reads of its body)\n",
         f->gap_p50, f->gap_p99, f->gap_max);
  double wall = res->wall_s > 0 ? res->wall_s : 1;
  printf("cpu          bench-load %.2f s (%.0f%% of a core)", res->self_cpu_s,
         100 * res->self_cpu_s / wall);
  if (res->turnd_cpu_s >= 0)
    printf(", turnd %.2f s (%.0f%% of a core)", res->turnd_cpu_s,
           100 * res->turnd_cpu_s / wall);
  printf("\n");
  if (!res->mem_known) return;
  printf(
      "turnd memory VmRSS %.1f MiB before, %.1f MiB at the peak sampled, %.1f MiB "
      "after; VmHWM %.1f MiB\n",
      (double)res->rss_before_kib / KIB_PER_MIB, (double)res->rss_peak_kib / KIB_PER_MIB,
      (double)res->rss_after_kib / KIB_PER_MIB, (double)res->hwm_after_kib / KIB_PER_MIB);
  if (f->kib_per_live >= 0)
    printf("per turn     %.1f KiB of turnd's memory per live turn ((%.1f MiB at the peak "
           "while all %u streamed - %.1f MiB before) / %u)\n",
           f->kib_per_live, (double)res->rss_hold_kib / KIB_PER_MIB, f->hold,
           (double)res->rss_before_kib / KIB_PER_MIB, f->hold);
  else if (o->cfg.turns <= o->cfg.concurrency)
    printf("per turn     n/a: no sample while all %u turns streamed at once (longer "
           "turns, or a smaller --sample-ms)\n",
           f->hold);
  printf("per turn run %.1f KiB left in turnd after the run ((after - before) / %llu "
         "turns: what ended turns keep until --retain)\n",
         f->kib_per_run, (unsigned long long)o->cfg.turns);
}

static int write_kv(const struct options *o, const struct load_result *res,
                    const struct figures *f) {
  FILE *out = fopen(o->kv_path, "w");
  if (out == NULL) {
    fprintf(stderr, "bench-load: %s: %s\n", o->kv_path, strerror(errno));
    return -1;
  }
  fprintf(out, "turns=%llu\nok=%llu\nfailed=%llu\nmax_live=%u\nevents=%llu\n",
          (unsigned long long)o->cfg.turns, (unsigned long long)res->ok,
          (unsigned long long)f->failed, res->max_live, (unsigned long long)res->events);
  fprintf(out, "seconds=%.3f\nevents_per_s=%.0f\nttfb_p50_ms=%.3f\nttfb_p99_ms=%.3f\n",
          res->wall_s, f->events_per_s, f->ttfb_p50, f->ttfb_p99);
  fprintf(out, "ttfb_max_ms=%.3f\nturn_p50_ms=%.1f\nturn_p99_ms=%.1f\n", f->ttfb_max,
          f->turn_p50, f->turn_p99);
  fprintf(out, "gap_p50_ms=%.1f\ngap_p99_ms=%.1f\ngap_max_ms=%.1f\n", f->gap_p50,
          f->gap_p99, f->gap_max);
  fprintf(out, "self_cpu_s=%.2f\nturnd_cpu_s=%.2f\n", res->self_cpu_s, res->turnd_cpu_s);
  if (res->mem_known)
    fprintf(out,
            "rss_before_kib=%llu\nrss_peak_kib=%llu\nrss_hold_kib=%llu\n"
            "rss_after_kib=%llu\nhwm_kib=%llu\n",
            (unsigned long long)res->rss_before_kib,
            (unsigned long long)res->rss_peak_kib, (unsigned long long)res->rss_hold_kib,
            (unsigned long long)res->rss_after_kib,
            (unsigned long long)res->hwm_after_kib);
  if (f->kib_per_live >= 0) fprintf(out, "kib_per_live_turn=%.1f\n", f->kib_per_live);
  if (f->kib_per_run >= 0) fprintf(out, "kib_per_ended_turn=%.1f\n", f->kib_per_run);
  return fclose(out) == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  struct options o;
  if (!parse_options(&o, argc, argv)) return 2;
  if (!load_conn_resolve("bench-load", o.host, o.port, &o.cfg.addr, &o.cfg.addr_len))
    return 2;
  char *req = build_request(&o, &o.cfg.request_len);
  if (req == NULL) {
    fprintf(stderr, "bench-load: out of memory\n");
    return 2;
  }
  o.cfg.request = req;
  raise_fd_limit(o.cfg.concurrency);
  struct load_result res;
  if (load_run(&o.cfg, &res) != 0) {
    fprintf(stderr, "bench-load: cannot set the run up (out of memory?)\n");
    free(req);
    return 2;
  }
  struct figures f;
  compute(&o, &res, &f);
  report(&o, &res, &f);
  int rv = f.failed == 0 && res.ok == o.cfg.turns ? 0 : 1;
  if (o.kv_path != NULL && write_kv(&o, &res, &f) != 0) rv = 1;
  load_result_free(&res);
  free(req);
  return rv;
}
