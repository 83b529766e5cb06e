/* Bounded texts for the schema module's paths and messages (schema_impl.h):
 * every text fits its buffer, a cut is marked "...", and no control byte of a
 * schema's key gets through. */
#include "schema_impl.h"

#include "turn/turn.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void schema_text_init(struct schema_text *t, char *p, size_t cap) {
  t->p = p;
  t->cap = cap;
  t->len = 0;
  if (cap > 0) p[0] = '\0';
}

/* Appends s[0..n). Control bytes become '?', so a schema's key cannot break a
 * log line. A cut ends in "...", taking back earlier text if the buffer is
 * already full, and never splits a UTF-8 sequence. */
void schema_text_put(struct schema_text *t, const char *s, size_t n) {
  if (t->len >= t->cap) return;
  size_t room = t->cap - 1 - t->len;
  bool cut = n > room;
  if (cut) n = turn_utf8_cut(s, n, room >= 3 ? room - 3 : 0);
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    t->p[t->len++] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
  }
  if (cut) {
    size_t max_end = t->cap > 4 ? t->cap - 4 : 0; /* room for "...\0" */
    t->len = turn_utf8_cut(t->p, t->len, max_end);
    for (int dots = 0; dots < 3 && t->len < t->cap - 1; dots++)
      t->p[t->len++] = '.';
    t->p[t->len] = '\0';
    t->len = t->cap;
    return;
  }
  t->p[t->len] = '\0';
}

void schema_text_str(struct schema_text *t, const char *s) {
  schema_text_put(t, s, strlen(s));
}

void schema_text_printf(struct schema_text *t, const char *fmt, ...) {
  char buf[128];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  schema_text_put(t, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* Truncates back to an earlier length (a path segment is popped). */
void schema_text_restore(struct schema_text *t, size_t len) {
  t->len = len;
  if (len < t->cap) t->p[len] = '\0';
}

/* "/key" as a JSON Pointer segment: '~' is "~0" and '/' is "~1". */
void schema_text_key(struct schema_text *t, const char *key, size_t len) {
  char buf[2 * SCHEMA_PATH_CAP]; /* longer keys are cut by text_put anyway */
  size_t n = 0;
  buf[n++] = '/';
  for (size_t i = 0; i < len && n + 2 <= sizeof buf; i++) {
    if (key[i] == '~' || key[i] == '/') {
      buf[n++] = '~';
      buf[n++] = key[i] == '~' ? '0' : '1';
    } else {
      buf[n++] = key[i];
    }
  }
  schema_text_put(t, buf, n);
}

/* A limit from the schema. %g follows the locale's decimal point, which the
 * message must not (the daemon may run with a decimal comma). */
void schema_text_number(struct schema_text *t, const json_t *num) {
  if (json_is_integer(num)) {
    schema_text_printf(t, "%lld", (long long)json_integer_value(num));
    return;
  }
  char buf[48];
  snprintf(buf, sizeof buf, "%.15g", json_real_value(num));
  for (char *ch = buf; *ch != '\0'; ch++)
    if (*ch == ',') *ch = '.';
  schema_text_str(t, buf);
}

static int dump_to_text(const char *buffer, size_t size, void *data) {
  struct schema_text *t = data;
  schema_text_put(t, buffer, size);
  return t->len >= t->cap ? -1 : 0; /* full: stop jansson early */
}

/* Part of the schema as compact ASCII JSON (enum and const values). */
void schema_text_json(struct schema_text *t, const json_t *j) {
  json_dump_callback(j, dump_to_text, t,
                     JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
}
