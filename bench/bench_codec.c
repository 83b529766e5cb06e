/* bench-codec: libturn's throughput on one core over a generated ~200 MB stream of
 * whole turns held in memory, so no I/O is measured: encode, parse+validate through
 * the NDJSON reader in 64 KiB chunks, the same plus the order checker (the figure
 * the project's target of >= 250 MB/s is about), and history documents and blocks.
 * Each figure is the best of N runs; every run is checked to accept every event. */
#include "stream_gen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK_BYTES  (64u * 1024u) /* what a socket read typically hands the reader */
#define ENCODE_CAP   (4u << 20)    /* bytes; the largest line is far below */
#define TARGET_MB_S  250.0         /* the project's target for parse+validate+order */
#define MB           1e6           /* MB and MB/s are 10^6 bytes, as turncheck --stats */
#define DEFAULT_MB   200
#define DEFAULT_RUNS 3

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void) {
  return clock_s(CLOCK_MONOTONIC);
}

/* CPU time of this process: a best run whose CPU time is well below its wall time
 * was descheduled, so its figure says more about the machine's load than about us. */
static double cpu_s(void) {
  return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

/* What one run saw; a run that does not accept everything is a failed benchmark. */
struct tally {
  turn_order *order; /* NULL: parse+validate only */
  uint64_t items;    /* events or blocks accepted */
  uint64_t rejected; /* lines or blocks refused by the parser or the checker */
  uint64_t bytes;    /* encode: bytes written */
};

static int on_event(void *ctx, const turn_event *ev, const turn_error *err) {
  struct tally *t = ctx;
  if (err != NULL) {
    t->rejected++;
    return 0;
  }
  if (t->order != NULL) {
    turn_error order_err;
    int rv = turn_order_step(t->order, ev, &order_err);
    if (rv == TURN_E_NOMEM) return rv;
    if (rv != TURN_OK) {
      t->rejected++;
      return 0;
    }
  }
  t->items++;
  return 0;
}

static int on_block(void *ctx, size_t index, const turn_block *b, const turn_error *err) {
  struct tally *t = ctx;
  (void)index;
  (void)b;
  if (err != NULL)
    t->rejected++;
  else
    t->items++;
  return 0;
}

/* ------------------------------------------------------------- the runs */

enum phase { P_ENCODE, P_PARSE, P_ORDER, P_HISTORY, P_BLOCKS, P__COUNT };

static const char *const phase_names[P__COUNT] = {"encode", "parse", "order", "history",
                                                  "blocks"};

static const char *const phase_titles[P__COUNT] = {
    "(1) encode: turn_event_encode, MB of output",
    "(2) parse+validate: reader, 64 KiB chunks",
    "(3) parse+validate+order: reader + order_step",
    "(4) history: turn_history_parse per document",
    "(4b) blocks: turn_block_parse per block"};

/* (1) Every event into one reused turn_buf, reset per event as a daemon's
 * per-event output step would. */
static int run_encode(const struct stream_gen *st, struct tally *t) {
  turn_buf out;
  turn_buf_init(&out, ENCODE_CAP, NULL);
  int rv = TURN_OK;
  for (size_t i = 0; i < st->n_events && rv == TURN_OK; i++) {
    turn_buf_reset(&out);
    rv = turn_event_encode(&st->events[i], &out);
    t->bytes += out.len + 1; /* and its newline */
    t->items++;
  }
  turn_buf_fini(&out);
  return rv;
}

/* (2) and (3): the stream as a socket would deliver it, 64 KiB at a time; lines
 * that straddle two chunks take the reader's copying path, as they would live. */
static int run_reader(const struct stream_gen *st, struct tally *t, bool order) {
  turn_reader *r = turn_reader_new(TURN_READER_DEFAULT_MAX_LINE, NULL);
  t->order = order ? turn_order_new(NULL) : NULL;
  if (r == NULL || (order && t->order == NULL)) {
    turn_reader_free(r);
    turn_order_free(t->order);
    return TURN_E_NOMEM;
  }
  const char *p = st->ndjson.data;
  size_t left = st->ndjson.len;
  int rv = TURN_OK;
  while (left > 0 && rv == TURN_OK) {
    size_t n = left < CHUNK_BYTES ? left : CHUNK_BYTES;
    rv = turn_reader_feed(r, p, n, on_event, t);
    p += n;
    left -= n;
  }
  if (rv == TURN_OK) rv = turn_reader_finish(r, on_event, t);
  if (rv == TURN_OK && order && turn_order_finish(t->order, NULL) != TURN_OK)
    t->rejected++;
  turn_reader_free(r);
  turn_order_free(t->order);
  t->order = NULL;
  return rv;
}

/* (4) Each session's history document, as the app loads it. */
static int run_history(const struct stream_gen *st, struct tally *t) {
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  int rv = TURN_OK;
  for (size_t i = 0; i < st->n_docs && rv == TURN_OK; i++) {
    turn_error err;
    rv = turn_history_parse(st->history.data + st->docs[i].off, st->docs[i].len, &arena,
                            on_block, t, &err);
  }
  turn_arena_fini(&arena);
  return rv;
}

/* (4b) Each block on its own, as a store that keeps blocks one per row would. */
static int run_blocks(const struct stream_gen *st, struct tally *t) {
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  int rv = TURN_OK;
  for (size_t i = 0; i < st->n_blocks; i++) {
    turn_block b;
    turn_error err;
    turn_arena_reset(&arena);
    rv = turn_block_parse(&b, &arena, st->history.data + st->blocks[i].off,
                          st->blocks[i].len, &err);
    if (rv == TURN_E_NOMEM) break;
    if (rv == TURN_OK)
      t->items++;
    else
      t->rejected++;
    rv = TURN_OK;
  }
  turn_arena_fini(&arena);
  return rv;
}

static int run_phase(enum phase ph, const struct stream_gen *st, struct tally *t) {
  switch (ph) {
  case P_ENCODE:
    return run_encode(st, t);
  case P_PARSE:
    return run_reader(st, t, false);
  case P_ORDER:
    return run_reader(st, t, true);
  case P_HISTORY:
    return run_history(st, t);
  case P_BLOCKS:
  case P__COUNT:
    break;
  }
  return run_blocks(st, t);
}

/* Items a correct run accepts, and the bytes its MB/s counts. */
static void phase_expect(enum phase ph, const struct stream_gen *st, uint64_t *items,
                         uint64_t *bytes) {
  switch (ph) {
  case P_ENCODE:
  case P_PARSE:
  case P_ORDER:
    *items = st->n_events;
    *bytes = st->ndjson.len;
    return;
  case P_HISTORY:
    *items = st->n_blocks;
    *bytes = st->history.len;
    return;
  case P_BLOCKS:
  case P__COUNT:
    break;
  }
  *items = st->n_blocks;
  *bytes = 0;
  for (size_t i = 0; i < st->n_blocks; i++)
    *bytes += st->blocks[i].len;
}

/* Best of runs by wall time; returns its seconds and sets *cpu_share to its CPU
 * time over its wall time, or returns a negative value when a run failed. */
static double measure(enum phase ph, const struct stream_gen *st, int runs,
                      double *cpu_share) {
  uint64_t want_items, want_bytes;
  phase_expect(ph, st, &want_items, &want_bytes);
  double best = -1;
  for (int i = 0; i < runs; i++) {
    struct tally t = {NULL, 0, 0, 0};
    double t0 = now_s(), c0 = cpu_s();
    int rv = run_phase(ph, st, &t);
    double secs = now_s() - t0, cpu = cpu_s() - c0;
    if (rv != TURN_OK || t.rejected != 0 || t.items != want_items ||
        (ph == P_ENCODE && t.bytes != want_bytes)) {
      fprintf(stderr,
              "bench-codec: %s run %d failed: %s, %llu accepted of %llu, %llu "
              "rejected\n",
              phase_names[ph], i + 1, turn_errname(rv), (unsigned long long)t.items,
              (unsigned long long)want_items, (unsigned long long)t.rejected);
      return -1;
    }
    if (best < 0 || secs < best) {
      best = secs;
      *cpu_share = secs > 0 ? cpu / secs : 1;
    }
  }
  return best;
}

/* ---------------------------------------------------------- checks, I/O */

/* The generator's invariant: encoding events[] again gives the stream byte for
 * byte. Checked once, outside the timing, so the encode figure encodes what the
 * parse figures parse. */
static int check_round_trip(const struct stream_gen *st) {
  turn_buf out;
  turn_buf_init(&out, ENCODE_CAP, NULL);
  size_t off = 0;
  int rv = TURN_OK;
  for (size_t i = 0; i < st->n_events && rv == TURN_OK; i++) {
    turn_buf_reset(&out);
    rv = turn_event_encode(&st->events[i], &out);
    if (rv == TURN_OK &&
        (off + out.len >= st->ndjson.len || st->ndjson.data[off + out.len] != '\n' ||
         memcmp(st->ndjson.data + off, out.data, out.len) != 0)) {
      fprintf(stderr, "bench-codec: event %zu encodes differently\n", i);
      rv = TURN_E_INVALID;
    }
    off += out.len + 1;
  }
  turn_buf_fini(&out);
  if (rv == TURN_OK && off != st->ndjson.len) rv = TURN_E_INVALID;
  return rv;
}

static int write_file(const char *path, const char *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) {
    fprintf(stderr, "bench-codec: %s: %s\n", path, strerror(errno));
    return -1;
  }
  size_t n = fwrite(data, 1, len, f);
  int close_rv = fclose(f);
  if (n != len || close_rv != 0) {
    fprintf(stderr, "bench-codec: %s: write failed\n", path);
    return -1;
  }
  return 0;
}

