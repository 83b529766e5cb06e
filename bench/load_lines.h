/* load_lines: counts and checks the NDJSON event lines of one turn's stream as its
 * bytes pass, whatever the read and chunk boundaries. By default only the first
 * bytes of each line are kept and checked (v, seq without gaps, the type: turn
 * first, end last), so a stream costs a fixed few hundred bytes and little CPU;
 * with full checking every line also goes through libturn's reader and order
 * checker. Sans-I/O: bytes in, counts and a verdict out. */
#ifndef BENCH_LOAD_LINES_H
#define BENCH_LOAD_LINES_H

#include "turn/turn.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of a line kept for the quick check: turnd writes "v", "seq" and "type"
 * first, so {"v":1,"seq":<20 digits>,"type":"<longest name>" fits. */
#define LOAD_LINES_HEAD 72

/* What was wrong with a stream; the first fault sticks. */
#define LOAD_LINES_FAULTS(X)                                             \
  X(OK, "ok")                                                            \
  X(SHAPE, "a line does not start {\"v\":1,\"seq\":N,\"type\":\"NAME\"") \
  X(SEQ, "a seq is not the next number")                                 \
  X(FIRST, "the first event is not a turn event")                        \
  X(AFTER_END, "an event after the end event")                           \
  X(CUT, "the stream ended without an end event")                        \
  X(CHECK, "libturn's reader or order checker refused a line")           \
  X(NOMEM, "out of memory")

enum load_lines_fault {
#define LOAD_LINES_ENUM(name, msg) LOAD_LINES_##name,
  LOAD_LINES_FAULTS(LOAD_LINES_ENUM)
#undef LOAD_LINES_ENUM
};

struct load_lines {
  uint64_t events;             /* complete non-empty lines so far */
  uint64_t bytes;              /* body bytes fed so far */
  char head[LOAD_LINES_HEAD];  /* the current line's first head_len bytes */
  size_t head_len;             /* <= LOAD_LINES_HEAD */
  size_t line_len;             /* bytes of the current line so far, no newline */
  bool ended;                  /* an end event was seen */
  enum load_lines_fault fault; /* first fault; LOAD_LINES_OK until one */
  turn_reader *reader;         /* full checking only, else NULL */
  turn_order *order;           /* full checking only, else NULL */
  turn_error check_err;        /* the first refusal of the full check */
};

/* Starts a stream. full: also run every line through turn_reader and turn_order.
 * Returns 0, or -1 when out of memory (then there is nothing to free). */
int load_lines_init(struct load_lines *l, bool full);
/* Frees what init made; accepts a zeroed struct. */
void load_lines_fini(struct load_lines *l);
/* Feeds body bytes (borrows data[0..len)). Faults are recorded, not returned: the
 * generator goes on reading so that the stream's length still counts. */
void load_lines_feed(struct load_lines *l, const char *data, size_t len);
/* The body is complete. Returns the stream's verdict: LOAD_LINES_OK only for a
 * stream whose every line passed and whose last event was an end event. */
enum load_lines_fault load_lines_finish(struct load_lines *l);
/* The message of a fault. */
const char *load_lines_strfault(enum load_lines_fault f);

#endif
