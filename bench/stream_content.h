/* Internal to the stream generator: the state its three files share (struct gen),
 * the PRNG and the append helpers whose errors stick in struct gen, and the content
 * makers of stream_content.c. */
#ifndef BENCH_STREAM_CONTENT_H
#define BENCH_STREAM_CONTENT_H

#include "stream_gen.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ----------------------------------------------------------------- PRNG */

/* splitmix64: tiny, fast and well mixed; plenty for picking words. */
struct rng {
  uint64_t s;
};

static inline uint64_t rng_next(struct rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/* Uniform in [0, n) for n > 0, by multiply-shift (no modulo bias worth noting). */
static inline uint32_t rng_below(struct rng *r, uint32_t n) {
  return (uint32_t)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Uniform in [lo, hi], both included. */
static inline uint32_t rng_range(struct rng *r, uint32_t lo, uint32_t hi) {
  return lo + rng_below(r, hi - lo + 1);
}

static inline bool rng_permille(struct rng *r, uint32_t p) {
  return rng_below(r, 1000) < p;
}

#define COUNT(a)     (sizeof(a) / sizeof((a)[0]))
#define PICK(r, arr) ((arr)[rng_below((r), (uint32_t)COUNT(arr))])

/* ------------------------------------------------------------ generator */

/* The state of one stream_gen_build, shared by the generator's files.
 * Errors are sticky in rv: after the first, every step does nothing and
 * stream_gen_build returns it. */
struct gen {
  struct stream_gen *st;
  struct rng rng;
  int rv;           /* first error; sticky */
  turn_buf line;    /* one encoded event or block */
  turn_buf text;    /* a string being composed */
  turn_buf json;    /* a tool input being composed */
  turn_buf reply;   /* text deltas since the last assistant block */
  turn_buf thought; /* reasoning deltas since the last reasoning block */
  uint64_t seq;     /* seq of the next event of the open turn */
  uint64_t now_ms;  /* simulated clock, Unix milliseconds */
  uint64_t ids;     /* counter mixed into tool and request ids */
  turn_str session; /* id of the current session */
  bool doc_open;    /* a history document is being written */
  size_t doc_off;   /* where it starts in st->history */
  size_t doc_blocks;
};

static inline void set_rv(struct gen *g, int rv) {
  if (g->rv == TURN_OK) g->rv = rv;
}

static inline void append(struct gen *g, turn_buf *b, const char *p, size_t len) {
  int rv = turn_buf_append(b, p, len);
  if (rv != TURN_OK) set_rv(g, rv);
}

static inline void append_c(struct gen *g, turn_buf *b, const char *s) {
  append(g, b, s, strlen(s));
}

/* Appends a formatted piece (ids, numbers); pieces are short. */
static inline void appendf(struct gen *g, turn_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void appendf(struct gen *g, turn_buf *b, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof tmp) {
    set_rv(g, TURN_E_INVALID);
    return;
  }
  append(g, b, tmp, (size_t)n);
}

/* A copy of p[0..len) in the stream's arena, for strings that events point to. */
static inline turn_str keep(struct gen *g, const char *p, size_t len) {
  if (len == 0 || g->rv != TURN_OK) return (turn_str){NULL, 0};
  char *copy = turn_arena_alloc(&g->st->arena, len);
  if (copy == NULL) {
    set_rv(g, TURN_E_NOMEM);
    return (turn_str){NULL, 0};
  }
  memcpy(copy, p, len);
  return (turn_str){copy, len};
}

static inline turn_str keep_buf(struct gen *g, const turn_buf *b) {
  return keep(g, b->data, b->len);
}

/* --------------------------------------------------------- content makers */

/* What a tool's input looks like. */
enum tool_kind {
  K_READ,
  K_SEARCH,
  K_SHELL,
  K_WRITE,
  K_CALENDAR,
  K_DEVICE,
  K_EMAIL,
  K_UI,
  K_ROUTINE
};

/* Appends n words to b, separated by spaces: mostly plain English, some non-ASCII,
 * a few that need escaping. */
void stream_content_words(struct gen *g, turn_buf *b, uint32_t n);

/* Fills b with sentences of words until it holds at least len bytes. */
void stream_content_words_until(struct gen *g, turn_buf *b, size_t len);

/* A tool input of the given kind, built as JSON in g->json (g->text is clobbered);
 * its strings live in the stream's arena until stream_gen_free. Counted in
 * st->n_inputs and st->n_truncated. Empty when g holds an error. */
turn_input stream_content_input(struct gen *g, enum tool_kind kind);

/* A widget's HTML of about target bytes with title as its heading, built in g->text
 * and kept in the stream's arena until stream_gen_free. Borrows title. */
turn_str stream_content_html(struct gen *g, turn_str title, size_t target);

#endif
