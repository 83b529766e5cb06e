/* What the fuzz targets share: a check whose failure is a finding, and a growing
 * byte log of what one run saw, so that two runs (whole and split) compare with
 * memcmp. Linked into every target and its replay program. */
#ifndef TURN_FUZZ_SUPPORT_H
#define TURN_FUZZ_SUPPORT_H

#include <stddef.h>

/* A failed check is a finding: say which one, then crash for the fuzzer. */
#define CHECK(cond) ((cond) ? (void)0 : fuzz_check_failed(__FILE__, __LINE__, #cond))

_Noreturn void fuzz_check_failed(const char *file, int line, const char *what);

/* Bytes appended in order; p is NULL while cap is 0. Free p when done. */
struct fuzz_log {
  unsigned char *p;
  size_t len, cap;
};

/* Appends data[0..len) (len may be 0); running out of memory is a finding. */
void fuzz_log_put(struct fuzz_log *l, const void *data, size_t len);

#endif