static void print_facts(const struct stream_gen *st, double gen_s) {
  double bytes = (double)st->ndjson.len;
  double n = (double)st->n_events;
  printf("stream   %.1f MB (%zu bytes), %zu events in %zu turns, built in %.1f s\n",
         bytes / MB, st->ndjson.len, st->n_events, st->n_turns, gen_s);
  printf("         text events %.1f%% of events, %.1f%% of bytes; mean line %.0f B, "
         "longest %zu B\n",
         100.0 * (double)st->n_by_type[TURN_EV_TEXT] / n,
         100.0 * (double)st->bytes_by_type[TURN_EV_TEXT] / bytes, bytes / n,
         st->max_line);
  printf("         tool inputs %zu (%zu over %d B, sent as a preview)\n", st->n_inputs,
         st->n_truncated, TURN_INPUT_LIMIT);
  printf("history  %.1f MB in %zu documents, %zu blocks\n\n",
         (double)st->history.len / MB, st->n_docs, st->n_blocks);
  printf("  %-17s %9s %6s %7s %6s\n", "type", "events", "%ev", "MB", "%bytes");
  for (int t = 0; t < TURN_EV__COUNT; t++) {
    if (st->n_by_type[t] == 0) continue;
    printf("  %-17s %9zu %6.2f %7.1f %6.2f\n", turn_event_type_name((turn_event_type)t),
           st->n_by_type[t], 100.0 * (double)st->n_by_type[t] / n,
           (double)st->bytes_by_type[t] / MB,
           100.0 * (double)st->bytes_by_type[t] / bytes);
  }
  printf("\n");
}

