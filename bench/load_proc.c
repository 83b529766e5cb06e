/* load_proc: /proc/PID/status and /proc/PID/stat read with one read() each into a
 * stack buffer, so sampling turnd every few milliseconds costs the generator
 * little and allocates nothing. */
#include "load_proc.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reads the file whole into buf (NUL-terminated). Returns its length or -1. */
static ssize_t read_small(const char *path, char *buf, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, cap - 1);
  close(fd);
  if (n < 0) return -1;
  buf[n] = '\0';
  return n;
}

/* The number after "\nName:" in a status file, in its unit (kB there). */
static int status_field(const char *text, const char *name, uint64_t *out) {
  const char *p = strstr(text, name);
  if (p == NULL) return -1;
  char *end;
  unsigned long long v = strtoull(p + strlen(name), &end, 10);
  if (end == p + strlen(name)) return -1;
  *out = v;
  return 0;
}

int load_proc_mem(pid_t pid, uint64_t *rss_kib, uint64_t *hwm_kib) {
  char path[64], text[4096];
  snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
  if (read_small(path, text, sizeof text) < 0) return -1;
  uint64_t rss, hwm;
  if (status_field(text, "\nVmRSS:", &rss) != 0 ||
      status_field(text, "\nVmHWM:", &hwm) != 0)
    return -1;
  *rss_kib = rss;
  *hwm_kib = hwm;
  return 0;
}

int load_proc_cpu(pid_t pid, double *cpu_s) {
  char path[64], text[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
  if (read_small(path, text, sizeof text) < 0) return -1;
  /* The command name (field 2) may hold spaces and parentheses: fields are
   * counted from the last ')'. utime and stime are fields 14 and 15. */
  const char *p = strrchr(text, ')');
  if (p == NULL) return -1;
  p++;
  for (int field = 2; field < 13; field++) {
    p = strchr(p + 1, ' ');
    if (p == NULL) return -1;
  }
  char *end, *end2;
  unsigned long long utime = strtoull(p, &end, 10);
  if (end == p) return -1;
  unsigned long long stime = strtoull(end, &end2, 10);
  if (end2 == end) return -1;
  long hz = sysconf(_SC_CLK_TCK);
  if (hz <= 0) return -1;
  *cpu_s = (double)(utime + stime) / (double)hz;
  return 0;
}
