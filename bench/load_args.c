/* See load_args.h. */
#include "load_args.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool load_args_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out) {
  if (s == NULL || *s < '0' || *s > '9') return false;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < min || v > max) return false;
  *out = v;
  return true;
}

bool load_args_url(const char *url, char *host_out, size_t host_cap, char *port_out,
                   size_t port_cap) {
  const char *p = url;
  if (strncmp(p, "http://", 7) != 0) return false;
  p += 7;
  const char *host = p, *host_end;
  if (*p == '[') {
    host = p + 1;
    host_end = strchr(host, ']');
    if (host_end == NULL) return false;
    p = host_end + 1;
  } else {
    host_end = p + strcspn(p, ":/");
    p = host_end;
  }
  size_t len = (size_t)(host_end - host);
  if (len == 0 || len >= host_cap) return false;
  size_t port_len = 0;
  if (*p == ':') {
    p++;
    port_len = strspn(p, "0123456789");
    if (port_len == 0 || port_len >= port_cap) return false;
  }
  if (p[port_len] != '\0' && p[port_len] != '/') return false;
  if (port_len == 0 && port_cap < 3) return false;
  memcpy(host_out, host, len);
  host_out[len] = '\0';
  if (port_len == 0) {
    memcpy(port_out, "80", 3);
  } else {
    memcpy(port_out, p, port_len);
    port_out[port_len] = '\0';
  }
  return true;
}
