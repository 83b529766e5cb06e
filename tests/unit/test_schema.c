/* The tool input validator (src/agent/schema.c): each keyword both ways, the
 * error path into nested values, numbers compared by value, lengths in code
 * points, the depth and work limits, and the promise that an error never
 * carries a byte of the checked value (it goes back to the model and the logs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/schema.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *load(const char *text) {
  json_error_t jerr;
  json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
  if (j == NULL) {
    print_error("bad test JSON: %s: %s\n", jerr.text, text);
    fail();
  }
  return j;
}

/* Validates value (JSON text) against schema (JSON text); the schema must also
 * pass schema_check. Frees what it parsed before returning, so a failing
 * assertion in the caller leaks nothing. */
static int run(const char *schema_text, const char *value_text,
               struct schema_error *err) {
  json_t *schema = load(schema_text);
  json_t *value = load(value_text);
  char why[200] = "";
  int checked = json_is_object(schema) ? schema_check(schema, why, sizeof why) : 0;
  memset(err, 0, sizeof *err);
  int rv = schema_validate(schema, value, err);
  json_decref(schema);
  json_decref(value);
  if (checked != 0) {
    print_error("schema_check refused %s: %s\n", schema_text, why);
    fail();
  }
  return rv;
}

static void expect_valid(const char *schema, const char *value) {
  struct schema_error err;
  int rv = run(schema, value, &err);
  if (rv != SCHEMA_OK) {
    print_error("%s against %s: %s at \"%s\": %s\n", value, schema, schema_errname(rv),
                err.path, err.message);
    fail();
  }
}

/* The value is rejected at path with a message containing `message`. */
static void expect_invalid(const char *schema, const char *value, const char *path,
                           const char *message) {
  struct schema_error err;
  int rv = run(schema, value, &err);
  if (rv != SCHEMA_E_INVALID || err.code != rv || strcmp(err.path, path) != 0 ||
      strstr(err.message, message) == NULL) {
    print_error(
        "%s against %s: got %s at \"%s\": %s\nwant E_INVALID at \"%s\": ...%s...\n",
        value, schema, schema_errname(rv), err.path, err.message, path, message);
    fail();
  }
}

/* The lamp tool of the demo set, as a model sees it. */
#define LAMP_SCHEMA                                                      \
  "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}," \
  "\"on\":{\"type\":\"boolean\"}},\"required\":[\"name\",\"on\"],"       \
  "\"additionalProperties\":false}"

static void test_schema_realistic_tool_input(void **state) {
  (void)state;
  expect_valid(LAMP_SCHEMA, "{\"name\":\"kitchen\",\"on\":true}");
  expect_invalid(LAMP_SCHEMA, "{\"name\":\"kitchen\"}", "", "required property \"on\"");
  expect_invalid(LAMP_SCHEMA, "{\"name\":\"kitchen\",\"on\":\"yes\"}", "/on",
                 "must be a boolean");
  expect_invalid(LAMP_SCHEMA, "{\"name\":\"kitchen\",\"on\":true,\"dim\":3}",
                 "/(unknown key)", "additionalProperties is false");
  expect_invalid(LAMP_SCHEMA, "[\"kitchen\",true]", "", "must be an object");

  /* A larger one, in the shape providers document: nested object, enum, bounds. */
  const char *search = "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
                       "\"title\":\"search\",\"type\":\"object\",\"properties\":{"
                       "\"query\":{\"type\":\"string\",\"minLength\":1,"
                       "\"description\":\"what to look for\"},"
                       "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":50,"
                       "\"default\":10},"
                       "\"sort\":{\"enum\":[\"relevance\",\"date\"]},"
                       "\"filters\":{\"type\":\"object\",\"properties\":{"
                       "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
                       "\"maxItems\":3,\"uniqueItems\":true}},"
                       "\"additionalProperties\":false}},"
                       "\"required\":[\"query\"]}";
  expect_valid(search, "{\"query\":\"lamps\"}");
  expect_valid(search, "{\"query\":\"lamps\",\"limit\":10.0,\"sort\":\"date\","
                       "\"filters\":{\"tags\":[\"a\",\"b\"]}}");
  expect_invalid(search, "{\"query\":\"\"}", "/query", "at least 1 character long");
  expect_invalid(search, "{\"query\":\"x\",\"limit\":51}", "/limit", "<= 50 (maximum)");
  expect_invalid(search, "{\"query\":\"x\",\"limit\":2.5}", "/limit", "an integer");
  expect_invalid(search, "{\"query\":\"x\",\"sort\":\"name\"}", "/sort",
                 "one of the values in enum: [\"relevance\",\"date\"]");
  expect_invalid(search, "{\"query\":\"x\",\"filters\":{\"tags\":[\"a\",1]}}",
                 "/filters/tags/1", "must be a string");
  expect_invalid(search, "{\"query\":\"x\",\"filters\":{\"tags\":[\"a\",\"a\"]}}",
                 "/filters/tags", "items 0 and 1 are equal");
}

