/* Unit tests for turn_buf (src/proto/buf.c) and turn_arena (src/proto/arena.c):
 * the buffer's hard cap (an append past it fails and changes nothing), reserve and
 * reset; the arena's alignment, reuse after reset and allocations bigger than a
 * block. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support.h"
#include "turn/turn.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

/* The documented invariants: len <= alloc <= cap; data == NULL iff alloc == 0. */
static void check_buf(const turn_buf *b) {
  assert_true(b->len <= b->alloc);
  assert_true(b->alloc <= b->cap);
  assert_int_equal(b->data == NULL, b->alloc == 0);
}

/* An allocator that refuses anything over a limit instead of asking libc (ASan
 * aborts on absurd sizes rather than returning NULL). */
struct limited {
  size_t limit;
  long live;
  turn_mem mem;
};

static void *lim_malloc(size_t len, void *user) {
  struct limited *l = user;
  if (len > l->limit) return NULL;
  void *p = malloc(len);
  if (p != NULL) l->live++;
  return p;
}

static void *lim_realloc(void *ptr, size_t len, void *user) {
  struct limited *l = user;
  if (len > l->limit) return NULL;
  void *p = realloc(ptr, len);
  if (p != NULL && ptr == NULL) l->live++;
  return p;
}

static void lim_free(void *ptr, void *user) {
  struct limited *l = user;
  if (ptr != NULL) l->live--;
  free(ptr);
}

static void limited_init(struct limited *l, size_t limit) {
  l->limit = limit;
  l->live = 0;
  l->mem.malloc = lim_malloc;
  l->mem.realloc = lim_realloc;
  l->mem.free = lim_free;
  l->mem.user = l;
}

/* ------------------------------------------------------------------ buf */

static void test_buf_init_is_empty(void **state) {
  (void)state;
  turn_buf b;
  turn_buf_init(&b, 100, NULL);
  assert_null(b.data);
  assert_int_equal(b.len, 0);
  assert_int_equal(b.alloc, 0);
  assert_int_equal(b.cap, 100);
  check_buf(&b);
  turn_buf_fini(&b);
  assert_null(b.data);
  assert_int_equal(b.alloc, 0);
}

static void test_buf_append_past_cap_is_toobig(void **state) {
  (void)state;
  turn_buf b;
  turn_buf_init(&b, 10, NULL);
  assert_int_equal(turn_buf_append(&b, "abcdef", 6), TURN_OK);
  check_buf(&b);
  char *data = b.data;
  size_t alloc = b.alloc;
  assert_int_equal(turn_buf_append(&b, "ghijk", 5), TURN_E_TOOBIG);
  /* Unchanged: length, bytes, memory. */
  assert_int_equal(b.len, 6);
  assert_ptr_equal(b.data, data);
  assert_int_equal(b.alloc, alloc);
  assert_memory_equal(b.data, "abcdef", 6);
  check_buf(&b);
  /* Exactly up to the cap is fine, one byte more is not. */
  assert_int_equal(turn_buf_append(&b, "ghij", 4), TURN_OK);
  assert_int_equal(b.len, 10);
  assert_memory_equal(b.data, "abcdefghij", 10);
  assert_int_equal(turn_buf_append(&b, "k", 1), TURN_E_TOOBIG);
  assert_int_equal(b.len, 10);
  assert_memory_equal(b.data, "abcdefghij", 10);
  assert_int_equal(turn_buf_append(&b, "", 0), TURN_OK);
  assert_int_equal(b.len, 10);
  check_buf(&b);
  turn_buf_fini(&b);
}

static void test_buf_append_to_empty_past_cap(void **state) {
  (void)state;
  turn_buf b;
  turn_buf_init(&b, 3, NULL);
  assert_int_equal(turn_buf_append(&b, "abcd", 4), TURN_E_TOOBIG);
  assert_null(b.data);
  assert_int_equal(b.len, 0);
  assert_int_equal(b.alloc, 0);
  /* A zero cap takes nothing but empty appends. */
  turn_buf z;
  turn_buf_init(&z, 0, NULL);
  assert_int_equal(turn_buf_append(&z, "", 0), TURN_OK);
  assert_int_equal(turn_buf_append(&z, "a", 1), TURN_E_TOOBIG);
  assert_null(z.data);
  check_buf(&z);
  turn_buf_fini(&z);
  turn_buf_fini(&b);
}

