/* The shared vectors (vectors/vectors.json) run through the public API: the same
 * file the other halves of the protocol test against. Lines that are not valid
 * UTF-8 come as "line_hex". */
#include "support.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static json_t *vectors;

static int load_vectors(void **state) {
  (void)state;
  json_error_t e;
  vectors = json_load_file(TURN_SOURCE_DIR "/vectors/vectors.json", JSON_ALLOW_NUL, &e);
  return vectors == NULL ? -1 : 0;
}

static int free_vectors(void **state) {
  (void)state;
  json_decref(vectors);
  return 0;
}

/* The bytes of an entry's line, from "line" or "line_hex"; owned by the caller. */
static char *line_of(json_t *entry, size_t *len) {
  json_t *line = json_object_get(entry, "line");
  if (line != NULL) {
    *len = json_string_length(line);
    char *copy = malloc(*len + 1);
    assert_non_null(copy);
    memcpy(copy, json_string_value(line), *len + 1);
    return copy;
  }
  const char *hex = json_string_value(json_object_get(entry, "line_hex"));
  assert_non_null(hex);
  *len = strlen(hex) / 2;
  char *bytes = malloc(*len + 1);
  assert_non_null(bytes);
  for (size_t i = 0; i < *len; i++) {
    char pair[3] = {hex[2 * i], hex[2 * i + 1], '\0'};
    bytes[i] = (char)strtol(pair, NULL, 16);
  }
  bytes[*len] = '\0';
  return bytes;
}

static json_t *section(const char *a, const char *b) {
  json_t *s = json_object_get(json_object_get(vectors, a), b);
  assert_true(json_is_array(s));
  assert_true(json_array_size(s) > 0);
  return s;
}

static json_t *load_text(const char *text, size_t len) {
  json_error_t e;
  json_t *j = json_loadb(text, len, JSON_ALLOW_NUL, &e);
  assert_non_null(j);
  return j;
}

static void test_vectors_valid_events(void **state) {
  (void)state;
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  size_t i;
  json_t *entry;
  json_array_foreach(section("events", "valid"), i, entry) {
    size_t len;
    char *line = line_of(entry, &len);
    turn_event ev;
    turn_error err;
    turn_arena_reset(&arena);
    assert_int_equal(turn_event_parse(&ev, &arena, line, len, &err), TURN_OK);
    turn_buf out;
    turn_buf_init(&out, 1 << 20, NULL);
    assert_int_equal(turn_event_encode(&ev, &out), TURN_OK);
    json_t *got = load_text(out.data, out.len);
    if (!json_equal(got, json_object_get(entry, "event")))
      fail_msg("vector %zu: %s", i, line);
    json_decref(got);
    /* Encoding what was parsed is a fixed point. */
    turn_event again;
    assert_int_equal(turn_event_parse(&again, &arena, out.data, out.len, &err), TURN_OK);
    turn_buf out2;
    turn_buf_init(&out2, 1 << 20, NULL);
    assert_int_equal(turn_event_encode(&again, &out2), TURN_OK);
    assert_int_equal(out.len, out2.len);
    assert_memory_equal(out.data, out2.data, out.len);
    turn_buf_fini(&out);
    turn_buf_fini(&out2);
    free(line);
  }
  turn_arena_fini(&arena);
}

static void expect_error(json_t *entry, int code, const turn_error *err, size_t i) {
  const char *want = json_string_value(json_object_get(entry, "error"));
  if (strcmp(turn_errname(code), want) != 0)
    fail_msg("vector %zu: got %s, want %s", i, turn_errname(code), want);
  const char *field = json_string_value(json_object_get(entry, "field"));
  if (field == NULL)
    assert_null(err->field);
  else {
    assert_non_null(err->field);
    assert_string_equal(err->field, field);
  }
}

