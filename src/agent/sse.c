/* The text/event-stream parser (provider.h): bytes in any slices, whole events
 * out, by the WHATWG "interpreting an event stream" rules. A line that sits
 * whole inside a feed is read in place; only a line split across feeds is
 * copied. Memory is bounded by max_event_bytes: the event being built (its data
 * and its name) plus the line being read never pass it, however the bytes come.
 *
 * States:
 *
 *   BOM --3 bytes matched / a byte that does not match--> LINE <--> AFTER_CR
 *    |                                                     |           |
 *    +------------------ limit passed, out of memory ------+-----------+--> FAILED
 *
 *   BOM      -> LINE     [sse_feed: the BOM is complete, or the bytes so far were
 *                         not one and are replayed as the first line's start]
 *   LINE     -> AFTER_CR [sse_feed: a feed ended right after a CR]
 *   AFTER_CR -> LINE     [sse_feed: the next byte came; an LF is that CR's line end]
 *   any      -> FAILED   [fail(): absorbing, sse_feed returns -1 from then on]
 *   In BOM, line, data and name are empty and bom_len < 3. In AFTER_CR, line is
 *   empty: the CR already ended it. */
#include "provider.h"

#include "turn/turn.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

enum sse_state { SSE_BOM, SSE_LINE, SSE_AFTER_CR, SSE_FAILED };

static const char bom[3] = {'\xef', '\xbb', '\xbf'};

struct sse {
  enum sse_state state;
  size_t max_event_bytes; /* data.len + name.len + line.len never passes it */
  sse_event_cb *cb;
  void *ctx;
  size_t bom_len; /* BOM bytes matched so far, in SSE_BOM */
  turn_buf line;  /* the start of a line split across feeds, without its end */
  turn_buf data;  /* the event's data lines joined with "\n", no trailing "\n" */
  turn_buf name;  /* the event's "event" field; empty means "message" */
  bool has_data;  /* a data line came, even an empty one: the spec's data buffer
                     holds "\n" then, so a blank line dispatches data "" */
};

static void set_state(struct sse *p, enum sse_state next) {
  p->state = next;
}

static bool check_invariants(const struct sse *p) {
  bool bounded = p->data.len <= p->max_event_bytes &&
                 p->name.len <= p->max_event_bytes - p->data.len &&
                 p->line.len <= p->max_event_bytes - p->data.len - p->name.len;
  switch (p->state) {
  case SSE_BOM:
    return bounded && p->bom_len < 3 && p->line.len == 0 && p->data.len == 0 &&
           p->name.len == 0 && !p->has_data;
  case SSE_AFTER_CR:
    return bounded && p->line.len == 0;
  case SSE_LINE:
    return bounded;
  case SSE_FAILED:
    return true;
  }
  return false;
}

struct sse *sse_new(size_t max_event_bytes, sse_event_cb *cb, void *ctx) {
  struct sse *p = malloc(sizeof *p);
  if (p == NULL) return NULL;
  memset(p, 0, sizeof *p);
  set_state(p, SSE_BOM);
  p->max_event_bytes = max_event_bytes;
  p->cb = cb;
  p->ctx = ctx;
  /* One byte over the limit for the NUL each string gets before the callback. */
  size_t cap = max_event_bytes < SIZE_MAX ? max_event_bytes + 1 : SIZE_MAX;
  turn_buf_init(&p->line, cap, NULL);
  turn_buf_init(&p->data, cap, NULL);
  turn_buf_init(&p->name, cap, NULL);
  return p;
}

void sse_free(struct sse *p) {
  if (p == NULL) return;
  turn_buf_fini(&p->line);
  turn_buf_fini(&p->data);
  turn_buf_fini(&p->name);
  free(p);
}

/* The error is sticky: the half-built event is dropped with the buffers' memory,
 * since nothing will ever be dispatched again. */
static void fail(struct sse *p) {
  turn_buf_fini(&p->line);
  turn_buf_fini(&p->data);
  turn_buf_fini(&p->name);
  p->has_data = false;
  set_state(p, SSE_FAILED);
}

/* Room left for the line being read. */
static size_t line_room(const struct sse *p) {
  return p->max_event_bytes - p->data.len - p->name.len - p->line.len;
}

static void dispatch(struct sse *p) {
  if (p->has_data) {
    /* Both strings are NUL-terminated for the callback; the NULs are not counted
     * in len, so the next event starts from empty buffers all the same. */
    if (turn_buf_append(&p->data, "", 1) != TURN_OK ||
        turn_buf_append(&p->name, "", 1) != TURN_OK) {
      fail(p);
      return;
    }
    /* The name goes out as a C string, so one holding a NUL ends there; one that
     * ends up empty that way is the default, as an empty name is. */
    const char *name = p->name.data[0] != '\0' ? p->name.data : "message";
    p->cb(p->ctx, name, p->data.data, p->data.len - 1);
  }
  /* The spec resets the name even when nothing was dispatched. */
  turn_buf_reset(&p->data);
  turn_buf_reset(&p->name);
  p->has_data = false;
}

