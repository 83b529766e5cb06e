/* The "inputs" section: how a tool input becomes its field, compact JSON when
 * it fits TURN_INPUT_LIMIT and an 8192-code-point preview when it does not,
 * probed on both sides of the limit and with multi-byte characters at the cut. */
#include "vectors.h"

#include <stdlib.h>
#include <string.h>

static json_t *inputs;

static void add_input(const char *json, size_t len, const char *note) {
  turn_input in;
  turn_error err;
  turn_arena_reset(&vectors_arena);
  if (turn_input_from_json(&in, &vectors_arena, json, len, &err) != TURN_OK)
    vectors_die("input case does not parse");
  json_t *field = json_object();
  if (in.truncated) {
    json_object_set_new(field, "input", json_null());
    json_object_set_new(field, "preview", json_stringn(in.preview.p, in.preview.len));
  } else {
    json_object_set_new(field, "input", vectors_as_json(in.json.p, in.json.len));
  }
  json_object_set_new(field, "truncated", json_boolean(in.truncated));
  json_t *entry = json_object();
  json_object_set_new(entry, "note", json_string(note));
  json_object_set_new(entry, "input_json", json_stringn(json, len));
  if (!in.truncated)
    json_object_set_new(entry, "compact", json_stringn(in.json.p, in.json.len));
  json_object_set_new(entry, "field", field);
  json_array_append_new(inputs, entry);
}

/* {"s":"<ascii 'a' x n_ascii><unit x n_units>"}. */
static void add_filled_input(size_t n_ascii, const char *unit, size_t n_units,
                             const char *note) {
  size_t ulen = strlen(unit);
  char *buf = malloc(n_ascii + ulen * n_units + 16);
  if (buf == NULL) vectors_die("out of memory");
  size_t n = 0;
  memcpy(buf, "{\"s\":\"", 6);
  n = 6;
  memset(buf + n, 'a', n_ascii);
  n += n_ascii;
  for (size_t i = 0; i < n_units; i++, n += ulen)
    memcpy(buf + n, unit, ulen);
  memcpy(buf + n, "\"}", 2);
  n += 2;
  add_input(buf, n, note);
  free(buf);
}

static void make_inputs(void) {
  static const char small[] = "{\"name\":\"desk\",\"on\":true}";
  add_input(small, sizeof small - 1, "small object, already compact");
  static const char spaced[] =
      " {\n  \"name\" : \"desk\" ,\n  \"on\" : true,\n  \"levels\": "
      "[ 1, 2.5, -3e2 ], \"meta\": { } }\n";
  add_input(spaced, sizeof spaced - 1, "whitespace outside strings is dropped");
  static const char escapes[] =
      "{\"a\":\"\\u0041\\/\\u00e9\\ud83d\\ude42\",\"b\":\"tab\\t "
      "nl\\n ctl\\u0001 q\\\" bs\\\\\"}";
  add_input(escapes, sizeof escapes - 1, "strings are re-escaped canonically");
  /* {"s":"..."} has 8 bytes around the fill. */
  add_filled_input(TURN_INPUT_LIMIT - 9, "", 0, "one byte below the limit: inline");
  add_filled_input(TURN_INPUT_LIMIT - 8, "", 0, "exactly at the limit: inline");
  add_filled_input(TURN_INPUT_LIMIT - 7, "", 0, "one byte above the limit: preview");
  /* The cut at code point 8192 falls inside a run of multi-byte characters: the
   * preview ends with a whole character, 8192 code points in all. */
  add_filled_input(TURN_INPUT_LIMIT - 9, "\xc3\xa9", 20, "2-byte characters at the cut");
  add_filled_input(TURN_INPUT_LIMIT - 9, "\xe6\x97\xa5", 20,
                   "3-byte characters at the cut");
  add_filled_input(TURN_INPUT_LIMIT - 9, "\xf0\x9f\x99\x82", 20,
                   "4-byte characters at the cut");
  add_filled_input(TURN_INPUT_LIMIT - 20, "\xc3\xa9", 10,
                   "2-byte characters pass the byte limit: preview");
  add_filled_input(
      0, "\xe6\x97\xa5", 3000,
      "over 8192 bytes but under 8192 code points: the preview is all of it");
}

void vectors_inputs(json_t *doc) {
  inputs = json_array();
  make_inputs();
  json_object_set_new(doc, "inputs", inputs);
}
