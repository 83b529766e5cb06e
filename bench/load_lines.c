/* load_lines: the quick check reads only the head of each line, which is enough to
 * prove that no event was lost, repeated or reordered on the way (seq without
 * gaps) and that the stream is one whole turn (turn first, end last). The full
 * check adds libturn's parse and order rules for every line. */
#include "load_lines.h"

#include <string.h>

static void fault(struct load_lines *l, enum load_lines_fault f) {
  if (l->fault == LOAD_LINES_OK) l->fault = f;
}

int load_lines_init(struct load_lines *l, bool full) {
  memset(l, 0, sizeof *l);
  if (!full) return 0;
  l->reader = turn_reader_new(TURN_READER_DEFAULT_MAX_LINE, NULL);
  l->order = turn_order_new(NULL);
  if (l->reader == NULL || l->order == NULL) {
    load_lines_fini(l);
    return -1;
  }
  return 0;
}

void load_lines_fini(struct load_lines *l) {
  turn_reader_free(l->reader);
  turn_order_free(l->order);
  l->reader = NULL;
  l->order = NULL;
}

/* Advances *p past lit when the bytes up to end start with it. */
static bool skip_lit(const char **p, const char *end, const char *lit, size_t len) {
  if ((size_t)(end - *p) < len || memcmp(*p, lit, len) != 0) return false;
  *p += len;
  return true;
}

/* Checks the head of a complete line; l->events is the number of lines before it,
 * so it is also the seq this line must carry. */
static void check_head(struct load_lines *l) {
  static const char prefix[] = "{\"v\":1,\"seq\":";
  static const char type[] = ",\"type\":\"";
  const char *p = l->head, *end = l->head + l->head_len;
  if (!skip_lit(&p, end, prefix, sizeof prefix - 1)) {
    fault(l, LOAD_LINES_SHAPE);
    return;
  }
  uint64_t seq = 0;
  const char *digits = p;
  while (p < end && *p >= '0' && *p <= '9' && p - digits < 19)
    seq = seq * 10 + (uint64_t)(*p++ - '0');
  if (p == digits || !skip_lit(&p, end, type, sizeof type - 1)) {
    fault(l, LOAD_LINES_SHAPE);
    return;
  }
  const char *name = p;
  const char *quote = memchr(name, '"', (size_t)(end - name));
  if (quote == NULL) {
    fault(l, LOAD_LINES_SHAPE);
    return;
  }
  size_t name_len = (size_t)(quote - name);
  bool is_end = name_len == 3 && memcmp(name, "end", 3) == 0;
  if (seq != l->events)
    fault(l, LOAD_LINES_SEQ);
  else if (seq == 0 && !(name_len == 4 && memcmp(name, "turn", 4) == 0))
    fault(l, LOAD_LINES_FIRST);
  else if (l->ended)
    fault(l, LOAD_LINES_AFTER_END);
  if (is_end) l->ended = true;
}

static int on_checked(void *ctx, const turn_event *ev, const turn_error *err) {
  struct load_lines *l = ctx;
  turn_error order_err;
  if (err == NULL && turn_order_step(l->order, ev, &order_err) == TURN_OK) return 0;
  if (l->fault == LOAD_LINES_OK) l->check_err = err != NULL ? *err : order_err;
  fault(l, LOAD_LINES_CHECK);
  return 0; /* go on: the rest of the stream still counts */
}

void load_lines_feed(struct load_lines *l, const char *data, size_t len) {
  l->bytes += len;
  if (l->reader != NULL) {
    int rv = turn_reader_feed(l->reader, data, len, on_checked, l);
    if (rv == TURN_E_NOMEM) fault(l, LOAD_LINES_NOMEM);
  }
  while (len > 0) {
    const char *nl = memchr(data, '\n', len);
    size_t take = nl != NULL ? (size_t)(nl - data) : len;
    if (l->head_len < LOAD_LINES_HEAD) {
      size_t room = LOAD_LINES_HEAD - l->head_len;
      size_t n = take < room ? take : room;
      memcpy(l->head + l->head_len, data, n);
      l->head_len += n;
    }
    l->line_len += take;
    if (nl == NULL) return;
    /* An empty line is no event; turnd writes none, and readers skip them. */
    if (l->line_len > 0) {
      check_head(l);
      l->events++;
    }
    l->head_len = 0;
    l->line_len = 0;
    data = nl + 1;
    len -= take + 1;
  }
}

enum load_lines_fault load_lines_finish(struct load_lines *l) {
  if (l->line_len > 0) fault(l, LOAD_LINES_CUT); /* a last line without its newline */
  if (l->reader != NULL) {
    if (turn_reader_finish(l->reader, on_checked, l) == TURN_E_NOMEM)
      fault(l, LOAD_LINES_NOMEM);
    turn_error err;
    if (turn_order_finish(l->order, &err) != TURN_OK) {
      if (l->fault == LOAD_LINES_OK) l->check_err = err;
      fault(l, LOAD_LINES_CHECK);
    }
  }
  if (!l->ended) fault(l, LOAD_LINES_CUT);
  return l->fault;
}

const char *load_lines_strfault(enum load_lines_fault f) {
  switch (f) {
#define LOAD_LINES_MSG(name, msg) \
  case LOAD_LINES_##name:         \
    return msg;
    LOAD_LINES_FAULTS(LOAD_LINES_MSG)
#undef LOAD_LINES_MSG
  }
  return "unknown fault";
}
