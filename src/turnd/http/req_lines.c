/* What libevent took of a request (see req_lines.h). Each rule here copies what
 * libevent 2.1.12's http.c does, so that the two read a line the same way:
 * evbuffer_readln with EVBUFFER_EOL_CRLF cuts a line at "\n" or "\r\n";
 * evhttp_parse_headers_ takes the key up to ':', skips spaces (not tabs) before
 * the value and trims spaces and tabs after it, and folds a line that starts
 * with a space or a tab into the header before it; evhttp_get_body reads a body
 * as chunked when the first Transfer-Encoding header is "chunked" (any case);
 * evhttp_handle_chunked_read takes a chunk size with strtoll(..., 16) and
 * refuses a line that is empty, that has anything but a space after the number,
 * or whose number is negative. evbuffer_readln takes a line's content and then
 * its end, in two drains of the input (none for empty content): a line is known
 * when its end is taken, and it is what was taken just before. */
#include "req_lines.h"

#include <event2/util.h>
#include <stdlib.h>
#include <string.h>

void req_lines_reset(struct req_lines *t) {
  memset(t, 0, sizeof *t);
  t->part = REQ_PART_LINE;
}

bool req_lines_wants_front(const struct req_lines *t) {
  return t->front_len < REQ_LINES_FRONT && memchr(t->front, '\n', t->front_len) == NULL;
}

void req_lines_front(struct req_lines *t, const char *p, size_t len) {
  t->front_len = len < REQ_LINES_FRONT ? len : REQ_LINES_FRONT;
  memcpy(t->front, p, t->front_len);
}

/* Whether libevent reads line as a chunk size. An empty line is skipped, not
 * refused, so it counts as one. */
static bool size_line_ok(const char *line) {
  if (line[0] == '\0') return true;
  char *end;
  long long n = strtoll(line, &end, 16);
  return (*end == '\0' || *end == ' ') && n >= 0;
}

/* A header line, whole (line) or, when too long to keep, only its first bytes
 * (line NULL; t->taken has them): a Transfer-Encoding header too long to read
 * is the first one all the same, and not known to say chunked. */
static void header_line(struct req_lines *t, const char *line) {
  const char *p = line != NULL ? line : t->taken;
  if (line == NULL && t->taken_len == 0) return;
  if (p[0] == ' ' || p[0] == '\t') {    /* folded into the header before */
    if (t->te_last) t->chunked = false; /* "chunked" and more is not chunked */
    return;
  }
  t->te_last = false;
  static const char te[] = "transfer-encoding:";
  if (t->te_seen || (line == NULL && t->taken_len < sizeof te - 1) ||
      evutil_ascii_strncasecmp(p, te, sizeof te - 1) != 0)
    return;
  t->te_seen = t->te_last = true;
  if (line == NULL) return;
  const char *v = line + sizeof te - 1;
  v += strspn(v, " ");
  size_t len = strlen(v);
  while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t'))
    len--;
  t->chunked = len == 7 && evutil_ascii_strncasecmp(v, "chunked", 7) == 0;
}

/* A line was taken: line (its content, a string) or, when it was too long to
 * keep, NULL. */
static void line_taken(struct req_lines *t, const char *line) {
  switch (t->part) {
  case REQ_PART_LINE:
    t->part = REQ_PART_HEADERS;
    break;
  case REQ_PART_HEADERS:
    if (line != NULL && line[0] == '\0')
      t->part = REQ_PART_BODY;
    else
      header_line(t, line);
    break;
  case REQ_PART_BODY:
    /* A line too long to keep cannot be judged: the 413 stays. */
    t->last_bad = line != NULL && !size_line_ok(line);
    break;
  }
}

void req_lines_took(struct req_lines *t, size_t n) {
  size_t known = n < t->front_len ? n : t->front_len;
  const char *p = t->front;
  bool line_end = (n == 1 && known == 1 && p[0] == '\n') ||
                  (n == 2 && known == 2 && p[0] == '\r' && p[1] == '\n');
  if (!line_end) { /* a line's content, or data: kept until a line end */
    memcpy(t->taken, p, known);
    t->taken_len = known;
    t->taken_cut = known < n;
    return;
  }
  char line[REQ_LINES_FRONT + 1];
  memcpy(line, t->taken, t->taken_len);
  line[t->taken_len] = '\0';
  line_taken(t, t->taken_cut ? NULL : line); /* a string, cut at a NUL as libevent's */
  t->taken_len = 0;
  t->taken_cut = false;
}

bool req_lines_bad_chunk(const struct req_lines *t) {
  return t->part == REQ_PART_BODY && t->chunked && t->last_bad;
}
