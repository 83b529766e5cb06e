/* Fuzz target: the text/event-stream parser (src/agent/sse.c). The first bytes
 * choose the event limit and a cycle of chunk sizes; the rest is the stream. It
 * is fed once whole and once in those chunks, and both runs must dispatch the
 * same events and fail alike (the "every split" rule); both must also match a
 * plain whole-buffer reading of the WHATWG rules written here, so a bug the
 * incremental parser makes the same way in both runs is caught too.
 *
 * Input: byte 0   max_event_bytes: 0x00-0x7f -> 0-127, 0x80-0xff -> 64-8192 by 64
 *        byte 1   n - 1: how many chunk sizes follow (1-8)
 *        n bytes  chunk sizes - 1 (1-256), used in a cycle
 *        rest     the stream */
#include "fuzz_support.h"
#include "agent/provider.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One event: its name and data, each with its length first. */
static void log_event(struct fuzz_log *l, const char *event, size_t event_len,
                      const char *data, size_t len) {
  fuzz_log_put(l, &event_len, sizeof event_len);
  fuzz_log_put(l, event, event_len);
  fuzz_log_put(l, &len, sizeof len);
  fuzz_log_put(l, data, len);
}

struct run {
  size_t max;
  bool failed;         /* a feed returned -1 */
  struct fuzz_log log; /* every event, then the outcome */
};

static void on_event(void *ctx, const char *event, const char *data, size_t len) {
  struct run *run = ctx;
  CHECK(!run->failed); /* nothing is dispatched once the stream broke the limit */
  CHECK(event != NULL && data != NULL);
  size_t event_len = strlen(event);
  CHECK(event_len > 0); /* an empty name is reported as "message" */
  CHECK(data[len] == '\0');
  CHECK(len <= run->max);
  log_event(&run->log, event, event_len, data, len);
}

/* ------------------------------------------------ the reference reading */

static bool field_is(const char *name, size_t len, const char *want) {
  return len == strlen(want) && memcmp(name, want, len) == 0;
}

/* The rules read over the whole stream at once: lines are cut first, then each
 * is interpreted. The limit is checked as sse.c documents it: the event's data
 * and name plus the line, for every line including an unterminated last one. */
static void reference(const char *s, size_t len, size_t max, struct fuzz_log *l) {
  size_t i = 0;
  /* A BOM is skipped; so is a stream that is only the start of one, which sse.c
   * holds back until it knows and then drops with the unterminated line. */
  if (memcmp(s, "\xef\xbb\xbf", len < 3 ? len : 3) == 0) i = len < 3 ? len : 3;
  char *buf = malloc(len + 1), *name = malloc(len + 1);
  CHECK(buf != NULL && name != NULL);
  size_t data_len = 0, name_len = 0;
  bool has_data = false, failed = false;
  while (i < len) {
    size_t j = i;
    while (j < len && s[j] != '\r' && s[j] != '\n')
      j++;
    const char *line = s + i;
    size_t n = j - i;
    if (data_len + name_len + n > max) {
      failed = true;
      break;
    }
    if (j == len) break; /* an unterminated last line is dropped */
    i = j + 1;
    if (s[j] == '\r' && i < len && s[i] == '\n') i++;

    if (n == 0) {
      if (has_data) {
        buf[data_len] = '\0';
        name[name_len] = '\0';
        if (name_len == 0 || name[0] == '\0') /* a C string: a NUL ends it */
          log_event(l, "message", 7, buf, data_len);
        else
          log_event(l, name, strlen(name), buf, data_len);
      }
      data_len = name_len = 0;
      has_data = false;
      continue;
    }
    if (line[0] == ':') continue;
    const char *colon = memchr(line, ':', n);
    size_t field_len = colon != NULL ? (size_t)(colon - line) : n;
    const char *value = colon != NULL ? colon + 1 : line + n;
    size_t value_len = n - (size_t)(value - line);
    if (value_len > 0 && value[0] == ' ') {
      value++;
      value_len--;
    }
    if (field_is(line, field_len, "data")) {
      if (has_data) buf[data_len++] = '\n';
      memcpy(buf + data_len, value, value_len);
      data_len += value_len;
      has_data = true;
    } else if (field_is(line, field_len, "event")) {
      memcpy(name, value, value_len);
      name_len = value_len;
    } else if (colon != NULL && field_is(line, field_len, "error")) {
      /* llama.cpp's "error: {...}": an "error" event with that data. */
      if (has_data) buf[data_len++] = '\n';
      memcpy(buf + data_len, value, value_len);
      data_len += value_len;
      has_data = true;
      memcpy(name, "error", 5);
      name_len = 5;
    }
  }
  fuzz_log_put(l, failed ? "X" : "F", 1);
  free(buf);
  free(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  size_t max = data[0] < 0x80 ? data[0] : (size_t)(data[0] - 0x7f) * 64;
  size_t n_sizes = (size_t)(data[1] & 7) + 1;
  if (size < 2 + n_sizes) return 0;
  const uint8_t *sizes = data + 2;
  const char *stream = (const char *)data + 2 + n_sizes;
  size_t len = size - 2 - n_sizes;

  /* Whole: one feed. */
  struct run whole = {max, false, {NULL, 0, 0}};
  struct sse *p = sse_new(max, on_event, &whole);
  CHECK(p != NULL);
  whole.failed = sse_feed(p, stream, len) < 0;
  sse_finish(p);
  sse_free(p);
  fuzz_log_put(&whole.log, whole.failed ? "X" : "F", 1);

  /* Chunked: an empty feed first (a no-op), then the chunk cycle. */
  struct run split = {max, false, {NULL, 0, 0}};
  p = sse_new(max, on_event, &split);
  CHECK(p != NULL);
  CHECK(sse_feed(p, stream, 0) == 0);
  CHECK(split.log.len == 0);
  size_t off = 0;
  for (size_t k = 0; off < len; k++) {
    size_t n = (size_t)sizes[k % n_sizes] + 1;
    if (n > len - off) n = len - off;
    int rv = sse_feed(p, stream + off, n);
    CHECK(!split.failed || rv == -1); /* the error is sticky */
    split.failed = rv < 0;
    off += n;
  }
  sse_finish(p);
  sse_free(p);
  fuzz_log_put(&split.log, split.failed ? "X" : "F", 1);

  struct fuzz_log ref = {NULL, 0, 0};
  reference(stream, len, max, &ref);

  CHECK(whole.log.len == split.log.len);
  CHECK(memcmp(whole.log.p, split.log.p, whole.log.len) == 0);
  CHECK(whole.log.len == ref.len);
  CHECK(memcmp(whole.log.p, ref.p, ref.len) == 0);

  free(whole.log.p);
  free(split.log.p);
  free(ref.p);
  return 0;
}
