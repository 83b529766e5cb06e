/* The history's "at": an ISO 8601 date and time with every part in range, as
 * Python's isoformat() and JavaScript's toISOString() write it and both read it
 * back: a 'T' between date and time, 'Z' or an offset, no leap second, no year 0. */
#include "turn/turn.h"

static bool digits(const char *p, int n, int *out) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (p[i] < '0' || p[i] > '9') return false;
    v = v * 10 + (p[i] - '0');
  }
  *out = v;
  return true;
}

static int days_in_month(int year, int month) {
  static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : days[month - 1];
}

bool turn_iso8601_valid(turn_str s) {
  /* YYYY-MM-DDTHH:MM:SS is 19 bytes; then an optional fraction and zone. */
  const char *p = s.p;
  size_t n = s.len;
  int year, month, day, hour, minute, second;
  if (n < 19) return false;
  if (!digits(p, 4, &year) || p[4] != '-' || !digits(p + 5, 2, &month) || p[7] != '-' ||
      !digits(p + 8, 2, &day) || p[10] != 'T' || !digits(p + 11, 2, &hour) ||
      p[13] != ':' || !digits(p + 14, 2, &minute) || p[16] != ':' ||
      !digits(p + 17, 2, &second))
    return false;
  if (year < 1 || month < 1 || month > 12 || day < 1 ||
      day > days_in_month(year, month) || hour > 23 || minute > 59 || second > 59)
    return false;
  size_t i = 19;
  if (i < n && p[i] == '.') {
    size_t start = ++i;
    while (i < n && p[i] >= '0' && p[i] <= '9')
      i++;
    if (i == start || i - start > 9) return false;
  }
  if (i == n) return true;
  if (p[i] == 'Z' && i + 1 == n) return true;
  int zh, zm;
  if ((p[i] == '+' || p[i] == '-') && n - i == 6 && digits(p + i + 1, 2, &zh) &&
      p[i + 3] == ':' && digits(p + i + 4, 2, &zm))
    return zh <= 23 && zm <= 59;
  return false;
}
