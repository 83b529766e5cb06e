/* Fuzz target: the tool input validator (src/agent/schema.c). The input is a
 * schema and a value, split at the first NUL byte (or in half when there is
 * none), each parsed by jansson. Besides never crashing, hanging or leaking:
 * schema_validate is deterministic and returns a known code; a schema that
 * schema_check accepts never gives SCHEMA_E_SCHEMA; every error text is a
 * terminated, printable UTF-8 string; and no string of the value that the
 * schema does not itself contain shows up in an error (see leaks()). */
#include "fuzz_support.h"
#include "agent/schema.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* NUL-terminated within cap, well-formed UTF-8, no control characters. */
static void check_text(const char *s, size_t cap) {
  const char *end = memchr(s, '\0', cap);
  CHECK(end != NULL);
  size_t len = (size_t)(end - s);
  for (size_t i = 0; i < len;) {
    unsigned char ch = (unsigned char)s[i];
    CHECK(ch >= 0x20 && ch != 0x7f);
    size_t n = ch < 0x80 ? 1 : ch >= 0xf0 ? 4 : ch >= 0xe0 ? 3 : 2;
    CHECK(ch < 0x80 || ch >= 0xc0);
    CHECK(i + n <= len);
    for (size_t k = 1; k < n; k++)
      CHECK(((unsigned char)s[i + k] & 0xc0) == 0x80);
    i += n;
  }
}

/* Every string and object key in a JSON value. */
struct strings {
  const char **p;
  size_t *len;
  size_t n, cap;
};

static void strings_add(struct strings *l, const char *s, size_t len) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 16;
    l->p = realloc(l->p, l->cap * sizeof *l->p);
    l->len = realloc(l->len, l->cap * sizeof *l->len);
    CHECK(l->p != NULL && l->len != NULL);
  }
  l->p[l->n] = s;
  l->len[l->n++] = len;
}

static void strings_collect(struct strings *l, json_t *j) {
  if (json_is_string(j)) {
    strings_add(l, json_string_value(j), json_string_length(j));
  } else if (json_is_array(j)) {
    for (size_t i = 0; i < json_array_size(j); i++)
      strings_collect(l, json_array_get(j, i));
  } else if (json_is_object(j)) {
    for (void *it = json_object_iter(j); it != NULL; it = json_object_iter_next(j, it)) {
      strings_add(l, json_object_iter_key(it), json_object_iter_key_len(it));
      strings_collect(l, json_object_iter_value(it));
    }
  }
}

static bool contains(const char *hay, size_t hay_len, const char *needle, size_t len) {
  for (size_t i = 0; len <= hay_len && i <= hay_len - len; i++)
    if (memcmp(hay + i, needle, len) == 0) return true;
  return false;
}

/* A value string that an error text could only hold by copying it from the
 * value: non-ASCII (the fixed texts and the enum dumps are ASCII), none of the
 * bytes the validator adds around schema strings ("/", "~", "?", quotes, dots,
 * spaces), and not inside any string or key of the schema. */
static bool telltale(const char *s, size_t len, const struct strings *schema_strings) {
  if (len < 4) return false;
  bool high = false;
  for (size_t i = 0; i < len; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch < 0x20 || strchr("/~?\". ", ch) != NULL) return false;
    high |= ch >= 0x80;
  }
  if (!high) return false;
  for (size_t i = 0; i < schema_strings->n; i++)
    if (contains(schema_strings->p[i], schema_strings->len[i], s, len)) return false;
  return true;
}

static void leaks(json_t *schema, json_t *value, const struct schema_error *err) {
  struct strings in_schema = {0}, in_value = {0};
  strings_collect(&in_schema, schema);
  strings_collect(&in_value, value);
  for (size_t i = 0; i < in_value.n; i++) {
    if (!telltale(in_value.p[i], in_value.len[i], &in_schema)) continue;
    CHECK(!contains(err->message, strlen(err->message), in_value.p[i], in_value.len[i]));
    CHECK(!contains(err->path, strlen(err->path), in_value.p[i], in_value.len[i]));
  }
  free(in_schema.p);
  free(in_schema.len);
  free(in_value.p);
  free(in_value.len);
}

static void run(json_t *schema, json_t *value) {
  char why[128];
  memset(why, 'x', sizeof why);
  int checked = schema_check(schema, why, sizeof why);
  CHECK(checked == 0 || checked == -1);
  if (checked == 0)
    CHECK(why[0] == 'x'); /* untouched */
  else
    check_text(why, sizeof why);

  struct schema_error err, again;
  memset(&err, 0, sizeof err);
  memset(&again, 0, sizeof again);
  int rv = schema_validate(schema, value, &err);
  CHECK(rv == SCHEMA_OK || rv == SCHEMA_E_INVALID || rv == SCHEMA_E_SCHEMA ||
        rv == SCHEMA_E_LIMIT || rv == SCHEMA_E_NOMEM);
  CHECK(checked != 0 || rv != SCHEMA_E_SCHEMA);
  CHECK(schema_validate(schema, value, &again) == rv);
  if (rv == SCHEMA_OK) return;
  CHECK(err.code == rv);
  CHECK(memcmp(&err, &again, sizeof err) == 0);
  check_text(err.path, sizeof err.path);
  check_text(err.message, sizeof err.message);
  CHECK(err.path[0] == '\0' || err.path[0] == '/');
  if (schema != NULL && value != NULL) leaks(schema, value, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *nul = memchr(data, 0, size);
  size_t schema_len = nul != NULL ? (size_t)(nul - data) : size / 2;
  size_t value_off = nul != NULL ? schema_len + 1 : schema_len;
  size_t flags = JSON_DECODE_ANY | JSON_ALLOW_NUL;
  json_t *schema = json_loadb((const char *)data, schema_len, flags, NULL);
  json_t *value =
      json_loadb((const char *)data + value_off, size - value_off, flags, NULL);

  run(schema, value);
  /* Swapped too: values make odd schemas, and schemas nested values. */
  run(value, schema);
  if (schema != NULL) run(schema, schema);

  json_decref(schema);
  json_decref(value);
  return 0;
}