/* Growing one byte at a time up to a cap that is not a power of two. */
static void test_buf_grows_to_cap(void **state) {
  (void)state;
  const size_t cap = 100003;
  turn_buf b;
  turn_buf_init(&b, cap, NULL);
  for (size_t i = 0; i < cap; i++) {
    char ch = (char)('a' + i % 26);
    assert_int_equal(turn_buf_append(&b, &ch, 1), TURN_OK);
    if (i % 4096 == 0) check_buf(&b);
  }
  check_buf(&b);
  assert_int_equal(b.len, cap);
  assert_int_equal(b.alloc, cap); /* clipped to the cap, never past it */
  for (size_t i = 0; i < cap; i++)
    if (b.data[i] != (char)('a' + i % 26)) fail_msg("byte %zu", i);
  assert_int_equal(turn_buf_append(&b, "x", 1), TURN_E_TOOBIG);
  assert_int_equal(b.len, cap);
  turn_buf_fini(&b);
}

static void test_buf_big_append(void **state) {
  (void)state;
  const size_t len = 3u << 20;
  char *big = malloc(len);
  assert_non_null(big);
  for (size_t i = 0; i < len; i++)
    big[i] = (char)(i * 7);
  turn_buf b;
  turn_buf_init(&b, SIZE_MAX, NULL);
  assert_int_equal(turn_buf_append(&b, "x", 1), TURN_OK);
  assert_int_equal(turn_buf_append(&b, big, len), TURN_OK);
  assert_int_equal(b.len, len + 1);
  assert_int_equal(b.data[0], 'x');
  assert_memory_equal(b.data + 1, big, len);
  check_buf(&b);
  turn_buf_fini(&b);
  free(big);
}

static void test_buf_reserve(void **state) {
  (void)state;
  turn_buf b;
  turn_buf_init(&b, 1000, NULL);
  assert_int_equal(turn_buf_reserve(&b, 0), TURN_OK);
  check_buf(&b);
  assert_int_equal(turn_buf_reserve(&b, 1001), TURN_E_TOOBIG);
  assert_null(b.data);
  assert_int_equal(b.alloc, 0);
  assert_int_equal(turn_buf_reserve(&b, 300), TURN_OK);
  assert_int_equal(b.len, 0);
  assert_true(b.alloc >= 300);
  check_buf(&b);
  /* The room is there: writing into it needs no more memory. */
  char *data = b.data;
  memset(b.data, 'r', 300);
  b.len = 300;
  assert_int_equal(turn_buf_append(&b, NULL, 0), TURN_OK);
  assert_ptr_equal(b.data, data);
  /* Reserve counts from len, up to the cap. */
  assert_int_equal(turn_buf_reserve(&b, 701), TURN_E_TOOBIG);
  assert_int_equal(b.len, 300);
  assert_ptr_equal(b.data, data);
  assert_int_equal(turn_buf_reserve(&b, 700), TURN_OK);
  assert_int_equal(b.alloc, 1000);
  assert_int_equal(b.len, 300);
  for (size_t i = 0; i < 300; i++)
    assert_int_equal(b.data[i], 'r');
  check_buf(&b);
  /* Sizes that would overflow len + extra are refused, not wrapped. */
  assert_int_equal(turn_buf_reserve(&b, SIZE_MAX), TURN_E_TOOBIG);
  assert_int_equal(turn_buf_reserve(&b, SIZE_MAX - 299), TURN_E_TOOBIG);
  assert_int_equal(b.len, 300);
  turn_buf_fini(&b);
}

static void test_buf_reserve_huge_is_nomem(void **state) {
  (void)state;
  struct limited lim;
  limited_init(&lim, 1u << 20);
  turn_buf b;
  turn_buf_init(&b, SIZE_MAX, &lim.mem);
  assert_int_equal(turn_buf_append(&b, "abc", 3), TURN_OK);
  char *data = b.data;
  size_t alloc = b.alloc;
  assert_int_equal(turn_buf_reserve(&b, SIZE_MAX - 3), TURN_E_NOMEM);
  assert_int_equal(turn_buf_reserve(&b, SIZE_MAX - 2), TURN_E_TOOBIG);
  assert_int_equal(turn_buf_append(&b, "x", SIZE_MAX / 2), TURN_E_NOMEM);
  assert_ptr_equal(b.data, data);
  assert_int_equal(b.alloc, alloc);
  assert_int_equal(b.len, 3);
  assert_memory_equal(b.data, "abc", 3);
  turn_buf_fini(&b);
  assert_int_equal(lim.live, 0);
}