static void test_schema_type_each_name(void **state) {
  (void)state;
  static const struct {
    const char *type, *good, *bad, *message;
  } cases[] = {
      {"object", "{}", "[]", "must be an object"},
      {"array", "[]", "{}", "must be an array"},
      {"string", "\"\"", "1", "must be a string"},
      {"number", "1.5", "\"1\"", "must be a number"},
      {"integer", "-7", "true", "must be an integer"},
      {"boolean", "false", "0", "must be a boolean"},
      {"null", "null", "false", "must be null"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char schema[64];
    snprintf(schema, sizeof schema, "{\"type\":\"%s\"}", cases[i].type);
    expect_valid(schema, cases[i].good);
    expect_invalid(schema, cases[i].bad, "", cases[i].message);
  }
  expect_valid("{\"type\":[\"string\",\"null\"]}", "null");
  expect_valid("{\"type\":[\"string\",\"null\"]}", "\"x\"");
  expect_invalid("{\"type\":[\"string\",\"null\"]}", "1", "", "must be a string or null");
  expect_valid("{\"type\":\"number\"}", "3"); /* an integer is a number */
}

/* JSON Schema: "integer" is any number with a zero fractional part. */
static void test_schema_integer_is_a_number_without_fraction(void **state) {
  (void)state;
  const char *integer = "{\"type\":\"integer\"}";
  expect_valid(integer, "3");
  expect_valid(integer, "3.0");
  expect_valid(integer, "-0.0");
  expect_valid(integer, "1e300"); /* beyond 2^53 every double is integral */
  expect_valid(integer, "-9223372036854775808");
  expect_invalid(integer, "3.5", "", "must be an integer");
  expect_invalid(integer, "-0.000001", "", "must be an integer");
  expect_invalid(integer, "\"3\"", "", "must be an integer");
  expect_valid("{\"type\":\"number\"}", "3.5");
}

static void test_schema_empty_true_false_and_unknown_keywords(void **state) {
  (void)state;
  const char *values[] = {"{}", "[1,[2]]", "\"s\"", "0", "-1.5", "true", "null"};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    expect_valid("{}", values[i]);
    expect_valid("true", values[i]);
    expect_invalid("false", values[i], "", "the schema is false");
    /* Annotations and unknown keywords change nothing (format is only an
     * annotation in draft 2020-12). */
    expect_valid("{\"description\":\"d\",\"title\":\"t\",\"default\":3,\"examples\":[1],"
                 "\"$schema\":\"x\",\"$id\":\"x\",\"$comment\":\"c\",\"deprecated\":true,"
                 "\"readOnly\":true,\"writeOnly\":true,\"format\":\"email\","
                 "\"contentMediaType\":\"text/html\",\"x-vendor\":{\"type\":\"null\"}}",
                 values[i]);
  }
  /* Boolean subschemas. */
  expect_valid("{\"properties\":{\"a\":true}}", "{\"a\":1}");
  expect_invalid("{\"properties\":{\"a\":false}}", "{\"a\":1}", "/a", "schema is false");
  expect_valid("{\"properties\":{\"a\":false}}", "{\"b\":1}");
}

static void test_schema_properties_required_additional(void **state) {
  (void)state;
  const char *s = "{\"properties\":{\"a\":{\"type\":\"integer\"}},\"required\":[\"a\"]}";
  expect_valid(s, "{\"a\":1,\"other\":\"ok\"}");
  expect_invalid(s, "{}", "", "missing the required property \"a\"");
  expect_invalid(s, "{\"a\":\"1\"}", "/a", "an integer");
  expect_valid(s, "[]"); /* object keywords do not apply to other types */

  /* required without properties, and a name that is there but null */
  expect_valid("{\"required\":[\"x\"]}", "{\"x\":null}");
  expect_invalid("{\"required\":[\"x\",\"y\"]}", "{\"x\":null}", "", "property \"y\"");

  /* additionalProperties as a schema applies to the keys properties does not name */
  const char *extra = "{\"properties\":{\"a\":{\"type\":\"string\"}},"
                      "\"additionalProperties\":{\"type\":\"integer\"}}";
  expect_valid(extra, "{\"a\":\"s\",\"b\":1,\"c\":2}");
  expect_invalid(extra, "{\"a\":\"s\",\"b\":\"1\"}", "/(unknown key)", "an integer");
  expect_valid("{\"additionalProperties\":false}", "{}");
  expect_invalid("{\"additionalProperties\":false}", "{\"k\":1}", "/(unknown key)",
                 "additionalProperties is false");
  expect_valid("{\"additionalProperties\":true}", "{\"k\":1}");
}

static void test_schema_nested_error_path(void **state) {
  (void)state;
  const char *s = "{\"type\":\"object\",\"properties\":{\"items\":{\"type\":\"array\","
                  "\"items\":{\"type\":\"object\",\"properties\":{"
                  "\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}}}}";
  expect_valid(s, "{\"items\":[{\"name\":\"a\"},{\"name\":\"b\"}]}");
  expect_invalid(s, "{\"items\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":3}]}",
                 "/items/2/name", "must be a string");
  expect_invalid(s, "{\"items\":[{\"name\":\"a\"},{}]}", "/items/1",
                 "required property \"name\"");

  /* JSON Pointer escapes: "~" is "~0" and "/" is "~1". */
  expect_invalid("{\"properties\":{\"a/b~c\":{\"type\":\"null\"}}}", "{\"a/b~c\":1}",
                 "/a~1b~0c", "must be null");

  /* A path longer than the field is cut with "..." and stays a C string. */
  char schema[2048], value[1024], key[301];
  memset(key, 'k', 300);
  key[300] = '\0';
  snprintf(schema, sizeof schema, "{\"properties\":{\"%s\":{\"type\":\"null\"}}}", key);
  snprintf(value, sizeof value, "{\"%s\":1}", key);
  struct schema_error err;
  assert_int_equal(run(schema, value, &err), SCHEMA_E_INVALID);
  size_t len = strlen(err.path);
  assert_true(len < sizeof err.path);
  assert_true(len > 3 && strcmp(err.path + len - 3, "...") == 0);
}

