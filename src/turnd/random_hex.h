/* Random ids (turns, sessions, approval requests) from the kernel. */
#ifndef TURND_RANDOM_HEX_H
#define TURND_RANDOM_HEX_H

#include <stddef.h>

/* n random bytes as 2n lowercase hex digits into out[2n+1]. Returns 0 or -1. */
int turnd_random_hex(char *out, size_t n);

#endif
