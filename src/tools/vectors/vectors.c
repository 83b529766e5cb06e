/* Helpers shared by the sections of turn-vectors: the failure counter, the
 * scratch arena, and how a line and an encoder's output go into the JSON file.
 * A line that is not valid UTF-8 is written as hex, never dropped or mangled. */
#include "vectors.h"

#include <stdio.h>
#include <stdlib.h>

turn_arena vectors_arena;
int vectors_failures;

_Noreturn void vectors_die(const char *what) {
  fprintf(stderr, "turn-vectors: %s\n", what);
  exit(1);
}

void vectors_check(bool ok, const char *what, const char *detail) {
  if (!ok) {
    fprintf(stderr, "turn-vectors: %s: %s\n", what, detail);
    vectors_failures++;
  }
}

static bool utf8_ok(const char *s, size_t len) {
  json_t *probe = json_stringn(s, len);
  bool ok = probe != NULL;
  json_decref(probe);
  return ok;
}

/* A line goes in as "line" when it is valid UTF-8, else as "line_hex". */
void vectors_put_line(json_t *obj, const char *key, const char *line, size_t len) {
  if (utf8_ok(line, len)) {
    json_object_set_new(obj, key, json_stringn(line, len));
    return;
  }
  char *hex = malloc(len * 2 + 1);
  if (hex == NULL) vectors_die("out of memory");
  for (size_t i = 0; i < len; i++)
    snprintf(hex + 2 * i, 3, "%02x", (unsigned char)line[i]);
  char hex_key[32];
  snprintf(hex_key, sizeof hex_key, "%s_hex", key);
  json_object_set_new(obj, hex_key, json_stringn(hex, len * 2));
  free(hex);
}

/* The canonical JSON value of what a line parses to: its re-encoding, parsed. */
json_t *vectors_as_json(const char *text, size_t len) {
  json_error_t e;
  json_t *j = json_loadb(text, len, 0, &e);
  if (j == NULL) vectors_die("encoder wrote text that jansson refuses");
  return j;
}

turn_input vectors_inline_input(const char *json) {
  turn_input in = {turn_str_c(json), {NULL, 0}, false};
  return in;
}