static void test_schema_enum_and_const(void **state) {
  (void)state;
  const char *e = "{\"enum\":[\"on\",\"off\",1,null,{\"a\":[1,2]}]}";
  expect_valid(e, "\"on\"");
  expect_valid(e, "1.0"); /* numbers by value */
  expect_valid(e, "null");
  expect_valid(e, "{\"a\":[1.0,2]}");
  expect_invalid(e, "\"ON\"", "", "one of the values in enum");
  expect_invalid(e, "1.5", "", "one of the values in enum");
  expect_invalid(e, "{\"a\":[2,1]}", "", "enum"); /* arrays are ordered */
  expect_invalid(e, "{\"a\":[1,2],\"b\":0}", "", "enum");
  expect_invalid(e, "false", "", "enum");
  expect_invalid("{\"enum\":[]}", "1", "", "enum");
  /* strings compare by all their bytes, also past a NUL */
  expect_invalid("{\"enum\":[\"a\"]}", "\"a\\u0000b\"", "", "enum");

  expect_valid("{\"const\":{\"x\":1,\"y\":[true]}}", "{\"y\":[true],\"x\":1.0}");
  expect_invalid("{\"const\":{\"x\":1}}", "{\"x\":2}", "", "must be the value in const");
  expect_valid("{\"const\":2.0}", "2");
  expect_invalid("{\"const\":0}", "false", "", "const");
  /* a long enum is cut in the message, not overflowed */
  char big[4096] = "{\"enum\":[";
  for (int i = 0; i < 300; i++)
    snprintf(big + strlen(big), sizeof big - strlen(big), "%s%d", i ? "," : "", i);
  snprintf(big + strlen(big), sizeof big - strlen(big), "]}");
  expect_invalid(big, "-1", "", "...");
}

static void test_schema_numbers_compare_exactly(void **state) {
  (void)state;
  const char *range = "{\"minimum\":0,\"maximum\":5.5,\"exclusiveMinimum\":-1,"
                      "\"exclusiveMaximum\":100}";
  expect_valid(range, "0");
  expect_valid(range, "5.5");
  expect_valid(range, "5");
  expect_invalid(range, "-0.5", "", "must be >= 0 (minimum)");
  expect_invalid(range, "5.6", "", "must be <= 5.5 (maximum)");
  expect_valid("{\"exclusiveMinimum\":0}", "0.0001");
  expect_invalid("{\"exclusiveMinimum\":0}", "0", "", "must be > 0 (exclusiveMinimum)");
  expect_invalid("{\"exclusiveMinimum\":0}", "0.0", "", "exclusiveMinimum");
  expect_valid("{\"exclusiveMaximum\":1.5}", "1");
  expect_invalid("{\"exclusiveMaximum\":1.5}", "1.5", "", "must be < 1.5");
  expect_valid("{\"minimum\":2}", "\"strings are not bounded\"");
  /* 2^53 + 1 is not a double: converting it would round it to 2^53 and pass. */
  expect_invalid("{\"maximum\":9007199254740992.0}", "9007199254740993", "", "maximum");
  expect_valid("{\"maximum\":9007199254740992.0}", "9007199254740992");
  expect_invalid("{\"minimum\":9223372036854775807}", "-1e300", "", "minimum");
  expect_valid("{\"maximum\":9223372036854775807}", "9223372036854775807");
  expect_invalid("{\"maximum\":9223372036854775807}", "1e19", "", "maximum");
}

