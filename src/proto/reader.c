/* The NDJSON reader: push any chunk, get one callback per line. A line that sits
 * whole inside a chunk is parsed in place; only a line split across chunks is
 * copied, into a buffer capped at the line limit, so memory stays bounded by
 * max_line however the bytes arrive.
 *
 * States:
 *
 *   READING --line passes max_line--> SKIPPING --'\n'--> READING
 *      |                                  |
 *      +--------out of memory-------------+--> FAILED (absorbing)
 *
 *   READING  -> SKIPPING [turn_reader_feed: overlong line reported once]
 *   SKIPPING -> READING  [turn_reader_feed: its newline arrived]
 *   any      -> FAILED   [set_state on TURN_E_NOMEM; every call returns it after]
 *   In READING, pending holds the start of the current line (no newline yet). In
 *   SKIPPING, pending is empty. */
#include "mem.h"

#include <assert.h>
#include <string.h>

enum reader_state { READER_READING, READER_SKIPPING, READER_FAILED };

struct turn_reader {
  turn_mem mem; /* a copy: the caller's struct may go away */
  enum reader_state state;
  size_t max_line;     /* bytes of a line without its "\r\n" */
  turn_buf pending;    /* a line split across chunks; cap max_line + 1 ("\r") */
  uint64_t lines_done; /* lines delivered or reported (an overlong one as soon as it
                          passes the limit); the line being read is this + 1 */
  turn_arena arena;    /* the current line's strings; reset per line */
};

static void set_state(turn_reader *r, enum reader_state next) {
  r->state = next;
}

static inline bool check_invariants(const turn_reader *r) {
  return r->pending.len <= r->max_line + 1 &&
         (r->state == READER_READING || r->pending.len == 0);
}

turn_reader *turn_reader_new(size_t max_line, const turn_mem *mem) {
  if (max_line == 0 || max_line == SIZE_MAX) return NULL;
  turn_reader *r = turn__malloc(mem, sizeof *r);
  if (r == NULL) return NULL;
  memset(r, 0, sizeof *r);
  if (mem != NULL) r->mem = *mem;
  r->state = READER_READING;
  r->max_line = max_line;
  turn_buf_init(&r->pending, max_line + 1, &r->mem);
  turn_arena_init(&r->arena, &r->mem);
  return r;
}

void turn_reader_free(turn_reader *r) {
  if (r == NULL) return;
  turn_buf_fini(&r->pending);
  turn_arena_fini(&r->arena);
  turn_mem mem = r->mem;
  turn__free(&mem, r);
}

uint64_t turn_reader_line(const turn_reader *r) {
  return r->lines_done;
}

static int report(uint64_t line, int code, turn_event_cb cb, void *ctx) {
  turn_error err = {code, NULL, 0, line};
  return cb(ctx, NULL, &err);
}

/* Whether appending data[0..seg) to the pending line passes the limit. One byte
 * more than max_line may still be the '\r' of a "\r\n", so it waits for the next
 * byte only when it is a '\r'. */
static bool past_limit(const turn_reader *r, const char *data, size_t seg) {
  if (seg == 0) return false;
  if (r->pending.len > r->max_line) return true; /* it ends in '\r' and more follows */
  size_t room = r->max_line - r->pending.len;
  if (seg <= room) return false;
  return seg > room + 1 || data[seg - 1] != '\r';
}

/* One complete line without its '\n'; lines_done already counts it. */
static int deliver(turn_reader *r, const char *line, size_t len, turn_event_cb cb,
                   void *ctx) {
  if (len > 0 && line[len - 1] == '\r') len--;
  if (len == 0) return TURN_OK; /* blank lines carry nothing */
  if (len > r->max_line) return report(r->lines_done, TURN_E_TOOBIG, cb, ctx);
  turn_arena_reset(&r->arena);
  turn_event ev;
  turn_error err;
  int rv = turn_event_parse(&ev, &r->arena, line, len, &err);
  if (rv == TURN_E_NOMEM) {
    set_state(r, READER_FAILED);
    return rv;
  }
  if (rv != TURN_OK) {
    err.line = r->lines_done;
    return cb(ctx, NULL, &err);
  }
  return cb(ctx, &ev, NULL);
}

int turn_reader_feed(turn_reader *r, const char *data, size_t len, turn_event_cb cb,
                     void *ctx) {
  if (r->state == READER_FAILED) return TURN_E_NOMEM;
  while (len > 0) {
    const char *nl = memchr(data, '\n', len);
    size_t seg = nl != NULL ? (size_t)(nl - data) : len;
    size_t used = nl != NULL ? seg + 1 : seg;
    int rv = TURN_OK;

    if (r->state == READER_SKIPPING) {
      if (nl != NULL) set_state(r, READER_READING); /* counted when it was reported */
    } else if (r->pending.len == 0 && nl != NULL) {
      r->lines_done++;
      rv = deliver(r, data, seg, cb, ctx); /* the whole line is here: no copy */
    } else if (past_limit(r, data, seg)) {
      /* Past the limit before its end: count and report it now, drop what we hold. */
      turn_buf_reset(&r->pending);
      r->lines_done++;
      rv = report(r->lines_done, TURN_E_TOOBIG, cb, ctx);
      if (nl == NULL) set_state(r, READER_SKIPPING);
    } else {
      rv = turn_buf_append(&r->pending, data, seg);
      if (rv == TURN_E_NOMEM) {
        set_state(r, READER_FAILED);
        return rv;
      }
      if (nl != NULL) {
        r->lines_done++;
        rv = deliver(r, r->pending.data, r->pending.len, cb, ctx);
        turn_buf_reset(&r->pending);
      }
    }
    assert(check_invariants(r));
    if (r->state == READER_FAILED) return TURN_E_NOMEM;
    if (rv != TURN_OK) return rv;
    data += used;
    len -= used;
  }
  return TURN_OK;
}

int turn_reader_finish(turn_reader *r, turn_event_cb cb, void *ctx) {
  if (r->state == READER_FAILED) return TURN_E_NOMEM;
  int rv = TURN_OK;
  if (r->state == READER_SKIPPING) {
    set_state(r, READER_READING); /* the overlong last line was reported and counted */
  } else if (r->pending.len > 0) {
    turn_buf_reset(&r->pending);
    r->lines_done++;
    rv = report(r->lines_done, TURN_E_PARTIAL, cb, ctx);
  }
  assert(check_invariants(r));
  return rv;
}
