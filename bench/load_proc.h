/* load_proc: what the kernel says about another process (turnd) through /proc:
 * its resident memory now and at its peak, and the CPU time it has used. Linux
 * only; every reader fails softly (returns -1) when the process is gone. */
#ifndef BENCH_LOAD_PROC_H
#define BENCH_LOAD_PROC_H

#include <stdint.h>
#include <sys/types.h>

/* VmRSS and VmHWM of pid, in KiB. Returns 0, or -1 when /proc/PID/status cannot
 * be read or lacks them (then the outputs are untouched). */
int load_proc_mem(pid_t pid, uint64_t *rss_kib, uint64_t *hwm_kib);
/* User plus system CPU time pid has used, in seconds. Returns 0 or -1. */
int load_proc_cpu(pid_t pid, double *cpu_s);

#endif
