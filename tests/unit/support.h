/* Helpers shared by the unit tests: reading files and an allocator that fails on
 * demand and counts what is still live, for the allocation-failure tests. */
#ifndef TURN_TEST_SUPPORT_H
#define TURN_TEST_SUPPORT_H

#include "turn/turn.h"

#include <stddef.h>

/* Returns the file's bytes (NUL-terminated, owned: free()) or NULL. */
char *support_read_file(const char *path, size_t *len);

/* Allocation n (1-based) and every later one fail when fail_at == n; 0 never. */
struct support_failmem {
  unsigned long fail_at;
  unsigned long calls; /* allocations attempted (malloc and realloc) */
  long live;           /* blocks allocated and not yet freed */
  turn_mem mem;        /* hook to pass to libturn */
};

void support_failmem_init(struct support_failmem *fm, unsigned long fail_at);

#endif
