/* turncheck: checks a turn stream (NDJSON, one or many turns) or, with --blocks,
 * a history document against the turn protocol v1, for turnd and any other
 * backend. Prints "line N: what is wrong" per problem; exit 0 valid, 1 not, 2 on
 * a usage or I/O error. A stream with no event at all (empty, or blank lines) holds
 * no turn, so it is not valid: a backend that answered nothing must not pass. */
#include "turn/turn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK_BYTES (256u * 1024u)

struct check {
  turn_reader *reader;
  turn_order *order;
  uint64_t events;
  uint64_t problems;
  const char *doc;       /* --blocks: the document, to turn offsets into lines */
  size_t counted_to;     /* --blocks: doc[0..counted_to) has been counted ... */
  uint64_t counted_line; /* ... and holds this many lines (1 + newlines) */
};

static void print_problem(uint64_t line, const turn_error *err) {
  turn_error shown = *err;
  shown.line = line;
  char msg[256];
  turn_error_format(&shown, msg, sizeof msg);
  printf("%s\n", msg);
}

static int on_event(void *ctx, const turn_event *ev, const turn_error *err) {
  struct check *c = ctx;
  if (err != NULL) {
    c->problems++;
    print_problem(err->line, err);
    turn_order_resync(c->order); /* the bad line's seq is unknown: no gap report */
    return 0;
  }
  c->events++;
  turn_error order_err;
  int rv = turn_order_step(c->order, ev, &order_err);
  if (rv == TURN_E_NOMEM) return rv;
  if (rv != TURN_OK) {
    c->problems++;
    print_problem(turn_reader_line(c->reader), &order_err);
  }
  return 0;
}

/* The line of a document offset. Problems come in document order, so the count
 * goes on from the last offset instead of starting over each time. */
static uint64_t line_of(struct check *c, size_t offset) {
  if (offset < c->counted_to) {
    c->counted_to = 0;
    c->counted_line = 1;
  }
  for (; c->counted_to < offset; c->counted_to++)
    c->counted_line += c->doc[c->counted_to] == '\n';
  return c->counted_line;
}

static void print_block_problem(uint64_t line, size_t index, const turn_error *err) {
  char msg[256];
  turn_error shown = *err;
  shown.line = 0;
  turn_error_format(&shown, msg, sizeof msg);
  printf("line %llu: block %zu: %s\n", (unsigned long long)line, index, msg);
}

static int on_block(void *ctx, size_t index, const turn_block *b, const turn_error *err) {
  struct check *c = ctx;
  (void)b;
  c->events++;
  if (err != NULL) {
    c->problems++;
    print_block_problem(line_of(c, err->offset), index, err);
  }
  return 0;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *to) {
  fprintf(to, "usage: turncheck [--blocks] [--stats] [--max-line BYTES] [FILE]\n"
              "  Checks a turn stream (NDJSON, one turn or a log of many) or, with\n"
              "  --blocks, a history document {\"session\": ..., \"blocks\": [...]}.\n"
              "  Reads FILE, or standard input. Prints \"line N: problem\" for each\n"
              "  problem. A stream with no turn (empty) is invalid. Exit status:\n"
              "  0 valid, 1 invalid, 2 usage or I/O error.\n"
              "  --stats  print bytes, lines and throughput to standard error\n");
}

/* The order checker sees no event in an empty stream and so has nothing to refuse;
 * the stream is still no turn. Reported only when nothing else was: a stream of bad
 * lines already fails, and each of its lines says why. */
static void report_no_turn(struct check *c) {
  if (c->events > 0 || c->problems > 0) return;
  c->problems++;
  uint64_t line = turn_reader_line(c->reader);
  printf("line %llu: the stream holds no turn: no \"turn\" event, no \"end\" event\n",
         (unsigned long long)(line > 0 ? line : 1));
}

