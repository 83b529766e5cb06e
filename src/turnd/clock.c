/* The daemon's clock (see clock.h). */
#include "clock.h"

#include <time.h>

uint64_t turnd_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}
