/* stream_gen: builds a realistic turn stream for the codec benchmark, the same bytes
 * on every machine and every run (a fixed-seed PRNG of its own, integer arithmetic
 * only), through libturn's own encoder. Every turn it makes passes the reader and
 * the order checker; its history documents pass turn_history_parse. */
#ifndef BENCH_STREAM_GEN_H
#define BENCH_STREAM_GEN_H

#include "turn/turn.h"

#define STREAM_GEN_SEED 0x7475726e64ULL /* "turnd" */

/* A span of bytes in one of the stream's buffers. */
struct stream_gen_span {
  size_t off;
  size_t len;
};

struct stream_gen {
  /* The events in stream order. Their strings live in arena. */
  turn_event *events;
  size_t n_events;
  size_t cap_events;

  /* The NDJSON stream: each event encoded by turn_event_encode, then "\n".
   * Invariant: re-encoding events[] gives these bytes exactly. */
  turn_buf ndjson;

  /* History documents {"session": {...}, "blocks": [...]}, one per session, back
   * to back; docs[] and blocks[] say where each document and each block is. */
  turn_buf history;
  struct stream_gen_span *docs;
  size_t n_docs, cap_docs;
  struct stream_gen_span *blocks;
  size_t n_blocks, cap_blocks;

  /* Facts about the stream, for the benchmark's table. */
  size_t n_turns;
  size_t n_by_type[TURN_EV__COUNT];     /* events per type */
  size_t bytes_by_type[TURN_EV__COUNT]; /* line bytes per type, newline included */
  size_t max_line;                      /* longest line without its newline */
  size_t n_inputs;                      /* tool inputs (tool_input events) */
  size_t n_truncated;                   /* of which travel as a preview */

  turn_arena arena; /* every string the events point to; freed by stream_gen_free */
};

/* Builds whole turns from seed until the NDJSON stream holds at least
 * target_bytes, and history documents for the same turns. *st is initialized here;
 * free it with stream_gen_free. Returns TURN_OK, or a libturn code when the
 * encoder refused something the generator built (a bug here or there) or memory
 * ran out; then *st holds nothing to free. */
int stream_gen_build(struct stream_gen *st, size_t target_bytes, uint64_t seed);

/* Frees everything stream_gen_build made; accepts a zeroed struct. */
void stream_gen_free(struct stream_gen *st);

#endif
