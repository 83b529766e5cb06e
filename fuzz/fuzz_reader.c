/* Fuzz target: the NDJSON reader and the order checker. The first bytes choose the
 * line limit and a cycle of chunk sizes; the rest is the stream. It is fed once
 * whole and once in those chunks, every event going through a turn_order; both
 * runs must give the same callbacks (events, errors, line numbers, order results)
 * in the same order, as the "every split" rule of the style guide demands.
 *
 * Input: byte 0   max_line: 0x00-0x7f -> 1-128, 0x80-0xfe -> 64-8128 by 64,
 *                 0xff -> TURN_READER_DEFAULT_MAX_LINE
 *        byte 1   n - 1: how many chunk sizes follow (1-8)
 *        n bytes  chunk sizes - 1 (1-256), used in a cycle
 *        rest     the stream */
#include "fuzz_support.h"
#include "turn/turn.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void log_u64(struct fuzz_log *l, uint64_t v) {
  fuzz_log_put(l, &v, sizeof v);
}

struct run {
  turn_reader *r;
  turn_order *order;
  turn_buf enc;        /* scratch for encoding each event */
  struct fuzz_log log; /* every callback and result, in order */
  uint64_t last_line;  /* line of the previous callback: lines only go forward */
};

static void log_error(struct fuzz_log *l, const turn_error *err) {
  log_u64(l, (uint64_t)(int64_t)err->code);
  log_u64(l, (uint64_t)(uintptr_t)err->field); /* static strings: same pointer */
  log_u64(l, err->offset);
  log_u64(l, err->line);
}

static int on_event(void *ctx, const turn_event *ev, const turn_error *err) {
  struct run *run = ctx;
  CHECK((ev == NULL) != (err == NULL));
  /* One callback per line, in order, numbered as turn_reader_line says. */
  uint64_t line = turn_reader_line(run->r);
  CHECK(err == NULL || err->line == line);
  CHECK(line > run->last_line);
  run->last_line = line;

  if (err != NULL) {
    CHECK(err->code < 0 && err->code > TURN_E_NOMEM);
    CHECK(strcmp(turn_errname(err->code), "E_UNKNOWN") != 0);
    fuzz_log_put(&run->log, "X", 1);
    log_error(&run->log, err);
    turn_order_resync(run->order); /* as turncheck does: the line's seq is unknown */
    return 0;
  }

  fuzz_log_put(&run->log, "E", 1);
  log_u64(&run->log, line);
  turn_buf_reset(&run->enc);
  CHECK(turn_event_encode(ev, &run->enc) == TURN_OK);
  log_u64(&run->log, run->enc.len);
  fuzz_log_put(&run->log, run->enc.data, run->enc.len);

  turn_error oerr = {0, NULL, 0, 0};
  int rv = turn_order_step(run->order, ev, &oerr);
  if (rv != TURN_OK) {
    CHECK(rv <= TURN_E_ORDER && rv >= TURN_E_INCOMPLETE);
    CHECK(oerr.code == rv);
  }
  log_u64(&run->log, (uint64_t)(int64_t)rv);
  if (rv != TURN_OK) log_error(&run->log, &oerr);
  log_u64(&run->log, turn_order_in_turn(run->order));
  return 0;
}

static void run_init(struct run *run, size_t max_line) {
  memset(run, 0, sizeof *run);
  run->r = turn_reader_new(max_line, NULL);
  run->order = turn_order_new(NULL);
  CHECK(run->r != NULL && run->order != NULL);
  turn_buf_init(&run->enc, SIZE_MAX, NULL);
}

/* EOF for the reader and the checker; logs both results. */
static void run_finish(struct run *run, const char *stream, size_t len) {
  CHECK(turn_reader_finish(run->r, on_event, run) == TURN_OK);
  turn_error oerr = {0, NULL, 0, 0};
  int rv = turn_order_finish(run->order, &oerr);
  CHECK(rv == TURN_OK || (rv == TURN_E_INCOMPLETE && oerr.code == rv));
  fuzz_log_put(&run->log, "F", 1);
  log_u64(&run->log, (uint64_t)(int64_t)rv);

  /* Every line was counted: one per newline, plus an unterminated last line. */
  uint64_t lines = 0;
  for (size_t i = 0; i < len; i++)
    lines += stream[i] == '\n';
  if (len > 0 && stream[len - 1] != '\n') lines++;
  CHECK(turn_reader_line(run->r) == lines);
}

static void run_fini(struct run *run) {
  turn_reader_free(run->r);
  turn_order_free(run->order);
  turn_buf_fini(&run->enc);
  free(run->log.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  size_t max_line = data[0] == 0xff  ? TURN_READER_DEFAULT_MAX_LINE
                    : data[0] < 0x80 ? (size_t)data[0] + 1
                                     : (size_t)(data[0] - 0x7f) * 64;
  size_t n_sizes = (size_t)(data[1] & 7) + 1;
  if (size < 2 + n_sizes) return 0;
  const uint8_t *sizes = data + 2;
  const char *stream = (const char *)data + 2 + n_sizes;
  size_t len = size - 2 - n_sizes;

  /* Whole: one feed. */
  struct run whole;
  run_init(&whole, max_line);
  CHECK(turn_reader_feed(whole.r, stream, len, on_event, &whole) == TURN_OK);
  run_finish(&whole, stream, len);

  /* Chunked: an empty feed first (a no-op), then the chunk cycle. */
  struct run split;
  run_init(&split, max_line);
  CHECK(turn_reader_feed(split.r, stream, 0, on_event, &split) == TURN_OK);
  CHECK(split.log.len == 0);
  size_t off = 0;
  for (size_t k = 0; off < len; k++) {
    size_t n = (size_t)sizes[k % n_sizes] + 1;
    if (n > len - off) n = len - off;
    CHECK(turn_reader_feed(split.r, stream + off, n, on_event, &split) == TURN_OK);
    off += n;
  }
  run_finish(&split, stream, len);

  CHECK(whole.log.len == split.log.len);
  CHECK(memcmp(whole.log.p, split.log.p, whole.log.len) == 0);

  run_fini(&whole);
  run_fini(&split);
  return 0;
}