static void test_buf_nomem_leaves_buffer_unchanged(void **state) {
  (void)state;
  struct support_failmem fm;
  support_failmem_init(&fm, 2);
  turn_buf b;
  turn_buf_init(&b, 1u << 20, &fm.mem);
  assert_int_equal(turn_buf_append(&b, "hello", 5), TURN_OK);
  char *data = b.data;
  size_t alloc = b.alloc;
  char big[4096];
  memset(big, 'z', sizeof big);
  assert_int_equal(turn_buf_append(&b, big, sizeof big), TURN_E_NOMEM);
  assert_ptr_equal(b.data, data);
  assert_int_equal(b.alloc, alloc);
  assert_int_equal(b.len, 5);
  assert_memory_equal(b.data, "hello", 5);
  /* Memory back: the same append works. */
  fm.fail_at = 0;
  assert_int_equal(turn_buf_append(&b, big, sizeof big), TURN_OK);
  assert_int_equal(b.len, 5 + sizeof big);
  assert_memory_equal(b.data, "hello", 5);
  check_buf(&b);
  turn_buf_fini(&b);
  assert_int_equal(fm.live, 0);
}

/* A buffer done growing gives back what it reserved past its bytes, and all of
 * it when empty; out of memory, it stays as it was, bytes and all. */
static void test_buf_shrink_gives_memory_back(void **state) {
  (void)state;
  struct support_failmem fm;
  support_failmem_init(&fm, 0);
  turn_buf b;
  turn_buf_init(&b, 1u << 20, &fm.mem);
  assert_int_equal(turn_buf_shrink(&b), TURN_OK); /* nothing to give */
  assert_null(b.data);
  assert_int_equal(turn_buf_append(&b, "hello", 5), TURN_OK);
  assert_true(b.alloc > 5);
  fm.fail_at = fm.calls + 1; /* the shrink's realloc fails */
  char *data = b.data;
  size_t alloc = b.alloc;
  assert_int_equal(turn_buf_shrink(&b), TURN_E_NOMEM);
  assert_ptr_equal(b.data, data);
  assert_int_equal(b.alloc, alloc);
  fm.fail_at = 0;
  assert_int_equal(turn_buf_shrink(&b), TURN_OK);
  assert_int_equal(b.alloc, 5);
  assert_memory_equal(b.data, "hello", 5);
  check_buf(&b);
  assert_int_equal(turn_buf_append(&b, "!", 1), TURN_OK); /* it grows again */
  assert_memory_equal(b.data, "hello!", 6);
  turn_buf_reset(&b);
  assert_int_equal(turn_buf_shrink(&b), TURN_OK);
  assert_null(b.data);
  assert_int_equal(b.alloc, 0);
  check_buf(&b);
  assert_int_equal(fm.live, 0);
  turn_buf_fini(&b);
}

static void test_buf_reset_keeps_memory(void **state) {
  (void)state;
  struct support_failmem fm;
  support_failmem_init(&fm, 0);
  turn_buf b;
  turn_buf_init(&b, 4096, &fm.mem);
  assert_int_equal(turn_buf_append(&b, "first line", 10), TURN_OK);
  char *data = b.data;
  size_t alloc = b.alloc;
  unsigned long calls = fm.calls;
  turn_buf_reset(&b);
  assert_int_equal(b.len, 0);
  assert_ptr_equal(b.data, data);
  assert_int_equal(b.alloc, alloc);
  assert_int_equal(b.cap, 4096);
  check_buf(&b);
  /* The reset buffer is reused without allocating and holds the new bytes. */
  assert_int_equal(turn_buf_append(&b, "second", 6), TURN_OK);
  assert_int_equal(fm.calls, calls);
  assert_int_equal(b.len, 6);
  assert_memory_equal(b.data, "second", 6);
  /* After a reset the whole cap is available again. */
  turn_buf_reset(&b);
  char full[4096];
  memset(full, 'f', sizeof full);
  assert_int_equal(turn_buf_append(&b, full, sizeof full), TURN_OK);
  assert_int_equal(turn_buf_append(&b, "x", 1), TURN_E_TOOBIG);
  turn_buf_reset(&b);
  turn_buf_reset(&b);
  assert_int_equal(b.len, 0);
  turn_buf_fini(&b);
  assert_int_equal(fm.live, 0);
}