static void test_schema_arrays(void **state) {
  (void)state;
  const char *s = "{\"type\":\"array\",\"items\":{\"type\":\"integer\"},"
                  "\"minItems\":1,\"maxItems\":3}";
  expect_valid(s, "[1]");
  expect_valid(s, "[1,2,3.0]");
  expect_invalid(s, "[]", "", "must have at least 1 item");
  expect_invalid(s, "[1,2,3,4]", "", "must have at most 3 items");
  expect_invalid(s, "[1,\"2\"]", "/1", "an integer");
  expect_valid("{\"minItems\":2.0}", "[0,0]"); /* a count may be written 2.0 */

  /* the tuple form applies by position; items past it are not checked */
  const char *tuple = "{\"items\":[{\"type\":\"string\"},{\"type\":\"number\"}]}";
  expect_valid(tuple, "[\"a\",1,{}]");
  expect_valid(tuple, "[\"a\"]");
  expect_invalid(tuple, "[\"a\",\"b\"]", "/1", "a number");

  /* additionalItems checks the items past the tuple of an array-form items */
  const char *closed = "{\"items\":[{\"type\":\"string\"}],\"additionalItems\":false}";
  expect_valid(closed, "[\"a\"]");
  expect_valid(closed, "[]");
  expect_invalid(closed, "[\"a\",1]", "/1",
                 "the array may have at most 1 item (additionalItems is false)");
  const char *rest = "{\"items\":[{\"type\":\"string\"}],"
                     "\"additionalItems\":{\"type\":\"integer\"}}";
  expect_valid(rest, "[\"a\",1,2]");
  expect_invalid(rest, "[\"a\",1,2.5]", "/2", "an integer");
  expect_invalid(rest, "[1]", "/0", "a string");

  /* draft 2020-12: prefixItems by position, items for the rest only */
  const char *prefix = "{\"prefixItems\":[{\"type\":\"string\"}],"
                       "\"items\":{\"type\":\"number\"}}";
  expect_valid(prefix, "[\"a\",1]");
  expect_valid(prefix, "[\"a\",1,2.5]");
  expect_valid(prefix, "[]");
  expect_invalid(prefix, "[1,1]", "/0", "a string");
  expect_invalid(prefix, "[\"a\",\"b\"]", "/1", "a number");
  expect_valid("{\"prefixItems\":[{\"type\":\"string\"}]}", "[\"a\",1,{}]");
  expect_invalid("{\"prefixItems\":[true,true],\"items\":false}", "[1,2,3]", "/2",
                 "the array may have at most 2 items (items is false)");
  expect_invalid("{\"items\":false}", "[0]", "/0",
                 "the array may have at most 0 items (items is false)");

  const char *unique = "{\"uniqueItems\":true}";
  expect_valid(unique, "[]");
  expect_valid(unique, "[1,\"1\",[1],{\"1\":1},true,null,false]");
  expect_valid(unique, "[{\"a\":1},{\"a\":1,\"b\":1},[1,2],[2,1]]");
  expect_invalid(unique, "[0,1,1.0]", "", "items 1 and 2 are equal");
  expect_invalid(unique, "[{\"a\":1,\"b\":[2]},{\"b\":[2.0],\"a\":1}]", "",
                 "items 0 and 1 are equal");
  expect_invalid(unique, "[-0.0,0]", "", "uniqueItems");
  expect_valid("{\"uniqueItems\":false}", "[1,1]");

  /* Many distinct items: sorted by hash, not compared pairwise (a million
   * comparisons would exceed the work limit). */
  json_t *schema = load(unique);
  json_t *arr = json_array();
  for (int i = 0; i < 5000; i++)
    json_array_append_new(arr, i % 2 ? json_integer(i) : json_real(i + 0.5));
  struct schema_error err;
  assert_int_equal(schema_validate(schema, arr, &err), SCHEMA_OK);
  json_array_append_new(arr, json_real(4999.0)); /* equals json_integer(4999) */
  assert_int_equal(schema_validate(schema, arr, &err), SCHEMA_E_INVALID);
  assert_string_equal(err.message,
                      "must not repeat an item (uniqueItems): items 4999 and 5000 are "
                      "equal");
  json_decref(arr);
  json_decref(schema);
}

/* Lengths count code points, as JSON Schema says, not bytes. */
static void test_schema_string_length_in_code_points(void **state) {
  (void)state;
  /* "é" is 2 bytes, "€" 3, U+1F600 4: each counts one. */
  const char *three = "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"";
  expect_valid("{\"maxLength\":3}", three);
  expect_valid("{\"minLength\":3}", three);
  expect_invalid("{\"maxLength\":2}", three, "", "at most 2 characters long");
  expect_invalid("{\"minLength\":4}", three, "", "at least 4 characters long");
  expect_valid("{\"maxLength\":1}", "\"\\ud83d\\ude00\""); /* a surrogate pair: one */
  expect_valid("{\"minLength\":0,\"maxLength\":0}", "\"\"");
  expect_invalid("{\"maxLength\":1}", "\"ab\"", "", "at most 1 character long");
  expect_valid("{\"maxLength\":1}", "12345"); /* applies to strings only */
}

static void test_schema_combinators(void **state) {
  (void)state;
  const char *any = "{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\","
                    "\"minimum\":0}]}";
  expect_valid(any, "\"s\"");
  expect_valid(any, "4");
  expect_invalid(any, "-4", "", "at least one of the 2 schemas in anyOf");
  expect_invalid(any, "null", "", "anyOf");

  const char *one = "{\"oneOf\":[{\"type\":\"integer\"},{\"minimum\":10}]}";
  expect_valid(one, "3");
  expect_valid(one, "10.5");
  expect_invalid(one, "12", "", "matches 0 and 1");
  expect_invalid(one, "9.5", "", "matches none of 2");

  const char *all = "{\"allOf\":[{\"type\":\"object\"},{\"required\":[\"id\"]},"
                    "{\"properties\":{\"id\":{\"type\":\"string\"}}}]}";
  expect_valid(all, "{\"id\":\"x\"}");
  expect_invalid(all, "{}", "", "required property \"id\""); /* the branch's own */
  expect_invalid(all, "{\"id\":1}", "/id", "must be a string");

  expect_valid("{\"not\":{\"type\":\"null\"}}", "0");
  expect_invalid("{\"not\":{\"type\":\"null\"}}", "null", "", "must not match");

  /* a nullable property, the common use of anyOf in tool schemas */
  const char *nullable = "{\"properties\":{\"room\":{\"anyOf\":[{\"type\":\"string\","
                         "\"maxLength\":8},{\"type\":\"null\"}]}}}";
  expect_valid(nullable, "{\"room\":null}");
  expect_valid(nullable, "{\"room\":\"hall\"}");
  expect_invalid(nullable, "{\"room\":\"living room\"}", "/room", "anyOf");
}

/* Builds {"items": ... {"items": {"type":"integer"}} ...} levels deep, and a
 * value of that many nested arrays around 1. */