static void test_vectors_invalid_events(void **state) {
  (void)state;
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  size_t i;
  json_t *entry;
  json_array_foreach(section("events", "invalid"), i, entry) {
    size_t len;
    char *line = line_of(entry, &len);
    turn_event ev;
    turn_error err = {0, NULL, 0, 0};
    turn_arena_reset(&arena);
    expect_error(entry, turn_event_parse(&ev, &arena, line, len, &err), &err, i);
    assert_true(err.offset <= len);
    free(line);
  }
  turn_arena_fini(&arena);
}

static void test_vectors_valid_blocks(void **state) {
  (void)state;
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  size_t i;
  json_t *entry;
  json_array_foreach(section("blocks", "valid"), i, entry) {
    size_t len;
    char *line = line_of(entry, &len);
    turn_block b;
    turn_error err;
    turn_arena_reset(&arena);
    assert_int_equal(turn_block_parse(&b, &arena, line, len, &err), TURN_OK);
    turn_buf out;
    turn_buf_init(&out, 1 << 20, NULL);
    assert_int_equal(turn_block_encode(&b, &out), TURN_OK);
    json_t *got = load_text(out.data, out.len);
    if (!json_equal(got, json_object_get(entry, "block")))
      fail_msg("vector %zu: %s", i, line);
    json_decref(got);
    turn_buf_fini(&out);
    free(line);
  }
  turn_arena_fini(&arena);
}

static void test_vectors_invalid_blocks(void **state) {
  (void)state;
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  size_t i;
  json_t *entry;
  json_array_foreach(section("blocks", "invalid"), i, entry) {
    size_t len;
    char *line = line_of(entry, &len);
    turn_block b;
    turn_error err = {0, NULL, 0, 0};
    turn_arena_reset(&arena);
    expect_error(entry, turn_block_parse(&b, &arena, line, len, &err), &err, i);
    free(line);
  }
  turn_arena_fini(&arena);
}

static void test_vectors_input_fields(void **state) {
  (void)state;
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  json_t *list = json_object_get(vectors, "inputs");
  assert_true(json_array_size(list) > 0);
  size_t i;
  json_t *entry;
  json_array_foreach(list, i, entry) {
    json_t *text = json_object_get(entry, "input_json");
    turn_input in;
    turn_error err;
    turn_arena_reset(&arena);
    assert_int_equal(turn_input_from_json(&in, &arena, json_string_value(text),
                                          json_string_length(text), &err),
                     TURN_OK);
    json_t *field = json_object_get(entry, "field");
    assert_int_equal(in.truncated, json_is_true(json_object_get(field, "truncated")));
    if (in.truncated) {
      json_t *preview = json_object_get(field, "preview");
      assert_int_equal(in.preview.len, json_string_length(preview));
      assert_memory_equal(in.preview.p, json_string_value(preview), in.preview.len);
    } else {
      json_t *got = load_text(in.json.p, in.json.len);
      assert_true(json_equal(got, json_object_get(field, "input")));
      json_decref(got);
      json_t *compact = json_object_get(entry, "compact");
      assert_int_equal(in.json.len, json_string_length(compact));
      assert_memory_equal(in.json.p, json_string_value(compact), in.json.len);
    }
  }
  turn_arena_fini(&arena);
}

/* ------------------------------------------------------------------ streams */

struct verdict {
  turn_reader *reader;
  turn_order *order;
  int code;
  uint64_t line;
};

static int on_event(void *ctx, const turn_event *ev, const turn_error *err) {
  struct verdict *v = ctx;
  turn_error order_err;
  int code = err != NULL ? err->code : turn_order_step(v->order, ev, &order_err);
  if (code != TURN_OK && v->code == TURN_OK) {
    v->code = code;
    v->line = turn_reader_line(v->reader);
  }
  return 0;
}

