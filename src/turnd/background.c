/* See background.h. */
/* pthread_setname_np, SCHED_BATCH */
#define _GNU_SOURCE

#include "background.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>

void background_thread_begin(const char *name) {
  char full[16]; /* the kernel's limit, with the NUL */
  snprintf(full, sizeof full, "turnd-%s", name);
  (void)pthread_setname_np(pthread_self(), full);
  struct sched_param none = {0}; /* SCHED_BATCH has no static priority */
  (void)pthread_setschedparam(pthread_self(), SCHED_BATCH, &none);
}
