/* Fuzz target: history blocks. The input is parsed as one block, which must then
 * encode to a fixed point (parse back equal, encode to the same bytes), and as a
 * whole history document, whose every accepted block must do the same. Refusals
 * must carry a known code, an offset inside the input, and leave *b untouched. */
#include "fuzz_support.h"
#include "json_scan.h"
#include "turn/turn.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool str_eq(turn_str a, turn_str b) {
  return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

static bool input_eq(const turn_input *a, const turn_input *b) {
  return a->truncated == b->truncated && str_eq(a->json, b->json) &&
         str_eq(a->preview, b->preview);
}

/* Field by field: only the union member that type selects is meaningful. */
static bool block_eq(const turn_block *a, const turn_block *b) {
  if (a->type != b->type || !str_eq(a->at, b->at)) return false;
  switch (a->type) {
  case TURN_BLOCK_USER:
  case TURN_BLOCK_ASSISTANT:
  case TURN_BLOCK_REASONING:
  case TURN_BLOCK_NOTICE:
    return str_eq(a->text.text, b->text.text);
  case TURN_BLOCK_TOOL:
    return str_eq(a->tool.id, b->tool.id) && str_eq(a->tool.tool, b->tool.tool) &&
           a->tool.tier == b->tool.tier && input_eq(&a->tool.input, &b->tool.input) &&
           a->tool.status == b->tool.status && a->tool.approval == b->tool.approval &&
           a->tool.has_summary == b->tool.has_summary &&
           (!a->tool.has_summary || str_eq(a->tool.summary, b->tool.summary)) &&
           a->tool.has_duration_ms == b->tool.has_duration_ms &&
           (!a->tool.has_duration_ms || a->tool.duration_ms == b->tool.duration_ms);
  case TURN_BLOCK_WIDGET:
    return str_eq(a->widget.id, b->widget.id) &&
           str_eq(a->widget.title, b->widget.title) &&
           str_eq(a->widget.html, b->widget.html);
  case TURN_BLOCK__COUNT:
    break;
  }
  return false;
}

static void check_error(int rv, const turn_error *err, size_t size) {
  CHECK(rv < 0 && rv > TURN_E_NOMEM);
  CHECK(strcmp(turn_errname(rv), "E_UNKNOWN") != 0);
  CHECK(err->code == rv);
  CHECK(err->offset <= size);
  char msg[64];
  size_t want = turn_error_format(err, msg, sizeof msg);
  CHECK(strlen(msg) == (want < sizeof msg ? want : sizeof msg - 1));
}

/* An accepted block encodes to valid JSON that parses back to an equal block and
 * encodes to the same bytes. */
static void check_round_trip(const turn_block *b) {
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  turn_buf out, out2;
  turn_buf_init(&out, SIZE_MAX, NULL);
  turn_buf_init(&out2, SIZE_MAX, NULL);

  CHECK(turn_block_encode(b, &out) == TURN_OK);
  CHECK(turn__json_validate(out.data, out.len, &arena) == TURN_OK);
  turn_block b2;
  turn_error err;
  CHECK(turn_block_parse(&b2, &arena, out.data, out.len, &err) == TURN_OK);
  CHECK(block_eq(b, &b2));
  CHECK(turn_block_encode(&b2, &out2) == TURN_OK);
  CHECK(out2.len == out.len && memcmp(out.data, out2.data, out.len) == 0);

  /* One byte short of room: TURN_E_TOOBIG and the buffer as it was. */
  turn_buf small;
  turn_buf_init(&small, out.len, NULL);
  CHECK(turn_buf_append(&small, "[", 1) == TURN_OK);
  CHECK(turn_block_encode(b, &small) == TURN_E_TOOBIG);
  CHECK(small.len == 1 && small.data[0] == '[');
  turn_buf_fini(&small);

  turn_buf_fini(&out);
  turn_buf_fini(&out2);
  turn_arena_fini(&arena);
}

struct walk {
  size_t size;    /* of the document: error offsets stay inside it */
  size_t next;    /* the index the next callback must carry */
  size_t stop_at; /* index whose callback returns 1 to stop the walk */
};

static int on_block(void *ctx, size_t index, const turn_block *b, const turn_error *err) {
  struct walk *w = ctx;
  CHECK(index == w->next);
  w->next++;
  CHECK((b == NULL) != (err == NULL));
  if (b != NULL)
    check_round_trip(b);
  else
    check_error(err->code, err, w->size);
  return index == w->stop_at ? 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  turn_arena arena;
  turn_arena_init(&arena, NULL);

  /* The input as one block. */
  turn_block b, untouched;
  memset(&b, 0x5A, sizeof b);
  memcpy(&untouched, &b, sizeof b);
  turn_error err = {0, NULL, 0, 0};
  int rv = turn_block_parse(&b, &arena, text, size, &err);
  if (rv == TURN_OK) {
    CHECK(turn__json_validate(text, size, &arena) == TURN_OK);
    check_round_trip(&b);
  } else {
    check_error(rv, &err, size);
    CHECK(memcmp(&b, &untouched, sizeof b) == 0);
    CHECK(turn_block_parse(&b, &arena, text, size, NULL) == rv);
  }
  turn_arena_reset(&arena);

  /* The input as a history document. Some inputs also stop the walk early, which
   * must end it with the callback's value. */
  struct walk w = {size, 0, size % 7 == 3 ? 1 : SIZE_MAX};
  rv = turn_history_parse(text, size, &arena, on_block, &w, &err);
  if (w.next > w.stop_at) {
    CHECK(rv == 1 && w.next == w.stop_at + 1);
  } else if (rv != TURN_OK) {
    check_error(rv, &err, size);
  } else {
    CHECK(turn__json_validate(text, size, &arena) == TURN_OK);
  }

  turn_arena_fini(&arena);
  return 0;
}
