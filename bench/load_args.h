/* load_args: the command-line values the bench programs share: bounded numbers
 * and the URL of the turnd they drive. */
#ifndef BENCH_LOAD_ARGS_H
#define BENCH_LOAD_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* s as a decimal number in [min, max] into *out. Returns false (with *out
 * untouched) for anything else. */
bool load_args_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* http://HOST[:PORT][/...], HOST may be [v6]: the host and the port (80 when
 * none is given) into host[0..host_cap) and port[0..port_cap). The path is not
 * read: each program has its own routes. Returns false when url is not of that
 * form or a part does not fit. */
bool load_args_url(const char *url, char *host, size_t host_cap, char *port,
                   size_t port_cap);

#endif