static void nested(int levels, char **schema, char **value) {
  size_t cap = (size_t)levels * 16 + 64;
  *schema = malloc(cap);
  *value = malloc(cap);
  assert_non_null(*schema);
  assert_non_null(*value);
  size_t s = 0, v = 0;
  for (int i = 0; i < levels; i++) {
    s += (size_t)snprintf(*schema + s, cap - s, "{\"items\":");
    v += (size_t)snprintf(*value + v, cap - v, "[");
  }
  s += (size_t)snprintf(*schema + s, cap - s, "{\"type\":\"integer\"}");
  v += (size_t)snprintf(*value + v, cap - v, "1");
  for (int i = 0; i < levels; i++) {
    s += (size_t)snprintf(*schema + s, cap - s, "}");
    v += (size_t)snprintf(*value + v, cap - v, "]");
  }
}

static void test_schema_depth_limit(void **state) {
  (void)state;
  char *schema_text, *value_text;
  char why[200];
  struct schema_error err;

  /* SCHEMA_MAX_DEPTH levels below the root are allowed... */
  nested(SCHEMA_MAX_DEPTH, &schema_text, &value_text);
  expect_valid(schema_text, value_text);
  free(schema_text);
  free(value_text);

  /* ...one more is refused by both functions, without recursing further. */
  nested(SCHEMA_MAX_DEPTH + 1, &schema_text, &value_text);
  json_t *schema = load(schema_text), *value = load(value_text);
  free(schema_text);
  free(value_text);
  int checked = schema_check(schema, why, sizeof why);
  int rv = schema_validate(schema, value, &err);
  json_decref(schema);
  json_decref(value);
  assert_int_equal(checked, -1);
  assert_non_null(strstr(why, "deeper than the limit of 32 levels"));
  assert_int_equal(rv, SCHEMA_E_LIMIT);
  assert_int_equal(err.code, SCHEMA_E_LIMIT);
  assert_non_null(strstr(err.message, "nests deeper than 32"));

  /* A hostile schema far deeper than that (jansson parses up to 2048). */
  nested(2000, &schema_text, &value_text);
  schema = load(schema_text);
  value = load(value_text);
  free(schema_text);
  free(value_text);
  assert_int_equal(schema_check(schema, why, sizeof why), -1);
  assert_int_equal(schema_validate(schema, value, &err), SCHEMA_E_LIMIT);
  /* A deep value is no trouble where the schema does not descend. */
  json_t *shallow = load("{\"type\":\"array\",\"minItems\":1}");
  assert_int_equal(schema_validate(shallow, value, &err), SCHEMA_OK);
  json_decref(shallow);
  /* uniqueItems compares whole items: two deep equal items hit the limit, not
   * the stack. */
  json_t *pair = json_pack("[OO]", value, value);
  json_t *unique = load("{\"uniqueItems\":true}");
  assert_int_equal(schema_validate(unique, pair, &err), SCHEMA_E_LIMIT);
  json_decref(unique);
  json_decref(pair);
  json_decref(schema);
  json_decref(value);

  /* enum and const values are bounded too, so comparing against them is. */
  nested(SCHEMA_MAX_DEPTH + 1, &schema_text, &value_text);
  char *deep_enum = malloc(strlen(value_text) + 32);
  assert_non_null(deep_enum);
  snprintf(deep_enum, strlen(value_text) + 32, "{\"const\":%s}", value_text);
  schema = load(deep_enum);
  free(schema_text);
  free(value_text);
  free(deep_enum);
  assert_int_equal(schema_check(schema, why, sizeof why), -1);
  assert_non_null(strstr(why, "/const: nests deeper"));
  json_decref(schema);
}

/* anyOf branches that nest into each other cost 2^depth on any value: the
 * work limit ends it. Built with shared subtrees, as text it would be huge. */
static void test_schema_work_limit(void **state) {
  (void)state;
  json_t *schema = json_false();
  for (int i = 0; i < 30; i++)
    schema = json_pack("{s:[Oo]}", "anyOf", schema, schema); /* o: ours */
  json_t *value = json_integer(1);
  char why[200];
  struct schema_error err;
  assert_int_equal(schema_check(schema, why, sizeof why), -1);
  assert_non_null(strstr(why, ": is too large to check"));
  assert_int_equal(schema_validate(schema, value, &err), SCHEMA_E_LIMIT);
  assert_non_null(strstr(err.message, "too much work"));
  json_decref(schema);
  json_decref(value);
}

/* The error goes to the model and the logs: it names the rule, never the data.
 * Each case rejects a value made of a secret (as a string, a number or a key). */