/* ---------------------------------------------------------------- arena */

static bool aligned(const void *p) {
  return (uintptr_t)p % alignof(max_align_t) == 0;
}

static void test_arena_alloc_is_aligned(void **state) {
  (void)state;
  turn_arena a;
  turn_arena_init(&a, NULL);
  enum { N = 2000 };
  static char *ptrs[N];
  static size_t lens[N];
  for (size_t i = 0; i < N; i++) {
    lens[i] = (i * 37) % 61; /* 0 .. 60, odd sizes included */
    ptrs[i] = turn_arena_alloc(&a, lens[i]);
    assert_non_null(ptrs[i]);
    if (!aligned(ptrs[i]))
      fail_msg("allocation %zu of %zu bytes is misaligned", i, lens[i]);
    memset(ptrs[i], (int)(i & 0xFF), lens[i]);
  }
  /* No two allocations overlap: each still holds its own pattern. */
  for (size_t i = 0; i < N; i++)
    for (size_t k = 0; k < lens[i]; k++)
      if ((unsigned char)ptrs[i][k] != (i & 0xFF))
        fail_msg("allocation %zu overwritten", i);
  /* A double and a pointer can be stored in any of them. */
  double *d = turn_arena_alloc(&a, sizeof *d);
  assert_non_null(d);
  *d = 1.5;
  void **pp = turn_arena_alloc(&a, sizeof *pp);
  assert_non_null(pp);
  *pp = d;
  assert_true(*(double *)*pp == 1.5);
  turn_arena_fini(&a);
}

static void test_arena_reset_keeps_working(void **state) {
  (void)state;
  struct support_failmem fm;
  support_failmem_init(&fm, 0);
  turn_arena a;
  turn_arena_init(&a, &fm.mem);
  for (int round = 0; round < 5; round++) {
    /* About 100 KB in small pieces: several blocks. */
    char *first = NULL;
    for (int i = 0; i < 1000; i++) {
      char *p = turn_arena_alloc(&a, 100);
      assert_non_null(p);
      assert_true(aligned(p));
      memset(p, 'a' + round, 100);
      if (i == 0) first = p;
    }
    assert_int_equal(first[0], 'a' + round);
    assert_int_equal(first[99], 'a' + round);
    assert_true(fm.live >= 1);
    turn_arena_reset(&a);
    assert_int_equal(fm.live, 1); /* one block kept for the next parse */
  }
  /* After warm-up a small parse allocates nothing. */
  unsigned long calls = fm.calls;
  for (int round = 0; round < 10; round++) {
    for (int i = 0; i < 100; i++)
      assert_non_null(turn_arena_alloc(&a, 64));
    turn_arena_reset(&a);
  }
  assert_int_equal(fm.calls, calls);
  turn_arena_reset(&a);
  turn_arena_reset(&a);
  turn_arena_fini(&a);
  assert_int_equal(fm.live, 0);
}

static void test_arena_big_allocations(void **state) {
  (void)state;
  struct support_failmem fm;
  support_failmem_init(&fm, 0);
  turn_arena a;
  turn_arena_init(&a, &fm.mem);
  char *small = turn_arena_alloc(&a, 10);
  assert_non_null(small);
  memcpy(small, "0123456789", 10);
  const size_t big_len = 1u << 20;
  char *big = turn_arena_alloc(&a, big_len);
  assert_non_null(big);
  assert_true(aligned(big));
  memset(big, 'B', big_len);
  /* Small allocations after a big one still work and do not touch it. */
  char *after = turn_arena_alloc(&a, 10);
  assert_non_null(after);
  assert_true(aligned(after));
  memset(after, 'c', 10);
  assert_memory_equal(small, "0123456789", 10);
  assert_int_equal(big[0], 'B');
  assert_int_equal(big[big_len - 1], 'B');
  /* Several big ones in a row. */
  for (int i = 0; i < 4; i++) {
    char *p = turn_arena_alloc(&a, big_len + (size_t)i * 1000 + 1);
    assert_non_null(p);
    memset(p, 'x', big_len + (size_t)i * 1000 + 1);
  }
  turn_arena_reset(&a);
  assert_int_equal(fm.live, 1);
  /* The kept block is the largest: the same big allocation needs no malloc. */
  unsigned long calls = fm.calls;
  char *again = turn_arena_alloc(&a, big_len);
  assert_non_null(again);
  memset(again, 'A', big_len);
  assert_int_equal(fm.calls, calls);
  turn_arena_fini(&a);
  assert_int_equal(fm.live, 0);
}