static bool field_is(const char *name, size_t len, const char *want) {
  return len == strlen(want) && memcmp(name, want, len) == 0;
}

/* One whole line without its line end, in place or from p->line. */
static void process_line(struct sse *p, const char *line, size_t len) {
  if (len == 0) {
    dispatch(p);
    return;
  }
  if (line[0] == ':') return; /* a comment */
  const char *colon = memchr(line, ':', len);
  size_t name_len = colon != NULL ? (size_t)(colon - line) : len;
  const char *value = colon != NULL ? colon + 1 : line + len;
  size_t value_len = len - (size_t)(value - line);
  if (value_len > 0 && value[0] == ' ') {
    value++;
    value_len--;
  }
  /* The line passed the limit check, and each field's value is shorter than its
   * line by more than the "\n" it may add, so the buffers stay within the limit
   * and these appends can only fail for memory. */
  int rv = TURN_OK;
  if (field_is(line, name_len, "data")) {
    if (p->has_data) rv = turn_buf_append(&p->data, "\n", 1);
    if (rv == TURN_OK) rv = turn_buf_append(&p->data, value, value_len);
    p->has_data = true;
  } else if (field_is(line, name_len, "event")) {
    turn_buf_reset(&p->name);
    rv = turn_buf_append(&p->name, value, value_len);
  } else if (colon != NULL && field_is(line, name_len, "error")) {
    /* Not a field of the rules, which would ignore it: llama.cpp's server ends
     * a failed stream with "error: {...}" (then "data: [DONE]"), and that is
     * the only place it says why. Read as "event: error" with that data. With
     * its colon the line is at least as long as the "\n", the value and the
     * name it adds, so the bound holds; a bare "error" is ignored. */
    turn_buf_reset(&p->name);
    rv = turn_buf_append(&p->name, "error", 5);
    if (rv == TURN_OK && p->has_data) rv = turn_buf_append(&p->data, "\n", 1);
    if (rv == TURN_OK) rv = turn_buf_append(&p->data, value, value_len);
    p->has_data = true;
  }
  /* "id" and "retry" steer a browser's reconnection, which the shell does not
   * do; any other field is ignored, as the rules say. */
  if (rv != TURN_OK) fail(p);
}

/* Adds a piece of the current line, which has not ended yet. */
static void add_to_line(struct sse *p, const char *bytes, size_t len) {
  if (len > line_room(p) || turn_buf_append(&p->line, bytes, len) != TURN_OK) fail(p);
}

/* Reads bytes[0..len) in SSE_LINE, up to the end or to a failure. */
static void scan(struct sse *p, const char *bytes, size_t len) {
  size_t i = 0;
  while (i < len && p->state == SSE_LINE) {
    size_t j = i;
    while (j < len && bytes[j] != '\n' && bytes[j] != '\r')
      j++;
    if (j == len) {
      add_to_line(p, bytes + i, len - i);
      return;
    }
    if (p->line.len == 0) {
      /* Checked here as add_to_line() would, so the outcome does not depend on
       * whether the line was split across feeds. */
      if (j - i > line_room(p)) {
        fail(p);
        return;
      }
      process_line(p, bytes + i, j - i);
    } else {
      add_to_line(p, bytes + i, j - i);
      if (p->state != SSE_LINE) return;
      /* The line stops counting against the limit as its value moves into
       * data or name; its bytes stay put until the next append. */
      size_t line_len = p->line.len;
      p->line.len = 0;
      process_line(p, p->line.data, line_len);
    }
    if (p->state != SSE_LINE) return;
    if (bytes[j] == '\r') {
      if (j + 1 == len) {
        set_state(p, SSE_AFTER_CR); /* its LF, if any, comes with the next feed */
        return;
      }
      if (bytes[j + 1] == '\n') j++;
    }
    i = j + 1;
  }
}

int sse_feed(struct sse *p, const char *bytes, size_t len) {
  size_t i = 0;
  if (p->state == SSE_BOM) {
    while (i < len && p->bom_len < sizeof bom && bytes[i] == bom[p->bom_len]) {
      i++;
      p->bom_len++;
    }
    if (p->bom_len == sizeof bom) {
      set_state(p, SSE_LINE);
    } else if (i < len) {
      /* Not a BOM after all: what matched is the start of the first line. */
      set_state(p, SSE_LINE);
      scan(p, bom, p->bom_len);
    }
  }
  if (p->state == SSE_AFTER_CR && i < len) {
    if (bytes[i] == '\n') i++;
    set_state(p, SSE_LINE);
  }
  if (p->state == SSE_LINE) scan(p, bytes + i, len - i);
  assert(check_invariants(p));
  return p->state == SSE_FAILED ? -1 : 0;
}

void sse_finish(struct sse *p) {
  if (p->state == SSE_FAILED) return;
  /* An event without its blank line, and a last line without its end, are
   * discarded: the rules dispatch only on a blank line. */
  turn_buf_reset(&p->line);
  turn_buf_reset(&p->data);
  turn_buf_reset(&p->name);
  p->has_data = false;
  assert(check_invariants(p));
}
