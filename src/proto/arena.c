/* turn_arena: a bump allocator for everything one parse returns. Reset keeps the
 * largest block, so a steady stream of lines allocates nothing after warm-up. */
#include "mem.h"

#include <stdalign.h>

struct turn__arena_block {
  struct turn__arena_block *next;
  size_t cap;  /* bytes of data[] */
  size_t used; /* bytes of data[] handed out, always a multiple of ALIGN */
  alignas(max_align_t) char data[];
};

#define ARENA_ALIGN       alignof(max_align_t)
#define ARENA_BLOCK_BYTES 16384

void turn_arena_init(turn_arena *a, const turn_mem *mem) {
  a->head = NULL;
  a->mem = mem;
  a->block_len = ARENA_BLOCK_BYTES;
}

void turn_arena_fini(turn_arena *a) {
  struct turn__arena_block *b = a->head;
  while (b != NULL) {
    struct turn__arena_block *next = b->next;
    turn__free(a->mem, b);
    b = next;
  }
  a->head = NULL;
}

void turn_arena_reset(turn_arena *a) {
  struct turn__arena_block *keep = NULL;
  struct turn__arena_block *b = a->head;
  while (b != NULL) {
    struct turn__arena_block *next = b->next;
    if (keep == NULL || b->cap > keep->cap) {
      turn__free(a->mem, keep);
      keep = b;
    } else {
      turn__free(a->mem, b);
    }
    b = next;
  }
  if (keep != NULL) {
    keep->next = NULL;
    keep->used = 0;
  }
  a->head = keep;
}

void *turn_arena_alloc(turn_arena *a, size_t len) {
  size_t rounded = (len + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1);
  if (rounded < len) return NULL;
  struct turn__arena_block *b = a->head;
  if (b == NULL || b->cap - b->used < rounded) {
    size_t cap = rounded > a->block_len ? rounded : a->block_len;
    if (cap > SIZE_MAX - sizeof *b) return NULL;
    b = turn__malloc(a->mem, sizeof *b + cap);
    if (b == NULL) return NULL;
    b->cap = cap;
    b->used = 0;
    b->next = a->head;
    a->head = b;
  }
  void *p = b->data + b->used;
  b->used += rounded;
  return p;
}