static int check_stream(FILE *in, struct check *c, size_t max_line, uint64_t *bytes) {
  c->reader = turn_reader_new(max_line, NULL);
  c->order = turn_order_new(NULL);
  char *chunk = malloc(CHUNK_BYTES);
  if (c->reader == NULL || c->order == NULL || chunk == NULL) {
    fprintf(stderr, "turncheck: out of memory\n");
    return 2;
  }
  int status = 0;
  size_t n;
  while ((n = fread(chunk, 1, CHUNK_BYTES, in)) > 0) {
    *bytes += n;
    if (turn_reader_feed(c->reader, chunk, n, on_event, c) == TURN_E_NOMEM) {
      fprintf(stderr, "turncheck: out of memory\n");
      status = 2;
      break;
    }
  }
  if (status == 0 && ferror(in)) {
    fprintf(stderr, "turncheck: read error: %s\n", strerror(errno));
    status = 2;
  }
  if (status == 0) {
    turn_reader_finish(c->reader, on_event, c);
    turn_error err;
    if (turn_order_finish(c->order, &err) != TURN_OK) {
      c->problems++;
      print_problem(turn_reader_line(c->reader), &err);
    }
    report_no_turn(c);
  }
  free(chunk);
  turn_reader_free(c->reader);
  turn_order_free(c->order);
  return status;
}

static int check_blocks(FILE *in, struct check *c, uint64_t *bytes) {
  size_t cap = CHUNK_BYTES, len = 0;
  char *doc = malloc(cap);
  size_t n;
  while (doc != NULL && (n = fread(doc + len, 1, cap - len, in)) > 0) {
    len += n;
    if (len == cap) {
      char *grown = realloc(doc, cap * 2);
      if (grown == NULL) {
        free(doc);
        doc = NULL;
        break;
      }
      doc = grown;
      cap *= 2;
    }
  }
  if (doc == NULL) {
    fprintf(stderr, "turncheck: out of memory\n");
    return 2;
  }
  if (ferror(in)) {
    fprintf(stderr, "turncheck: read error: %s\n", strerror(errno));
    free(doc);
    return 2;
  }
  *bytes = len;
  c->doc = doc;
  c->counted_to = 0;
  c->counted_line = 1;
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  turn_error err;
  int rv = turn_history_parse(doc, len, &arena, on_block, c, &err);
  if (rv != TURN_OK) {
    c->problems++;
    print_problem(line_of(c, err.offset), &err);
  }
  turn_arena_fini(&arena);
  free(doc);
  return rv == TURN_E_NOMEM ? 2 : 0;
}

int main(int argc, char **argv) {
  bool blocks = false, stats = false;
  size_t max_line = TURN_READER_DEFAULT_MAX_LINE;
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--blocks") == 0) {
      blocks = true;
    } else if (strcmp(argv[i], "--stats") == 0) {
      stats = true;
    } else if (strcmp(argv[i], "--max-line") == 0 && i + 1 < argc) {
      char *end;
      errno = 0;
      unsigned long long v = strtoull(argv[++i], &end, 10);
      if (errno != 0 || *end != '\0' || v == 0 || v > (1ull << 30)) {
        fprintf(stderr, "turncheck: --max-line wants a number of bytes from 1 to 2^30\n");
        return 2;
      }
      max_line = (size_t)v;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      usage(stderr);
      return 2;
    } else if (path == NULL) {
      path = argv[i];
    } else {
      usage(stderr);
      return 2;
    }
  }
  FILE *in = stdin;
  if (path != NULL && strcmp(path, "-") != 0) {
    in = fopen(path, "rb");
    if (in == NULL) {
      fprintf(stderr, "turncheck: %s: %s\n", path, strerror(errno));
      return 2;
    }
  }
  struct check c = {0};
  uint64_t bytes = 0;
  double t0 = now_s();
  int status =
      blocks ? check_blocks(in, &c, &bytes) : check_stream(in, &c, max_line, &bytes);
  double secs = now_s() - t0;
  if (in != stdin) fclose(in);
  if (status != 0) return status;
  if (stats)
    fprintf(stderr, "turncheck: %llu bytes, %llu %s, %llu problems, %.3f s, %.1f MB/s\n",
            (unsigned long long)bytes, (unsigned long long)c.events,
            blocks ? "blocks" : "events", (unsigned long long)c.problems, secs,
            secs > 0 ? (double)bytes / 1e6 / secs : 0.0);
  /* A verdict that did not reach its reader is no verdict (a full disk, a closed
   * pipe): say so and fail as an I/O error. */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "turncheck: cannot write the report: %s\n", strerror(errno));
    return 2;
  }
  return c.problems == 0 ? 0 : 1;
}
