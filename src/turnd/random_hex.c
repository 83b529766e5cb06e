/* Random ids from the kernel (see random_hex.h). */
#include "random_hex.h"

#include <stdio.h>
#include <sys/random.h>

int turnd_random_hex(char *out, size_t n) {
  unsigned char bytes[64];
  if (n > sizeof bytes) return -1;
  if (getrandom(bytes, n, 0) != (ssize_t)n) return -1;
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = hex[bytes[i] >> 4];
    out[2 * i + 1] = hex[bytes[i] & 15];
  }
  out[2 * n] = '\0';
  return 0;
}