static void test_arena_impossible_sizes(void **state) {
  (void)state;
  struct limited lim;
  limited_init(&lim, 64u << 20);
  turn_arena a;
  turn_arena_init(&a, &lim.mem);
  assert_null(turn_arena_alloc(&a, SIZE_MAX));
  assert_null(turn_arena_alloc(&a, SIZE_MAX - 1));
  assert_null(turn_arena_alloc(&a, SIZE_MAX - alignof(max_align_t)));
  assert_null(turn_arena_alloc(&a, SIZE_MAX / 2));
  assert_null(turn_arena_alloc(&a, (size_t)1 << 40));
  /* The arena is still fine. */
  char *p = turn_arena_alloc(&a, 32);
  assert_non_null(p);
  memset(p, 1, 32);
  turn_arena_fini(&a);
  assert_int_equal(lim.live, 0);
}

static void test_arena_nomem_then_recovers(void **state) {
  (void)state;
  struct support_failmem fm;
  support_failmem_init(&fm, 1);
  turn_arena a;
  turn_arena_init(&a, &fm.mem);
  assert_null(turn_arena_alloc(&a, 16));
  assert_int_equal(fm.live, 0);
  fm.fail_at = 0;
  char *p = turn_arena_alloc(&a, 16);
  assert_non_null(p);
  memset(p, 7, 16);
  /* A block is full: the next block fails, the first one's memory stays good. */
  fm.fail_at = fm.calls + 1;
  assert_null(turn_arena_alloc(&a, 1u << 16));
  assert_int_equal(p[15], 7);
  fm.fail_at = 0;
  assert_non_null(turn_arena_alloc(&a, 1u << 16));
  turn_arena_fini(&a);
  assert_int_equal(fm.live, 0);
}

/* turn_grow: room for one more item, the count doubling from first; the items
 * already there stay; past what size_t can count it fails and changes nothing. */
static void test_grow_doubles_and_keeps_items(void **state) {
  (void)state;
  int *items = NULL;
  size_t n = 0, cap = 0;
  for (int i = 0; i < 100; i++) {
    int *grown = turn_grow(items, n, &cap, sizeof *grown, 4);
    assert_non_null(grown);
    items = grown;
    items[n++] = i;
    assert_true(n <= cap);
  }
  assert_int_equal(cap, 128); /* 4, 8, ..., 128 */
  for (int i = 0; i < 100; i++)
    assert_int_equal(items[i], i);
  /* With room, the same array comes back. */
  assert_ptr_equal(turn_grow(items, 100, &cap, sizeof *items, 4), items);
  assert_int_equal(cap, 128);
  /* Doubling past SIZE_MAX bytes: NULL, and nothing changed. */
  size_t full = 128;
  assert_null(turn_grow(items, 128, &full, SIZE_MAX / 200, 4));
  assert_int_equal(full, 128);
  free(items);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_buf_init_is_empty),
      cmocka_unit_test(test_buf_append_past_cap_is_toobig),
      cmocka_unit_test(test_buf_append_to_empty_past_cap),
      cmocka_unit_test(test_buf_grows_to_cap),
      cmocka_unit_test(test_buf_big_append),
      cmocka_unit_test(test_buf_reserve),
      cmocka_unit_test(test_buf_reserve_huge_is_nomem),
      cmocka_unit_test(test_buf_nomem_leaves_buffer_unchanged),
      cmocka_unit_test(test_buf_reset_keeps_memory),
      cmocka_unit_test(test_buf_shrink_gives_memory_back),
      cmocka_unit_test(test_grow_doubles_and_keeps_items),
      cmocka_unit_test(test_arena_alloc_is_aligned),
      cmocka_unit_test(test_arena_reset_keeps_working),
      cmocka_unit_test(test_arena_big_allocations),
      cmocka_unit_test(test_arena_impossible_sizes),
      cmocka_unit_test(test_arena_nomem_then_recovers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
