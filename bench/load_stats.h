/* load_stats: what the bench programs share about their own process and their
 * figures: a descriptor limit that fits their connections, and nearest-rank
 * percentiles of times in nanoseconds. */
#ifndef BENCH_LOAD_STATS_H
#define BENCH_LOAD_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Raises the soft limit on open descriptors to want, as far as the hard limit
 * allows. Returns the soft limit now in force (0 when it cannot be read). */
uint64_t load_stats_raise_fds(uint64_t want);

/* Sorts v[0..n) ascending, for load_stats_pct_ms. */
void load_stats_sort(uint64_t *v, size_t n);
/* Nearest-rank percentile p (0-100) of sorted v[0..n) in nanoseconds, as
 * milliseconds; 0 when n == 0. */
double load_stats_pct_ms(const uint64_t *v, size_t n, double p);

#endif
