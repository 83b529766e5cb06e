/* See support.h. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>

char *support_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *data = malloc(cap + 1);
  size_t got;
  while (data != NULL && (got = fread(data + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      char *grown = realloc(data, cap * 2 + 1);
      if (grown == NULL) {
        free(data);
        data = NULL;
        break;
      }
      data = grown;
      cap *= 2;
    }
  }
  fclose(f);
  if (data == NULL) return NULL;
  data[n] = '\0';
  *len = n;
  return data;
}

static bool should_fail(struct support_failmem *fm) {
  fm->calls++;
  return fm->fail_at != 0 && fm->calls >= fm->fail_at;
}

static void *fm_malloc(size_t len, void *user) {
  struct support_failmem *fm = user;
  if (should_fail(fm)) return NULL;
  void *p = malloc(len);
  if (p != NULL) fm->live++;
  return p;
}

static void *fm_realloc(void *ptr, size_t len, void *user) {
  struct support_failmem *fm = user;
  if (should_fail(fm)) return NULL;
  void *p = realloc(ptr, len);
  if (p != NULL && ptr == NULL) fm->live++;
  return p;
}

static void fm_free(void *ptr, void *user) {
  struct support_failmem *fm = user;
  if (ptr != NULL) fm->live--;
  free(ptr);
}

void support_failmem_init(struct support_failmem *fm, unsigned long fail_at) {
  fm->fail_at = fail_at;
  fm->calls = 0;
  fm->live = 0;
  fm->mem.malloc = fm_malloc;
  fm->mem.realloc = fm_realloc;
  fm->mem.free = fm_free;
  fm->mem.user = fm;
}