/* Feeds text in pieces of `step` bytes (0: whole) and returns the first problem. */
static struct verdict judge(const char *text, size_t len, size_t step, size_t n_lines) {
  struct verdict v = {turn_reader_new(1 << 20, NULL), turn_order_new(NULL), TURN_OK, 0};
  assert_non_null(v.reader);
  assert_non_null(v.order);
  size_t piece = step == 0 ? len : step;
  for (size_t off = 0; off < len; off += piece) {
    size_t n = len - off < piece ? len - off : piece;
    assert_int_equal(turn_reader_feed(v.reader, text + off, n, on_event, &v), TURN_OK);
  }
  assert_int_equal(turn_reader_finish(v.reader, on_event, &v), TURN_OK);
  turn_error err;
  int rv = turn_order_finish(v.order, &err);
  if (rv != TURN_OK && v.code == TURN_OK) {
    v.code = rv;
    v.line = n_lines;
  }
  turn_reader_free(v.reader);
  turn_order_free(v.order);
  return v;
}

static char *join_lines(json_t *lines, size_t *len) {
  size_t total = 0, i;
  json_t *line;
  json_array_foreach(lines, i, line) total += json_string_length(line) + 1;
  char *text = malloc(total + 1);
  assert_non_null(text);
  size_t n = 0;
  json_array_foreach(lines, i, line) {
    memcpy(text + n, json_string_value(line), json_string_length(line));
    n += json_string_length(line);
    text[n++] = '\n';
  }
  *len = n;
  return text;
}

static void check_streams(const char *which) {
  size_t i;
  json_t *entry;
  json_array_foreach(section("streams", which), i, entry) {
    json_t *lines = json_object_get(entry, "lines");
    size_t len;
    char *text = join_lines(lines, &len);
    const char *want = json_string_value(json_object_get(entry, "error"));
    json_int_t want_line = json_integer_value(json_object_get(entry, "line"));
    /* Whole, one byte at a time, and a few odd piece sizes give one verdict. */
    static const size_t steps[] = {0, 1, 2, 7, 64};
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
      struct verdict v = judge(text, len, steps[s], json_array_size(lines));
      if (want == NULL) {
        if (v.code != TURN_OK)
          fail_msg("stream \"%s\": %s at line %llu",
                   json_string_value(json_object_get(entry, "name")),
                   turn_errname(v.code), (unsigned long long)v.line);
      } else {
        assert_string_equal(turn_errname(v.code), want);
        assert_int_equal(v.line, (uint64_t)want_line);
      }
    }
    free(text);
  }
}

static void test_vectors_valid_streams(void **state) {
  (void)state;
  check_streams("valid");
}

static void test_vectors_invalid_streams(void **state) {
  (void)state;
  check_streams("invalid");
}

/* The spec's example stream is a vector and comes out of the encoder byte for byte. */
static void test_vectors_spec_example_round_trips(void **state) {
  (void)state;
  json_t *example = NULL;
  size_t i;
  json_t *entry;
  json_array_foreach(section("streams", "valid"), i, entry) {
    if (strcmp(json_string_value(json_object_get(entry, "name")), "the spec's example") ==
        0)
      example = json_object_get(entry, "lines");
  }
  assert_non_null(example);
  assert_int_equal(json_array_size(example), 8);
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  json_t *line;
  json_array_foreach(example, i, line) {
    turn_event ev;
    turn_error err;
    turn_arena_reset(&arena);
    assert_int_equal(turn_event_parse(&ev, &arena, json_string_value(line),
                                      json_string_length(line), &err),
                     TURN_OK);
    turn_buf out;
    turn_buf_init(&out, 4096, NULL);
    assert_int_equal(turn_event_encode(&ev, &out), TURN_OK);
    assert_int_equal(out.len, json_string_length(line));
    assert_memory_equal(out.data, json_string_value(line), out.len);
    turn_buf_fini(&out);
  }
  turn_arena_fini(&arena);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vectors_valid_events),
      cmocka_unit_test(test_vectors_invalid_events),
      cmocka_unit_test(test_vectors_valid_blocks),
      cmocka_unit_test(test_vectors_invalid_blocks),
      cmocka_unit_test(test_vectors_input_fields),
      cmocka_unit_test(test_vectors_valid_streams),
      cmocka_unit_test(test_vectors_invalid_streams),
      cmocka_unit_test(test_vectors_spec_example_round_trips),
  };
  return cmocka_run_group_tests(tests, load_vectors, free_vectors);
}
