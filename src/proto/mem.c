/* The allocation hook: every allocation in libturn goes through turn__malloc and
 * friends, so tests can inject a failing allocator and embedders their own. */
#include "mem.h"

#include <stdlib.h>
#include <string.h>

void *turn__malloc(const turn_mem *mem, size_t len) {
  if (mem != NULL && mem->malloc != NULL) return mem->malloc(len, mem->user);
  return malloc(len);
}

void *turn__realloc(const turn_mem *mem, void *ptr, size_t len) {
  if (mem != NULL && mem->realloc != NULL) return mem->realloc(ptr, len, mem->user);
  return realloc(ptr, len);
}

void turn__free(const turn_mem *mem, void *ptr) {
  if (ptr == NULL) return;
  if (mem != NULL && mem->free != NULL) {
    mem->free(ptr, mem->user);
    return;
  }
  free(ptr);
}

turn_str turn_str_c(const char *cstr) {
  turn_str s = {cstr, cstr != NULL ? strlen(cstr) : 0};
  return s;
}

bool turn_str_eq(turn_str a, turn_str b) {
  return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}