static void usage(FILE *to) {
  fprintf(to,
          "usage: bench-codec [--mb N] [--runs N] [--only PHASE] [--write FILE]\n"
          "                   [--write-history FILE]\n"
          "  Builds a deterministic stream of about N MB (default %d; MB = 10^6 bytes)\n"
          "  in memory and measures libturn on one thread, best of --runs (default %d).\n"
          "  --only PHASE          encode, parse, order, history or blocks\n"
          "  --write FILE          write the NDJSON stream (for turncheck --stats)\n"
          "  --write-history FILE  write the first history document (turncheck "
          "--blocks)\n",
          DEFAULT_MB, DEFAULT_RUNS);
}

static bool parse_count(const char *s, unsigned long max, unsigned long *out) {
  char *end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v == 0 || v > max) return false;
  *out = v;
  return true;
}

int main(int argc, char **argv) {
  unsigned long mb = DEFAULT_MB, runs = DEFAULT_RUNS;
  const char *write_path = NULL, *history_path = NULL;
  int only = -1;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      usage(stdout);
      return 0;
    }
    if (val == NULL) {
      usage(stderr);
      return 2;
    }
    i++;
    if (strcmp(arg, "--mb") == 0) {
      if (!parse_count(val, 100000, &mb)) {
        fprintf(stderr, "bench-codec: --mb wants 1 to 100000\n");
        return 2;
      }
    } else if (strcmp(arg, "--runs") == 0) {
      if (!parse_count(val, 1000, &runs)) {
        fprintf(stderr, "bench-codec: --runs wants 1 to 1000\n");
        return 2;
      }
    } else if (strcmp(arg, "--only") == 0) {
      for (int p = 0; p < P__COUNT; p++)
        if (strcmp(val, phase_names[p]) == 0) only = p;
      if (only < 0) {
        usage(stderr);
        return 2;
      }
    } else if (strcmp(arg, "--write") == 0) {
      write_path = val;
    } else if (strcmp(arg, "--write-history") == 0) {
      history_path = val;
    } else {
      usage(stderr);
      return 2;
    }
  }

  struct stream_gen st;
  double t0 = now_s();
  int rv = stream_gen_build(&st, (size_t)mb * 1000000u, STREAM_GEN_SEED);
  double gen_s = now_s() - t0;
  if (rv != TURN_OK) {
    fprintf(stderr, "bench-codec: building the stream failed: %s\n", turn_errname(rv));
    return 1;
  }
  int status = 0;
  if (write_path != NULL && write_file(write_path, st.ndjson.data, st.ndjson.len) != 0)
    status = 1;
  if (history_path != NULL && st.n_docs > 0 &&
      write_file(history_path, st.history.data + st.docs[0].off, st.docs[0].len) != 0)
    status = 1;
  if (status == 0 && check_round_trip(&st) != TURN_OK) status = 1;
  if (status != 0) {
    stream_gen_free(&st);
    return status;
  }

  print_facts(&st, gen_s);
  printf("  %-46s %12s %9s %9s %5s\n", "figure (best of runs, one thread)", "items/s",
         "MB/s", "s", "cpu%");
  for (int p = 0; p < P__COUNT; p++) {
    if (only >= 0 && p != only) continue;
    double cpu_share = 1;
    double secs = measure((enum phase)p, &st, (int)runs, &cpu_share);
    if (secs < 0) {
      status = 1;
      continue;
    }
    uint64_t items, bytes;
    phase_expect((enum phase)p, &st, &items, &bytes);
    double mb_s = (double)bytes / MB / secs;
    printf("  %-46s %12.0f %9.1f %9.3f %5.0f%s\n", phase_titles[p], (double)items / secs,
           mb_s, secs, 100 * cpu_share,
           p == P_ORDER ? (mb_s >= TARGET_MB_S ? "  (target >= 250: met)"
                                               : "  (target >= 250: NOT met)")
                        : "");
    fflush(stdout);
  }
  stream_gen_free(&st);
  return status;
}