static void test_schema_error_never_contains_the_value(void **state) {
  (void)state;
  static const struct {
    const char *schema, *value;
  } cases[] = {
      {LAMP_SCHEMA, "{\"name\":\"SECRET-VALUE-123\",\"on\":\"SECRET-VALUE-123\"}"},
      {LAMP_SCHEMA, "{\"name\":\"x\",\"on\":true,\"SECRET-VALUE-123\":1}"},
      {LAMP_SCHEMA, "{\"SECRET-VALUE-123\":true}"},
      {"{\"additionalProperties\":{\"type\":\"integer\"}}",
       "{\"SECRET-VALUE-123\":\"SECRET-VALUE-123\"}"},
      {"{\"properties\":{\"name\":{\"type\":\"integer\"}}}",
       "{\"name\":\"SECRET-VALUE-123\"}"},
      {"{\"enum\":[\"a\",\"b\"]}", "\"SECRET-VALUE-123\""},
      {"{\"const\":\"a\"}", "\"SECRET-VALUE-123\""},
      {"{\"maxLength\":3}", "\"SECRET-VALUE-123\""},
      {"{\"minLength\":30}", "\"SECRET-VALUE-123\""},
      {"{\"type\":\"integer\"}", "\"SECRET-VALUE-123\""},
      {"{\"anyOf\":[{\"type\":\"null\"},{\"maxLength\":1}]}", "\"SECRET-VALUE-123\""},
      {"{\"oneOf\":[{\"type\":\"string\"},{\"minLength\":1}]}", "\"SECRET-VALUE-123\""},
      {"{\"not\":{\"type\":\"string\"}}", "\"SECRET-VALUE-123\""},
      {"{\"uniqueItems\":true}", "[\"SECRET-VALUE-123\",\"SECRET-VALUE-123\"]"},
      {"{\"items\":{\"type\":\"integer\"}}", "[\"SECRET-VALUE-123\"]"},
      {"{\"maxItems\":1}", "[\"SECRET-VALUE-123\",2]"},
      {"{\"maximum\":5}", "123456789"},
      {"{\"minimum\":5}", "-123456789.25"},
      {"{\"exclusiveMaximum\":5}", "123456789"},
      {"{\"type\":\"integer\"}", "123456789.5"},
      {"{\"enum\":[1]}", "123456789"},
      {"{\"const\":1}", "123456789"},
      {"false", "\"SECRET-VALUE-123\""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct schema_error err;
    int rv = run(cases[i].schema, cases[i].value, &err);
    if (rv != SCHEMA_E_INVALID || strstr(err.message, "SECRET") != NULL ||
        strstr(err.path, "SECRET") != NULL || strstr(err.message, "12345") != NULL ||
        strstr(err.path, "12345") != NULL) {
      print_error("case %zu: %s at \"%s\": %s\n", i, schema_errname(rv), err.path,
                  err.message);
      fail();
    }
  }
}

static void test_schema_check_accepts_what_it_can_apply(void **state) {
  (void)state;
  const char *good[] = {
      "{}",
      LAMP_SCHEMA,
      "{\"type\":[\"integer\",\"null\"],\"minimum\":1.5,\"exclusiveMaximum\":9}",
      "{\"items\":[{},true,{\"enum\":[[1],{\"a\":null}]}],\"minItems\":0,"
      "\"maxItems\":3.0,\"uniqueItems\":false}",
      "{\"anyOf\":[{\"const\":null}],\"oneOf\":[false],\"allOf\":[true],"
      "\"not\":{\"required\":[]}}",
      "{\"additionalProperties\":{\"type\":\"string\",\"minLength\":1,"
      "\"maxLength\":1e20}}",
      "{\"prefixItems\":[{},false],\"items\":{\"type\":\"null\"}}",
      "{\"items\":[],\"additionalItems\":{\"type\":\"string\"}}",
      "{\"minProperties\":1,\"maxProperties\":2.0}",
      "{\"format\":[],\"description\":{},\"x-pattern\":7}", /* ignored keywords */
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    json_t *schema = load(good[i]);
    char why[200] = "untouched";
    int rv = schema_check(schema, why, sizeof why);
    json_decref(schema);
    if (rv != 0) {
      print_error("refused %s: %s\n", good[i], why);
      fail();
    }
    assert_string_equal(why, "untouched");
  }
}

/* Every malformed keyword is found by schema_check with its place in the schema;
 * schema_validate meeting it fails closed with E_SCHEMA rather than ignore it. */
static void test_schema_check_refuses_malformed_keywords(void **state) {
  (void)state;
  static const struct {
    const char *schema, *why, *value;
  } cases[] = {
      {"[]", "(root): must be an object", NULL},
      {"true", "(root): must be an object", NULL},
      {"{\"type\":\"bool\"}", "/type: must be a type name", "true"},
      {"{\"type\":[]}", "/type: must be a type name", "true"},
      {"{\"type\":[\"string\",1]}", "/type: must be a type name", "true"},
      {"{\"properties\":[]}", "/properties: must be an object of schemas", "{}"},
      {"{\"properties\":{\"a/b\":{\"minimum\":\"0\"}}}",
       "/properties/a~1b/minimum: must be a number", "{\"a/b\":1}"},
      {"{\"properties\":{\"x\":3}}", "/properties/x: must be a schema", "{\"x\":1}"},
      {"{\"required\":\"a\"}", "/required: must be an array of property names", "{}"},
      {"{\"required\":[1]}", "/required: must be an array of property names", "{}"},
      {"{\"additionalProperties\":\"no\"}", "/additionalProperties: must be a schema",
       "{\"a\":1}"},
      {"{\"enum\":{}}", "/enum: must be an array", "1"},
      {"{\"items\":1}", "/items: must be a schema", "[1]"},
      {"{\"items\":[{},2]}", "/items/1: must be a schema", "[1,2]"},
      {"{\"minItems\":-1}", "/minItems: must be a non-negative integer", "[]"},
      {"{\"maxItems\":1.5}", "/maxItems: must be a non-negative integer", "[]"},
      {"{\"minLength\":\"2\"}", "/minLength: must be a non-negative integer", "\"\""},
      {"{\"maxLength\":null}", "/maxLength: must be a non-negative integer", "\"\""},
      {"{\"uniqueItems\":1}", "/uniqueItems: must be true or false", "[]"},
      {"{\"maximum\":null}", "/maximum: must be a number", "1"},
      {"{\"exclusiveMinimum\":true}", "/exclusiveMinimum: must be a number", "1"},
      {"{\"anyOf\":[]}", "/anyOf: must be a non-empty array of schemas", "1"},
      {"{\"oneOf\":{}}", "/oneOf: must be a non-empty array of schemas", "1"},
      {"{\"allOf\":[{\"not\":[]}]}", "/allOf/0/not: must be a schema", "1"},
      {"{\"properties\":{\"p\":{\"$ref\":\"#/$defs/p\"}}}",
       "/properties/p/$ref: is not supported", "{\"p\":1}"},
      {"{\"minProperties\":-1}", "/minProperties: must be a non-negative integer", "{}"},
      {"{\"maxProperties\":\"2\"}", "/maxProperties: must be a non-negative integer",
       "{}"},
      {"{\"prefixItems\":[]}", "/prefixItems: must be a non-empty array of schemas",
       "[1]"},
      {"{\"prefixItems\":{}}", "/prefixItems: must be a non-empty array of schemas",
       "[1]"},
      {"{\"items\":[],\"additionalItems\":1}", "/additionalItems: must be a schema",
       "[1]"},
      /* The array keywords of draft 2020-12 and of the drafts before do not mix,
       * and additionalItems alone would check nothing. */
      {"{\"prefixItems\":[{}],\"items\":[{}]}", "/items: must be a schema, not an array",
       "[1]"},
      {"{\"prefixItems\":[{}],\"additionalItems\":false}",
       "/additionalItems: does not apply beside prefixItems", "[1]"},
      {"{\"additionalItems\":false}", "/additionalItems: applies only after an array",
       "[1]"},
      {"{\"items\":{\"type\":\"string\"},\"additionalItems\":false}",
       "/additionalItems: applies only after an array", "[1]"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    json_t *schema = load(cases[i].schema);
    char why[200];
    int checked = schema_check(schema, why, sizeof why);
    struct schema_error err = {0, "", ""};
    int rv = SCHEMA_E_SCHEMA;
    if (cases[i].value != NULL) {
      json_t *value = load(cases[i].value);
      rv = schema_validate(schema, value, &err);
      json_decref(value);
    }
    json_decref(schema);
    if (checked != -1 || strncmp(why, cases[i].why, strlen(cases[i].why)) != 0 ||
        rv != SCHEMA_E_SCHEMA) {
      print_error("%s: check %d \"%s\", validate %s \"%s\"\n", cases[i].schema, checked,
                  why, schema_errname(rv), err.message);
      fail();
    }
  }
  /* A small buffer gets a cut, terminated message; cap 0 is written not at all. */
  json_t *schema = load("{\"minItems\":-1}");
  char tiny[8] = "xxxxxxx", none[1] = {'z'};
  assert_int_equal(schema_check(schema, tiny, sizeof tiny), -1);
  assert_int_equal(schema_check(schema, none, 0), -1);
  json_decref(schema);
  assert_string_equal(tiny, "/min...");
  assert_int_equal(none[0], 'z');
  assert_int_equal(schema_check(NULL, NULL, 0), -1);
}

/* A keyword that constrains the value but that the validator does not apply is
 * refused, wherever it is, by schema_check with its place, and by
 * schema_validate with E_SCHEMA: ignored, it would let the tool run on input
 * its schema forbids. */
static void test_schema_refuses_keywords_it_cannot_apply(void **state) {
  (void)state;
  static const struct {
    const char *schema, *why, *value;
  } cases[] = {
      /* The review's examples: each let through a value its schema forbids. */
      {"{\"if\":{\"const\":1},\"then\":{\"const\":2}}", "/if: ", "1"},
      {"{\"then\":{}}", "/then: ", "1"},
      {"{\"else\":{}}", "/else: ", "1"},
      {"{\"dependentRequired\":{\"a\":[\"b\"]}}", "/dependentRequired: ", "{\"a\":1}"},
      {"{\"propertyNames\":{\"maxLength\":1}}", "/propertyNames: ", "{\"ab\":1}"},
      {"{\"multipleOf\":2}", "/multipleOf: ", "3"},
      {"{\"properties\":{\"s\":{\"pattern\":\"^a$\"}}}",
       "/properties/s/pattern: ", "{\"s\":\"b\"}"},
      /* and the rest, each with a value it would have refused */
      {"{\"patternProperties\":{\"^x\":false}}", "/patternProperties: ", "{\"x\":1}"},
      {"{\"dependentSchemas\":{\"a\":false}}", "/dependentSchemas: ", "{\"a\":1}"},
      {"{\"dependencies\":{\"a\":[\"b\"]}}", "/dependencies: ", "{\"a\":1}"},
      {"{\"unevaluatedProperties\":false}", "/unevaluatedProperties: ", "{\"a\":1}"},
      {"{\"unevaluatedItems\":false}", "/unevaluatedItems: ", "[1]"},
      {"{\"contains\":{\"const\":1}}", "/contains: ", "[2]"},
      {"{\"minContains\":2}", "/minContains: ", "[2]"},
      {"{\"maxContains\":0}", "/maxContains: ", "[2]"},
      {"{\"$dynamicRef\":\"#x\"}", "/$dynamicRef: ", "1"},
      {"{\"$recursiveRef\":\"#\"}", "/$recursiveRef: ", "1"},
      {"{\"extends\":{\"type\":\"string\"}}", "/extends: ", "1"},
      {"{\"disallow\":\"integer\"}", "/disallow: ", "1"},
      {"{\"divisibleBy\":2}", "/divisibleBy: ", "3"},
      /* deep inside, where not and anyOf would otherwise turn it into a pass */
      {"{\"anyOf\":[{\"items\":{\"not\":{\"multipleOf\":3}}}]}",
       "/anyOf/0/items/not/multipleOf: ", "[4]"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    json_t *schema = load(cases[i].schema);
    json_t *value = load(cases[i].value);
    char why[200] = "";
    int checked = schema_check(schema, why, sizeof why);
    struct schema_error err = {0, "", ""};
    int rv = schema_validate(schema, value, &err);
    json_decref(schema);
    json_decref(value);
    char want[120];
    snprintf(want, sizeof want, "%sis not supported by this validator; ", cases[i].why);
    if (checked != -1 || strncmp(why, want, strlen(want)) != 0 || rv != SCHEMA_E_SCHEMA ||
        strncmp(err.message, "cannot be checked: the schema's ", 32) != 0 ||
        strstr(err.message, "is not supported") == NULL) {
      print_error("%s: check %d \"%s\", validate %s \"%s\"\n", cases[i].schema, checked,
                  why, schema_errname(rv), err.message);
      fail();
    }
  }
  /* The hint says what to write instead. */
  json_t *schema = load("{\"items\":{\"$ref\":\"#/$defs/a\"}}");
  char why[200];
  assert_int_equal(schema_check(schema, why, sizeof why), -1);
  json_decref(schema);
  assert_string_equal(why, "/items/$ref: is not supported by this validator; write the "
                           "subschema in place");
}

/* minProperties and maxProperties count an object's members. */
static void test_schema_property_counts(void **state) {
  (void)state;
  const char *s = "{\"minProperties\":1,\"maxProperties\":2}";
  expect_valid(s, "{\"a\":1}");
  expect_valid(s, "{\"a\":1,\"b\":null}");
  expect_invalid(s, "{}", "", "must have at least 1 property");
  expect_invalid(s, "{\"a\":1,\"b\":2,\"c\":3}", "", "must have at most 2 properties");
  expect_valid(s, "[]"); /* object keywords do not apply to other types */
  expect_invalid("{\"minProperties\":2}", "{\"a\":1}", "", "at least 2 properties");
  expect_invalid("{\"maxProperties\":1.0}", "{\"a\":1,\"b\":2}", "",
                 "at most 1 property");
  expect_invalid("{\"properties\":{\"o\":{\"maxProperties\":0}}}", "{\"o\":{\"k\":1}}",
                 "/o", "at most 0 properties");
}

static void test_schema_err_untouched_on_success_and_null_inputs(void **state) {
  (void)state;
  json_t *schema = load(LAMP_SCHEMA);
  json_t *value = load("{\"name\":\"a\",\"on\":false}");
  struct schema_error err = {7, "keep", "keep"};
  assert_int_equal(schema_validate(schema, value, &err), SCHEMA_OK);
  assert_int_equal(err.code, 7);
  assert_string_equal(err.path, "keep");
  assert_string_equal(err.message, "keep");
  assert_int_equal(schema_validate(schema, value, NULL), SCHEMA_OK);
  assert_int_equal(schema_validate(schema, NULL, &err), SCHEMA_E_INVALID);
  assert_int_equal(schema_validate(NULL, value, &err), SCHEMA_E_SCHEMA);
  assert_int_equal(schema_validate(schema, json_object_get(value, "on"), NULL),
                   SCHEMA_E_INVALID);
  json_decref(schema);
  json_decref(value);
}

static void test_schema_errname(void **state) {
  (void)state;
  assert_string_equal(schema_errname(SCHEMA_OK), "OK");
  assert_string_equal(schema_errname(SCHEMA_E_INVALID), "E_INVALID");
  assert_string_equal(schema_errname(SCHEMA_E_SCHEMA), "E_SCHEMA");
  assert_string_equal(schema_errname(SCHEMA_E_LIMIT), "E_LIMIT");
  assert_string_equal(schema_errname(SCHEMA_E_NOMEM), "E_NOMEM");
  assert_string_equal(schema_errname(-5), "E_UNKNOWN");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_schema_realistic_tool_input),
      cmocka_unit_test(test_schema_type_each_name),
      cmocka_unit_test(test_schema_integer_is_a_number_without_fraction),
      cmocka_unit_test(test_schema_empty_true_false_and_unknown_keywords),
      cmocka_unit_test(test_schema_properties_required_additional),
      cmocka_unit_test(test_schema_nested_error_path),
      cmocka_unit_test(test_schema_enum_and_const),
      cmocka_unit_test(test_schema_numbers_compare_exactly),
      cmocka_unit_test(test_schema_arrays),
      cmocka_unit_test(test_schema_string_length_in_code_points),
      cmocka_unit_test(test_schema_combinators),
      cmocka_unit_test(test_schema_depth_limit),
      cmocka_unit_test(test_schema_work_limit),
      cmocka_unit_test(test_schema_error_never_contains_the_value),
      cmocka_unit_test(test_schema_check_accepts_what_it_can_apply),
      cmocka_unit_test(test_schema_check_refuses_malformed_keywords),
      cmocka_unit_test(test_schema_refuses_keywords_it_cannot_apply),
      cmocka_unit_test(test_schema_property_counts),
      cmocka_unit_test(test_schema_err_untouched_on_success_and_null_inputs),
      cmocka_unit_test(test_schema_errname),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
