/* The daemon's state: everything a route handler may reach, owned by main. */
#ifndef TURND_DAEMON_H
#define TURND_DAEMON_H

#include "agent/script.h"
#include "options.h"

#include <stdint.h>

struct event_base;
struct run;
struct session;

struct turnd {
  struct event_base *base;   /* the one loop */
  const struct options *opt; /* borrowed from main */
  struct script script;      /* the script model (demo or --model script:FILE) */
  struct run *runs;          /* live and recently ended turns, newest first */
  struct session *sessions;  /* sessions of this process, newest first */
};

/* Unix time in milliseconds: the one clock the agent core is given. */
uint64_t turnd_now_ms(void);
/* n random bytes as 2n lowercase hex digits into out[2n+1]. Returns 0 or -1. */
int turnd_random_hex(char *out, size_t n);

#endif
