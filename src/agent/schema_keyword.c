/* Reading the values of schema keywords (schema_impl.h): type names, counts,
 * subschemas, and numbers compared by value. */
#include "schema_impl.h"

#include <stdint.h>
#include <string.h>

enum {
  T_OBJECT = 1 << 0,
  T_ARRAY = 1 << 1,
  T_STRING = 1 << 2,
  T_NUMBER = 1 << 3,
  T_INTEGER = 1 << 4,
  T_BOOLEAN = 1 << 5,
  T_NULL = 1 << 6,
};

/* Indexed by bit: the keyword's name and how a message says it. */
static const struct {
  const char *name, *phrase;
} type_names[] = {
    {"object", "an object"}, {"array", "an array"},     {"string", "a string"},
    {"number", "a number"},  {"integer", "an integer"}, {"boolean", "a boolean"},
    {"null", "null"},
};
#define N_TYPES (sizeof type_names / sizeof type_names[0])

static unsigned type_bit(const json_t *name) {
  if (!json_is_string(name)) return 0;
  for (size_t i = 0; i < N_TYPES; i++)
    if (strcmp(json_string_value(name), type_names[i].name) == 0 &&
        strlen(type_names[i].name) == json_string_length(name))
      return 1u << i;
  return 0;
}

/* "type": one name or a non-empty array of names. 0, or -1 when malformed. */
int schema_read_types(const json_t *kw, unsigned *mask) {
  *mask = 0;
  if (json_is_string(kw)) {
    *mask = type_bit(kw);
    return *mask != 0 ? 0 : -1;
  }
  if (!json_is_array(kw) || json_array_size(kw) == 0) return -1;
  for (size_t i = 0; i < json_array_size(kw); i++) {
    unsigned bit = type_bit(json_array_get(kw, i));
    if (bit == 0) return -1;
    *mask |= bit;
  }
  return 0;
}

/* Beyond 2^53 every double is integral, so out of long long's range needs no
 * test; within it the cast truncates exactly. */
bool schema_real_is_integral(double r) {
  if (r >= 9223372036854775808.0 || r < -9223372036854775808.0) return true;
  return r == (double)(long long)r;
}

bool schema_type_matches(unsigned mask, const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT:
    return mask & T_OBJECT;
  case JSON_ARRAY:
    return mask & T_ARRAY;
  case JSON_STRING:
    return mask & T_STRING;
  case JSON_INTEGER:
    return mask & (T_NUMBER | T_INTEGER);
  case JSON_REAL:
    return (mask & T_NUMBER) ||
           ((mask & T_INTEGER) && schema_real_is_integral(json_real_value(v)));
  case JSON_TRUE:
  case JSON_FALSE:
    return mask & T_BOOLEAN;
  case JSON_NULL:
    return mask & T_NULL;
  }
  return false;
}

/* A non-negative integer (3.0 counts too, as JSON Schema says), clamped to
 * SIZE_MAX. 0, or -1 when malformed. */
int schema_read_count(const json_t *kw, size_t *out) {
  if (json_is_integer(kw)) {
    json_int_t i = json_integer_value(kw);
    if (i < 0) return -1;
    *out = (unsigned long long)i > SIZE_MAX ? SIZE_MAX : (size_t)i;
    return 0;
  }
  if (json_is_real(kw)) {
    double r = json_real_value(kw);
    if (r < 0 || !schema_real_is_integral(r)) return -1;
    *out = r >= (double)SIZE_MAX ? SIZE_MAX : (size_t)r;
    return 0;
  }
  return -1;
}

/* A subschema is an object or a boolean. */
bool schema_is_subschema(const json_t *s) {
  return json_is_object(s) || json_is_boolean(s);
}

/* allOf, anyOf, oneOf: a non-empty array (its items are checked when applied). */
bool schema_is_list(const json_t *kw) {
  return json_is_array(kw) && json_array_size(kw) > 0;
}

/* Exact comparison of a double with an integer, without the rounding of
 * converting one into the other. */
static int cmp_real_int(double r, long long i) {
  if (r >= 9223372036854775808.0) return 1;
  if (r < -9223372036854775808.0) return -1;
  long long t = (long long)r; /* trunc(r), exact in this range */
  if (t != i) return (t > i) - (t < i);
  return (r > (double)t) - (r < (double)t);
}

/* a <=> b for two JSON numbers, by value: 1 and 1.0 are equal. */
int schema_num_cmp(const json_t *a, const json_t *b) {
  if (json_is_integer(a) && json_is_integer(b)) {
    json_int_t x = json_integer_value(a), y = json_integer_value(b);
    return (x > y) - (x < y);
  }
  if (json_is_real(a) && json_is_real(b)) {
    double x = json_real_value(a), y = json_real_value(b);
    return (x > y) - (x < y);
  }
  if (json_is_integer(a)) return -cmp_real_int(json_real_value(b), json_integer_value(a));
  return cmp_real_int(json_real_value(a), json_integer_value(b));
}

void schema_text_types(struct schema_text *t, unsigned mask) {
  const char *sep = "";
  for (size_t i = 0; i < N_TYPES; i++) {
    if (!(mask & (1u << i))) continue;
    schema_text_str(t, sep);
    schema_text_str(t, type_names[i].phrase);
    sep = " or ";
  }
}

/* Keywords that constrain a value but that this validator does not apply. An
 * unknown keyword is ignored, as JSON Schema says, but one of these would then
 * leave part of the input unchecked while the tool's author believes it is
 * checked, so a schema that has one is refused. format, contentEncoding,
 * contentMediaType and contentSchema are not here: draft 2020-12 makes them
 * annotations, which a validator need not assert. $defs and definitions are
 * reached only through $ref, which is refused. */
static const struct {
  const char *name, *hint;
} unsupported[] = {
    {"$ref", "write the subschema in place"},
    {"$dynamicRef", "write the subschema in place"},
    {"$recursiveRef", "write the subschema in place"},
    {"if", "express it with anyOf and not"},
    {"then", "express it with anyOf and not"},
    {"else", "express it with anyOf and not"},
    {"pattern", "no regular expressions are applied; check it in the tool"},
    {"patternProperties", "no regular expressions are applied; check it in the tool"},
    {"propertyNames", "check it in the tool"},
    {"dependentRequired", "check it in the tool"},
    {"dependentSchemas", "check it in the tool"},
    {"dependencies", "check it in the tool"},
    {"unevaluatedProperties", "use additionalProperties"},
    {"unevaluatedItems", "use items"},
    {"contains", "check it in the tool"},
    {"minContains", "check it in the tool"},
    {"maxContains", "check it in the tool"},
    {"multipleOf", "check it in the tool"},
    {"extends", "use allOf"},                /* draft 3 */
    {"disallow", "use not"},                 /* draft 3 */
    {"divisibleBy", "check it in the tool"}, /* draft 3's multipleOf */
};

const char *schema_unsupported_keyword(const json_t *s, const char **hint) {
  for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
    if (json_object_get(s, unsupported[i].name) == NULL) continue;
    if (hint != NULL) *hint = unsupported[i].hint;
    return unsupported[i].name;
  }
  return NULL;
}
