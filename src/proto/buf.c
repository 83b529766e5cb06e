/* turn_buf: a byte buffer that grows up to a cap fixed at init and never past it,
 * so a peer cannot make us buffer without bound. Invariants: len <= alloc <= cap,
 * data == NULL iff alloc == 0. */
#include "mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void turn_buf_init(turn_buf *b, size_t cap, const turn_mem *mem) {
  b->data = NULL;
  b->len = 0;
  b->alloc = 0;
  b->cap = cap;
  b->mem = mem;
}

void turn_buf_fini(turn_buf *b) {
  turn__free(b->mem, b->data);
  b->data = NULL;
  b->len = 0;
  b->alloc = 0;
}

void turn_buf_reset(turn_buf *b) {
  b->len = 0;
}

int turn_buf_reserve(turn_buf *b, size_t extra) {
  if (extra > b->cap - b->len) return TURN_E_TOOBIG;
  size_t need = b->len + extra;
  if (need <= b->alloc) return TURN_OK;
  size_t grown = b->alloc < 256 ? 256 : b->alloc;
  /* 1.5x: a long-lived buffer (a live turn's log) wastes at most a third of
   * its memory, and appending stays amortised O(1). */
  while (grown < need)
    grown = grown > SIZE_MAX / 3 ? need : grown + grown / 2;
  if (grown > b->cap) grown = b->cap;
  char *data = turn__realloc(b->mem, b->data, grown);
  if (data == NULL) return TURN_E_NOMEM;
  b->data = data;
  b->alloc = grown;
  return TURN_OK;
}

int turn_buf_append(turn_buf *b, const void *data, size_t len) {
  if (len == 0) return TURN_OK;
  int rv = turn_buf_reserve(b, len);
  if (rv != TURN_OK) return rv;
  memcpy(b->data + b->len, data, len);
  b->len += len;
  return TURN_OK;
}

int turn_buf_shrink(turn_buf *b) {
  if (b->alloc == b->len) return TURN_OK;
  if (b->len == 0) {
    turn_buf_fini(b);
    return TURN_OK;
  }
  char *data = turn__realloc(b->mem, b->data, b->len);
  if (data == NULL) return TURN_E_NOMEM;
  b->data = data;
  b->alloc = b->len;
  return TURN_OK;
}

void *turn_grow(void *items, size_t n, size_t *cap, size_t size, size_t first) {
  if (n < *cap) return items;
  size_t grown = *cap == 0 ? first : *cap * 2;
  if (grown < *cap || grown > SIZE_MAX / size) return NULL;
  void *p = realloc(items, grown * size);
  if (p != NULL) *cap = grown;
  return p;
}
