/* See thread_sched.h. Debian 12's glibc has no wrapper for sched_setattr, and
 * its <sched.h> and the kernel's <linux/sched/types.h> both define struct
 * sched_param: this file uses the kernel's alone. */
/* syscall */
#define _GNU_SOURCE

#include "thread_sched.h"

#include <linux/sched.h>
#include <linux/sched/types.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LOOP_SLICE_NS 100000u /* the shortest slice Linux grants */

/* The calling thread's policy and slice (0: the default), if it has the normal
 * policy; its nice value kept (a niced turnd stays niced; raising it would need
 * a privilege). */
static void set_own(uint32_t policy, uint64_t slice_ns, uint64_t flags) {
  struct sched_attr a = {0};
  if (syscall(SYS_sched_getattr, 0, &a, sizeof a, 0) != 0) return;
  if (a.sched_policy != SCHED_NORMAL) return; /* the operator's choice */
  a.size = sizeof a;
  a.sched_policy = policy;
  a.sched_flags = flags;
  a.sched_runtime = slice_ns;
  (void)syscall(SYS_sched_setattr, 0, &a, 0);
}

void loop_thread_begin(void) {
  /* Reset on fork: a thread or tool started later gets the default slice. */
  set_own(SCHED_NORMAL, LOOP_SLICE_NS, SCHED_FLAG_RESET_ON_FORK);
}

void background_thread_begin(const char *name) {
  char full[16]; /* the kernel's limit, with the NUL */
  snprintf(full, sizeof full, "turnd-%s", name);
  (void)prctl(PR_SET_NAME, full, 0, 0, 0);
  set_own(SCHED_BATCH, 0, 0);
}
