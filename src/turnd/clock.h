/* The daemon's clock: Unix time in milliseconds, the one clock the agent core
 * is given (event times, approvals' deadlines, sessions' times). */
#ifndef TURND_CLOCK_H
#define TURND_CLOCK_H

#include <stdint.h>

uint64_t turnd_now_ms(void);

#endif
