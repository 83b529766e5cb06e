/* See load_stats.h. */
#include "load_stats.h"

#include <stdlib.h>
#include <sys/resource.h>

uint64_t load_stats_raise_fds(uint64_t want) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
  if (rl.rlim_cur >= want) return rl.rlim_cur;
  rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want ? want : rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  return getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 0;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

void load_stats_sort(uint64_t *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_u64);
}

double load_stats_pct_ms(const uint64_t *v, size_t n, double p) {
  if (n == 0) return 0;
  size_t rank = (size_t)(p / 100.0 * (double)n + 0.999999);
  if (rank == 0) rank = 1;
  if (rank > n) rank = n;
  return (double)v[rank - 1] / 1e6;
}
