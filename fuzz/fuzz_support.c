/* See fuzz_support.h. */
#include "fuzz_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fuzz_check_failed(const char *file, int line, const char *what) {
  fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
  abort();
}

void fuzz_log_put(struct fuzz_log *l, const void *data, size_t len) {
  if (len > l->cap - l->len) {
    size_t cap = l->cap < 256 ? 256 : l->cap;
    while (len > cap - l->len)
      cap *= 2;
    unsigned char *p = realloc(l->p, cap);
    CHECK(p != NULL);
    l->p = p;
    l->cap = cap;
  }
  if (len > 0) memcpy(l->p + l->len, data, len);
  l->len += len;
}
