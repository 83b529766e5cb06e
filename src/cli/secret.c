/* See secret.h. A plain memset before free() is a dead store the optimiser may
 * remove; writing through a volatile pointer it must keep. */
#include "secret.h"

void secret_wipe(void *p, size_t len) {
  volatile unsigned char *v = p;
  while (len-- > 0)
    *v++ = 0;
}
