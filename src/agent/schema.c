/* The tool input validator (see schema.h). One recursive walk applies a schema
 * to a value; the recursion depth is the schema's nesting depth, capped at
 * SCHEMA_MAX_DEPTH, and every node visited costs a step out of SCHEMA_MAX_STEPS.
 * Error texts are built only from the schema and from indexes: no byte of the
 * value is ever copied into them. */
#include "schema.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* jansson's iterators take a non-const object but never modify it. */
static json_t *mut(const json_t *j) {
  return (json_t *)j;
}

/* ---- Bounded text ------------------------------------------------------- */

/* Text into a fixed buffer. Invariant: len <= cap; len == cap means it was cut
 * (ends in "...") and takes no more; otherwise p[len] == '\0'. */
struct text {
  char *p;
  size_t cap;
  size_t len;
};

static void text_init(struct text *t, char *p, size_t cap) {
  t->p = p;
  t->cap = cap;
  t->len = 0;
  if (cap > 0) p[0] = '\0';
}

static bool utf8_continuation(char ch) {
  return ((unsigned char)ch & 0xc0) == 0x80;
}

/* Appends s[0..n). Control bytes become '?', so a schema's key cannot break a
 * log line. A cut ends in "...", taking back earlier text if the buffer is
 * already full, and never splits a UTF-8 sequence. */
static void text_put(struct text *t, const char *s, size_t n) {
  if (t->len >= t->cap) return;
  size_t room = t->cap - 1 - t->len;
  bool cut = n > room;
  if (cut) {
    n = room >= 3 ? room - 3 : 0;
    while (n > 0 && utf8_continuation(s[n]))
      n--;
  }
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    t->p[t->len++] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
  }
  if (cut) {
    size_t max_end = t->cap > 4 ? t->cap - 4 : 0; /* room for "...\0" */
    if (t->len > max_end) {
      t->len = max_end;
      while (t->len > 0 && utf8_continuation(t->p[t->len]))
        t->len--;
    }
    for (int dots = 0; dots < 3 && t->len < t->cap - 1; dots++)
      t->p[t->len++] = '.';
    t->p[t->len] = '\0';
    t->len = t->cap;
    return;
  }
  t->p[t->len] = '\0';
}

static void text_str(struct text *t, const char *s) {
  text_put(t, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static void text_printf(struct text *t,
                                                              const char *fmt, ...) {
  char buf[128];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  text_put(t, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* Truncates back to an earlier length (a path segment is popped). */
static void text_restore(struct text *t, size_t len) {
  t->len = len;
  if (len < t->cap) t->p[len] = '\0';
}

/* "/key" as a JSON Pointer segment: '~' is "~0" and '/' is "~1". */
static void text_key(struct text *t, const char *key, size_t len) {
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
  text_put(t, buf, n);
}

/* A limit from the schema. %g follows the locale's decimal point, which the
 * message must not (the daemon may run with a decimal comma). */
static void text_number(struct text *t, const json_t *num) {
  if (json_is_integer(num)) {
    text_printf(t, "%lld", (long long)json_integer_value(num));
    return;
  }
  char buf[48];
  snprintf(buf, sizeof buf, "%.15g", json_real_value(num));
  for (char *ch = buf; *ch != '\0'; ch++)
    if (*ch == ',') *ch = '.';
  text_str(t, buf);
}

static int dump_to_text(const char *buffer, size_t size, void *data) {
  struct text *t = data;
  text_put(t, buffer, size);
  return t->len >= t->cap ? -1 : 0; /* full: stop jansson early */
}

/* Part of the schema as compact ASCII JSON (enum and const values). */
static void text_json(struct text *t, const json_t *j) {
  json_dump_callback(j, dump_to_text, t,
                     JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
}

/* ---- Keyword values ------------------------------------------------------ */

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
static int read_types(const json_t *kw, unsigned *mask) {
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
static bool real_is_integral(double r) {
  if (r >= 9223372036854775808.0 || r < -9223372036854775808.0) return true;
  return r == (double)(long long)r;
}

static bool type_matches(unsigned mask, const json_t *v) {
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
           ((mask & T_INTEGER) && real_is_integral(json_real_value(v)));
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
static int read_count(const json_t *kw, size_t *out) {
  if (json_is_integer(kw)) {
    json_int_t i = json_integer_value(kw);
    if (i < 0) return -1;
    *out = (unsigned long long)i > SIZE_MAX ? SIZE_MAX : (size_t)i;
    return 0;
  }
  if (json_is_real(kw)) {
    double r = json_real_value(kw);
    if (r < 0 || !real_is_integral(r)) return -1;
    *out = r >= (double)SIZE_MAX ? SIZE_MAX : (size_t)r;
    return 0;
  }
  return -1;
}

/* A subschema is an object or a boolean. */
static bool is_schema(const json_t *s) {
  return json_is_object(s) || json_is_boolean(s);
}

/* allOf, anyOf, oneOf: a non-empty array (its items are checked when applied). */
static bool is_schema_list(const json_t *kw) {
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
static int num_cmp(const json_t *a, const json_t *b) {
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

/* ---- Validation --------------------------------------------------------- */

struct ctx {
  size_t depth;        /* subschema levels below the root, <= MAX_DEPTH */
  unsigned long steps; /* work done so far, <= SCHEMA_MAX_STEPS */
  char path_buf[SCHEMA_PATH_CAP];
  struct text path;      /* the value being checked, as a JSON Pointer */
  struct schema_error e; /* scratch: anyOf branches fail here too */
};

/* Records a problem of kind code at the current path, with an empty message;
 * the caller writes the message through the returned text and returns code. */
static struct text fail_text(struct ctx *c, int code) {
  c->e.code = code;
  memcpy(c->e.path, c->path_buf, sizeof c->e.path); /* same size, NUL-terminated */
  struct text t;
  text_init(&t, c->e.message, sizeof c->e.message);
  return t;
}

__attribute__((format(printf, 3, 4))) static int fail(struct ctx *c, int code,
                                                      const char *fmt, ...) {
  struct text t = fail_text(c, code);
  char buf[SCHEMA_MESSAGE_CAP];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0) text_put(&t, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
  return code;
}

static int bad_keyword(struct ctx *c, const char *keyword, const char *should) {
  return fail(c, SCHEMA_E_SCHEMA, "cannot be checked: the schema's %s %s", keyword,
              should);
}

static int step(struct ctx *c) {
  if (++c->steps <= SCHEMA_MAX_STEPS) return 0;
  return fail(c, SCHEMA_E_LIMIT, "is too much work to check (over %lu steps)",
              SCHEMA_MAX_STEPS);
}

/* 1 when equal by JSON Schema's rules (numbers by value), 0 when not, or a
 * negative code. The recursion stops where the types differ, so against a
 * schema's enum value it is as deep as that value, which schema_check bounds. */
static int equal(struct ctx *c, const json_t *a, const json_t *b, size_t depth) {
  int rv = step(c);
  if (rv < 0) return rv;
  if (json_is_number(a) && json_is_number(b)) return num_cmp(a, b) == 0;
  if (json_typeof(a) != json_typeof(b)) return 0;
  if (depth > SCHEMA_MAX_DEPTH)
    return fail(c, SCHEMA_E_LIMIT, "nests deeper than %d levels to compare",
                SCHEMA_MAX_DEPTH);
  switch (json_typeof(a)) {
  case JSON_STRING:
    return json_string_length(a) == json_string_length(b) &&
           memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
  case JSON_ARRAY:
    if (json_array_size(a) != json_array_size(b)) return 0;
    for (size_t i = 0; i < json_array_size(a); i++) {
      rv = equal(c, json_array_get(a, i), json_array_get(b, i), depth + 1);
      if (rv != 1) return rv;
    }
    return 1;
  case JSON_OBJECT:
    if (json_object_size(a) != json_object_size(b)) return 0;
    for (void *it = json_object_iter(mut(a)); it != NULL;
         it = json_object_iter_next(mut(a), it)) {
      const json_t *bv =
          json_object_getn(b, json_object_iter_key(it), json_object_iter_key_len(it));
      if (bv == NULL) return 0;
      rv = equal(c, json_object_iter_value(it), bv, depth + 1);
      if (rv != 1) return rv;
    }
    return 1;
  default:
    return 1; /* null, true, false: the type is the value */
  }
}

static uint64_t mix(uint64_t x) { /* splitmix64's finalizer */
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9u;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

static uint64_t hash_bytes(const char *s, size_t len) { /* FNV-1a */
  uint64_t h = 0xcbf29ce484222325u;
  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char)s[i]) * 0x100000001b3u;
  return h;
}

/* A hash that agrees with equal(): numbers equal by value hash alike, and an
 * object's hash does not depend on member order. Below SCHEMA_MAX_DEPTH only
 * the type counts; equal() decides. */
static int hash_value(struct ctx *c, const json_t *v, size_t depth, uint64_t *out) {
  int rv = step(c);
  if (rv < 0) return rv;
  uint64_t h = (uint64_t)json_typeof(v) + 1;
  if (json_is_number(v)) {
    /* An integral real hashes as the integer it equals (-0.0 as 0); any other
     * real equals no integer, so its bits will do. */
    uint64_t key;
    double r = json_is_real(v) ? json_real_value(v) : 0;
    if (json_is_integer(v))
      key = (uint64_t)json_integer_value(v);
    else if (real_is_integral(r) && r < 9223372036854775808.0 &&
             r >= -9223372036854775808.0)
      key = (uint64_t)(long long)r;
    else
      memcpy(&key, &r, sizeof key);
    *out = mix(key ^ 0x6e756d62657273u);
    return 0;
  }
  if (json_is_string(v)) {
    h = hash_bytes(json_string_value(v), json_string_length(v));
  } else if (json_is_array(v) && depth < SCHEMA_MAX_DEPTH) {
    for (size_t i = 0; i < json_array_size(v); i++) {
      uint64_t item;
      if ((rv = hash_value(c, json_array_get(v, i), depth + 1, &item)) < 0) return rv;
      h = mix(h ^ item);
    }
  } else if (json_is_object(v) && depth < SCHEMA_MAX_DEPTH) {
    for (void *it = json_object_iter(mut(v)); it != NULL;
         it = json_object_iter_next(mut(v), it)) {
      uint64_t member;
      if ((rv = hash_value(c, json_object_iter_value(it), depth + 1, &member)) < 0)
        return rv;
      /* a sum, so the order of members does not matter */
      h += mix(hash_bytes(json_object_iter_key(it), json_object_iter_key_len(it)) ^
               member);
    }
  }
  *out = mix(h);
  return 0;
}

struct slot {
  uint64_t hash;
  size_t index;
};

static int slot_cmp(const void *pa, const void *pb) {
  const struct slot *a = pa, *b = pb;
  if (a->hash != b->hash) return a->hash < b->hash ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

/* uniqueItems: items sorted by hash, then only items of equal hash compared, so
 * a long array of distinct items costs n log n and not n^2. */
static int check_unique(struct ctx *c, const json_t *arr) {
  size_t n = json_array_size(arr);
  if (n < 2) return 0;
  if (n > SIZE_MAX / sizeof(struct slot))
    return fail(c, SCHEMA_E_NOMEM, "cannot be checked: out of memory");
  struct slot *slots = malloc(n * sizeof *slots);
  if (slots == NULL) return fail(c, SCHEMA_E_NOMEM, "cannot be checked: out of memory");
  int rv = 0;
  for (size_t i = 0; i < n && rv == 0; i++) {
    slots[i].index = i;
    rv = hash_value(c, json_array_get(arr, i), 0, &slots[i].hash);
  }
  if (rv == 0) qsort(slots, n, sizeof *slots, slot_cmp);
  for (size_t i = 0; i < n && rv == 0;) {
    size_t end = i + 1;
    while (end < n && slots[end].hash == slots[i].hash)
      end++;
    for (size_t a = i; a < end && rv == 0; a++) {
      for (size_t b = a + 1; b < end && rv == 0; b++) {
        int eq = equal(c, json_array_get(arr, slots[a].index),
                       json_array_get(arr, slots[b].index), 0);
        if (eq < 0) rv = eq;
        if (eq == 1)
          rv = fail(c, SCHEMA_E_INVALID,
                    "must not repeat an item (uniqueItems): items %zu and %zu are equal",
                    slots[a].index, slots[b].index);
      }
    }
    i = end;
  }
  free(slots);
  return rv;
}

static int validate(struct ctx *c, const json_t *s, const json_t *v);

/* Applies a subschema one level down, within the depth limit. */
static int validate_sub(struct ctx *c, const json_t *s, const json_t *v) {
  if (c->depth >= SCHEMA_MAX_DEPTH)
    return fail(c, SCHEMA_E_LIMIT, "cannot be checked: the schema nests deeper than %d",
                SCHEMA_MAX_DEPTH);
  c->depth++;
  int rv = validate(c, s, v);
  c->depth--;
  return rv;
}

static int validate_type(struct ctx *c, const json_t *kw, const json_t *v) {
  unsigned mask;
  if (read_types(kw, &mask) < 0)
    return bad_keyword(c, "type", "is not a type name or a list of them");
  if (type_matches(mask, v)) return 0;
  struct text t = fail_text(c, SCHEMA_E_INVALID);
  text_str(&t, "must be ");
  const char *sep = "";
  for (size_t i = 0; i < N_TYPES; i++) {
    if (!(mask & (1u << i))) continue;
    text_str(&t, sep);
    text_str(&t, type_names[i].phrase);
    sep = " or ";
  }
  return SCHEMA_E_INVALID;
}

static int validate_enum(struct ctx *c, const json_t *kw, const json_t *v) {
  if (!json_is_array(kw)) return bad_keyword(c, "enum", "is not an array");
  for (size_t i = 0; i < json_array_size(kw); i++) {
    int eq = equal(c, json_array_get(kw, i), v, 0);
    if (eq != 0) return eq < 0 ? eq : 0;
  }
  struct text t = fail_text(c, SCHEMA_E_INVALID);
  text_str(&t, "must be one of the values in enum: ");
  text_json(&t, kw);
  return SCHEMA_E_INVALID;
}

static int validate_const(struct ctx *c, const json_t *kw, const json_t *v) {
  int eq = equal(c, kw, v, 0);
  if (eq != 0) return eq < 0 ? eq : 0;
  struct text t = fail_text(c, SCHEMA_E_INVALID);
  text_str(&t, "must be the value in const: ");
  text_json(&t, kw);
  return SCHEMA_E_INVALID;
}

static int validate_object(struct ctx *c, const json_t *s, const json_t *v) {
  const json_t *props = json_object_get(s, "properties");
  if (props != NULL && !json_is_object(props))
    return bad_keyword(c, "properties", "is not an object");

  const json_t *req = json_object_get(s, "required");
  if (req != NULL && !json_is_array(req))
    return bad_keyword(c, "required", "is not an array of names");
  for (size_t i = 0; i < json_array_size(req); i++) {
    const json_t *name = json_array_get(req, i);
    int rv = step(c);
    if (rv < 0) return rv;
    if (!json_is_string(name))
      return bad_keyword(c, "required", "is not an array of names");
    if (json_object_getn(v, json_string_value(name), json_string_length(name)) != NULL)
      continue;
    /* The name comes from the schema, so the model may see it. */
    struct text t = fail_text(c, SCHEMA_E_INVALID);
    text_str(&t, "is missing the required property \"");
    text_put(&t, json_string_value(name), json_string_length(name));
    text_str(&t, "\"");
    return SCHEMA_E_INVALID;
  }

  for (void *it = json_object_iter(mut(props)); it != NULL;
       it = json_object_iter_next(mut(props), it)) {
    const char *key = json_object_iter_key(it);
    size_t key_len = json_object_iter_key_len(it);
    int rv = step(c);
    if (rv < 0) return rv;
    const json_t *member = json_object_getn(v, key, key_len);
    if (member == NULL) continue;
    size_t saved = c->path.len;
    text_key(&c->path, key, key_len); /* the schema's key: a known name */
    rv = validate_sub(c, json_object_iter_value(it), member);
    text_restore(&c->path, saved);
    if (rv < 0) return rv;
  }

  const json_t *extra = json_object_get(s, "additionalProperties");
  if (extra == NULL || json_is_true(extra)) return 0;
  if (!is_schema(extra))
    return bad_keyword(c, "additionalProperties", "is not a boolean or a schema");
  for (void *it = json_object_iter(mut(v)); it != NULL;
       it = json_object_iter_next(mut(v), it)) {
    int rv = step(c);
    if (rv < 0) return rv;
    if (json_object_getn(props, json_object_iter_key(it), json_object_iter_key_len(it)))
      continue;
    /* The model chose this key: it stays out of the path. */
    size_t saved = c->path.len;
    text_str(&c->path, "/(unknown key)");
    if (json_is_false(extra))
      rv = fail(c, SCHEMA_E_INVALID,
                "is not allowed: the object may only have the properties the schema "
                "lists (additionalProperties is false)");
    else
      rv = validate_sub(c, extra, json_object_iter_value(it));
    text_restore(&c->path, saved);
    if (rv < 0) return rv;
  }
  return 0;
}

static int validate_array(struct ctx *c, const json_t *s, const json_t *v) {
  size_t n = json_array_size(v), limit;
  const json_t *kw;
  if ((kw = json_object_get(s, "minItems")) != NULL) {
    if (read_count(kw, &limit) < 0)
      return bad_keyword(c, "minItems", "is not a non-negative integer");
    if (n < limit)
      return fail(c, SCHEMA_E_INVALID, "must have at least %zu item%s", limit,
                  limit == 1 ? "" : "s");
  }
  if ((kw = json_object_get(s, "maxItems")) != NULL) {
    if (read_count(kw, &limit) < 0)
      return bad_keyword(c, "maxItems", "is not a non-negative integer");
    if (n > limit)
      return fail(c, SCHEMA_E_INVALID, "must have at most %zu item%s", limit,
                  limit == 1 ? "" : "s");
  }
  const json_t *items = json_object_get(s, "items");
  if (items != NULL && !is_schema(items) && !json_is_array(items))
    return bad_keyword(c, "items", "is not a schema or an array of schemas");
  if (items != NULL) {
    /* An array of schemas applies by position (the draft 4-2019 tuple form);
     * items past its end are not checked, as additionalItems is not supported. */
    size_t n_checked =
        json_is_array(items) && json_array_size(items) < n ? json_array_size(items) : n;
    for (size_t i = 0; i < n_checked; i++) {
      const json_t *sub = json_is_array(items) ? json_array_get(items, i) : items;
      size_t saved = c->path.len;
      text_printf(&c->path, "/%zu", i);
      int rv = validate_sub(c, sub, json_array_get(v, i));
      text_restore(&c->path, saved);
      if (rv < 0) return rv;
    }
  }
  if ((kw = json_object_get(s, "uniqueItems")) != NULL) {
    if (!json_is_boolean(kw)) return bad_keyword(c, "uniqueItems", "is not a boolean");
    if (json_is_true(kw)) return check_unique(c, v);
  }
  return 0;
}

/* jansson keeps strings as valid UTF-8, so counting the bytes that start a
 * sequence counts code points. */
static size_t utf8_count(const char *s, size_t len) {
  size_t n = 0;
  for (size_t i = 0; i < len; i++)
    n += ((unsigned char)s[i] & 0xc0) != 0x80;
  return n;
}

static int validate_string(struct ctx *c, const json_t *s, const json_t *v) {
  /* "pattern" is skipped: no regex library is in scope, and an ECMA-262 regex
   * from a schema could backtrack for exponential time. The tool itself must
   * still check what a pattern would have. */
  const json_t *min = json_object_get(s, "minLength");
  const json_t *max = json_object_get(s, "maxLength");
  if (min == NULL && max == NULL) return 0;
  size_t n = utf8_count(json_string_value(v), json_string_length(v)), limit;
  if (min != NULL) {
    if (read_count(min, &limit) < 0)
      return bad_keyword(c, "minLength", "is not a non-negative integer");
    if (n < limit)
      return fail(c, SCHEMA_E_INVALID, "must be at least %zu character%s long", limit,
                  limit == 1 ? "" : "s");
  }
  if (max != NULL) {
    if (read_count(max, &limit) < 0)
      return bad_keyword(c, "maxLength", "is not a non-negative integer");
    if (n > limit)
      return fail(c, SCHEMA_E_INVALID, "must be at most %zu character%s long", limit,
                  limit == 1 ? "" : "s");
  }
  return 0;
}

static int validate_number(struct ctx *c, const json_t *s, const json_t *v) {
  /* keyword, comparison that passes (sign of value <=> limit), its wording */
  static const struct {
    const char *keyword, *op;
    int low, high;
  } bounds[] = {
      {"minimum", ">=", 0, 1},
      {"maximum", "<=", -1, 0},
      {"exclusiveMinimum", ">", 1, 1},
      {"exclusiveMaximum", "<", -1, -1},
  };
  for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
    const json_t *kw = json_object_get(s, bounds[i].keyword);
    if (kw == NULL) continue;
    if (!json_is_number(kw)) return bad_keyword(c, bounds[i].keyword, "is not a number");
    int cmp = num_cmp(v, kw);
    if (cmp >= bounds[i].low && cmp <= bounds[i].high) continue;
    struct text t = fail_text(c, SCHEMA_E_INVALID);
    text_printf(&t, "must be %s ", bounds[i].op);
    text_number(&t, kw);
    text_printf(&t, " (%s)", bounds[i].keyword);
    return SCHEMA_E_INVALID;
  }
  return 0;
}

/* allOf, anyOf, oneOf and not all apply their branches to the same value. */
static int validate_combinators(struct ctx *c, const json_t *s, const json_t *v) {
  const json_t *kw;
  if ((kw = json_object_get(s, "allOf")) != NULL) {
    if (!is_schema_list(kw)) return bad_keyword(c, "allOf", "is not a list of schemas");
    for (size_t i = 0; i < json_array_size(kw); i++) {
      int rv = validate_sub(c, json_array_get(kw, i), v);
      if (rv < 0) return rv; /* the branch's own error says most */
    }
  }
  if ((kw = json_object_get(s, "anyOf")) != NULL) {
    if (!is_schema_list(kw)) return bad_keyword(c, "anyOf", "is not a list of schemas");
    bool matched = false;
    for (size_t i = 0; i < json_array_size(kw) && !matched; i++) {
      int rv = validate_sub(c, json_array_get(kw, i), v);
      if (rv < 0 && rv != SCHEMA_E_INVALID) return rv;
      matched = rv == 0;
    }
    if (!matched)
      return fail(c, SCHEMA_E_INVALID,
                  "must match at least one of the %zu schemas in anyOf",
                  json_array_size(kw));
  }
  if ((kw = json_object_get(s, "oneOf")) != NULL) {
    if (!is_schema_list(kw)) return bad_keyword(c, "oneOf", "is not a list of schemas");
    size_t first = 0, n_matched = 0;
    for (size_t i = 0; i < json_array_size(kw); i++) {
      int rv = validate_sub(c, json_array_get(kw, i), v);
      if (rv < 0 && rv != SCHEMA_E_INVALID) return rv;
      if (rv != 0) continue;
      if (n_matched++ == 0) {
        first = i;
        continue;
      }
      return fail(c, SCHEMA_E_INVALID,
                  "must match exactly one schema in oneOf, but matches %zu and %zu",
                  first, i);
    }
    if (n_matched == 0)
      return fail(c, SCHEMA_E_INVALID,
                  "must match exactly one schema in oneOf, but matches none of %zu",
                  json_array_size(kw));
  }
  if ((kw = json_object_get(s, "not")) != NULL) {
    if (!is_schema(kw)) return bad_keyword(c, "not", "is not a schema");
    int rv = validate_sub(c, kw, v);
    if (rv == 0) return fail(c, SCHEMA_E_INVALID, "must not match the schema in not");
    if (rv != SCHEMA_E_INVALID) return rv;
  }
  return 0;
}

static int validate(struct ctx *c, const json_t *s, const json_t *v) {
  int rv = step(c);
  if (rv < 0) return rv;
  if (json_is_true(s)) return 0;
  if (json_is_false(s))
    return fail(c, SCHEMA_E_INVALID, "is not allowed here (the schema is false)");
  if (!json_is_object(s))
    return fail(c, SCHEMA_E_SCHEMA,
                "cannot be checked: a schema is not an object or a boolean");
  if (json_object_get(s, "$ref") != NULL)
    return bad_keyword(c, "$ref", "is not supported");

  const json_t *kw;
  if ((kw = json_object_get(s, "type")) != NULL && (rv = validate_type(c, kw, v)) < 0)
    return rv;
  if ((kw = json_object_get(s, "enum")) != NULL && (rv = validate_enum(c, kw, v)) < 0)
    return rv;
  if ((kw = json_object_get(s, "const")) != NULL && (rv = validate_const(c, kw, v)) < 0)
    return rv;

  switch (json_typeof(v)) {
  case JSON_OBJECT:
    rv = validate_object(c, s, v);
    break;
  case JSON_ARRAY:
    rv = validate_array(c, s, v);
    break;
  case JSON_STRING:
    rv = validate_string(c, s, v);
    break;
  case JSON_INTEGER:
  case JSON_REAL:
    rv = validate_number(c, s, v);
    break;
  default:
    rv = 0;
    break;
  }
  if (rv < 0) return rv;
  return validate_combinators(c, s, v);
}

int schema_validate(const json_t *schema, const json_t *value, struct schema_error *err) {
  struct ctx ctx;
  struct ctx *c = &ctx;
  memset(c, 0, sizeof *c);
  text_init(&c->path, c->path_buf, sizeof c->path_buf);
  int rv;
  if (schema == NULL)
    rv = fail(c, SCHEMA_E_SCHEMA, "cannot be checked: there is no schema");
  else if (value == NULL)
    rv = fail(c, SCHEMA_E_INVALID, "is missing");
  else
    rv = validate(c, schema, value);
  if (rv < 0 && err != NULL) *err = c->e;
  return rv;
}

/* ---- Schema check ------------------------------------------------------- */

/* What a keyword's value must be, for schema_check. Keywords not listed are
 * ignored (pattern among them, see validate_string). */
enum kw_form {
  KW_TYPE,        /* a type name or a non-empty array of them */
  KW_SCHEMA,      /* a subschema */
  KW_SCHEMA_MAP,  /* an object of subschemas */
  KW_SCHEMA_LIST, /* a non-empty array of subschemas */
  KW_ITEMS,       /* a subschema or an array of them */
  KW_NAMES,       /* an array of strings */
  KW_VALUES,      /* an array of JSON values, each at most SCHEMA_MAX_DEPTH deep */
  KW_VALUE,       /* a JSON value at most SCHEMA_MAX_DEPTH deep */
  KW_COUNT,       /* a non-negative integer */
  KW_NUMBER,      /* a number */
  KW_BOOLEAN,     /* true or false */
  KW_REFUSED,     /* supported nowhere: the schema cannot be applied */
};

static const struct {
  const char *name;
  enum kw_form form;
} keywords[] = {
    {"type", KW_TYPE},
    {"properties", KW_SCHEMA_MAP},
    {"required", KW_NAMES},
    {"additionalProperties", KW_SCHEMA},
    {"enum", KW_VALUES},
    {"const", KW_VALUE},
    {"items", KW_ITEMS},
    {"minItems", KW_COUNT},
    {"maxItems", KW_COUNT},
    {"uniqueItems", KW_BOOLEAN},
    {"minLength", KW_COUNT},
    {"maxLength", KW_COUNT},
    {"minimum", KW_NUMBER},
    {"maximum", KW_NUMBER},
    {"exclusiveMinimum", KW_NUMBER}, /* draft 4's boolean form is refused */
    {"exclusiveMaximum", KW_NUMBER},
    {"allOf", KW_SCHEMA_LIST},
    {"anyOf", KW_SCHEMA_LIST},
    {"oneOf", KW_SCHEMA_LIST},
    {"not", KW_SCHEMA},
    {"$ref", KW_REFUSED},
};

#define STRINGIFY_(x) #x
#define STRINGIFY(x)  STRINGIFY_(x)
#define DEPTH_TEXT    STRINGIFY(SCHEMA_MAX_DEPTH)

struct check {
  char path_buf[2 * SCHEMA_PATH_CAP];
  struct text path;    /* the keyword being checked, as a JSON Pointer */
  const char *why;     /* set on the first failure */
  unsigned long steps; /* subschemas visited, <= SCHEMA_MAX_STEPS: a schema built
                          in memory may share subtrees, so it can be a DAG whose
                          walk is exponential in its size */
};

/* An enum or const value nests at most SCHEMA_MAX_DEPTH (see equal()). */
static bool value_depth_ok(struct check *k, const json_t *v, size_t depth) {
  if (depth > SCHEMA_MAX_DEPTH || ++k->steps > SCHEMA_MAX_STEPS) return false;
  if (json_is_array(v)) {
    for (size_t i = 0; i < json_array_size(v); i++)
      if (!value_depth_ok(k, json_array_get(v, i), depth + 1)) return false;
  } else if (json_is_object(v)) {
    for (void *it = json_object_iter(mut(v)); it != NULL;
         it = json_object_iter_next(mut(v), it))
      if (!value_depth_ok(k, json_object_iter_value(it), depth + 1)) return false;
  }
  return true;
}

static int check_schema(struct check *k, const json_t *s, size_t depth);

/* The subschema at path + "/<index>". */
static int check_at_index(struct check *k, const json_t *s, size_t i, size_t depth) {
  size_t saved = k->path.len;
  text_printf(&k->path, "/%zu", i);
  int rv = check_schema(k, s, depth);
  if (rv == 0) text_restore(&k->path, saved);
  return rv;
}

static int check_keyword(struct check *k, enum kw_form form, const json_t *kw,
                         size_t depth) {
  unsigned mask;
  size_t count;
  switch (form) {
  case KW_TYPE:
    k->why = "must be a type name or a non-empty array of them (object, array, "
             "string, number, integer, boolean, null)";
    return read_types(kw, &mask);
  case KW_SCHEMA:
    return check_schema(k, kw, depth + 1);
  case KW_SCHEMA_MAP:
    k->why = "must be an object of schemas";
    if (!json_is_object(kw)) return -1;
    for (void *it = json_object_iter(mut(kw)); it != NULL;
         it = json_object_iter_next(mut(kw), it)) {
      size_t saved = k->path.len;
      text_key(&k->path, json_object_iter_key(it), json_object_iter_key_len(it));
      if (check_schema(k, json_object_iter_value(it), depth + 1) < 0) return -1;
      text_restore(&k->path, saved);
    }
    return 0;
  case KW_SCHEMA_LIST:
    k->why = "must be a non-empty array of schemas";
    if (!is_schema_list(kw)) return -1;
    for (size_t i = 0; i < json_array_size(kw); i++)
      if (check_at_index(k, json_array_get(kw, i), i, depth + 1) < 0) return -1;
    return 0;
  case KW_ITEMS:
    if (!json_is_array(kw)) return check_schema(k, kw, depth + 1);
    for (size_t i = 0; i < json_array_size(kw); i++)
      if (check_at_index(k, json_array_get(kw, i), i, depth + 1) < 0) return -1;
    return 0;
  case KW_NAMES:
    k->why = "must be an array of property names";
    if (!json_is_array(kw)) return -1;
    for (size_t i = 0; i < json_array_size(kw); i++)
      if (!json_is_string(json_array_get(kw, i))) return -1;
    return 0;
  case KW_VALUES:
    k->why = "must be an array";
    if (!json_is_array(kw)) return -1;
    k->why = "has a value nested deeper than " DEPTH_TEXT " levels, or is too large";
    for (size_t i = 0; i < json_array_size(kw); i++)
      if (!value_depth_ok(k, json_array_get(kw, i), 0)) return -1;
    return 0;
  case KW_VALUE:
    k->why = "nests deeper than " DEPTH_TEXT " levels, or is too large";
    return value_depth_ok(k, kw, 0) ? 0 : -1;
  case KW_COUNT:
    k->why = "must be a non-negative integer";
    return read_count(kw, &count);
  case KW_NUMBER:
    k->why = "must be a number";
    return json_is_number(kw) ? 0 : -1;
  case KW_BOOLEAN:
    k->why = "must be true or false";
    return json_is_boolean(kw) ? 0 : -1;
  case KW_REFUSED:
    k->why = "is not supported by this validator";
    return -1;
  }
  return -1;
}

static int check_schema(struct check *k, const json_t *s, size_t depth) {
  if (++k->steps > SCHEMA_MAX_STEPS) {
    k->why = "is too large to check";
    return -1;
  }
  if (depth > SCHEMA_MAX_DEPTH) {
    k->why = "nests deeper than the limit of " DEPTH_TEXT " levels";
    return -1;
  }
  if (json_is_boolean(s)) return 0;
  if (!json_is_object(s)) {
    k->why = "must be a schema: an object or a boolean";
    return -1;
  }
  for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++) {
    const json_t *kw = json_object_get(s, keywords[i].name);
    if (kw == NULL) continue;
    size_t saved = k->path.len;
    text_key(&k->path, keywords[i].name, strlen(keywords[i].name));
    if (check_keyword(k, keywords[i].form, kw, depth) < 0) return -1;
    text_restore(&k->path, saved);
  }
  return 0;
}

int schema_check(const json_t *schema, char *err, size_t cap) {
  struct check check;
  struct check *k = &check;
  text_init(&k->path, k->path_buf, sizeof k->path_buf);
  k->steps = 0;
  k->why = "must be an object";
  int rv = json_is_object(schema) ? check_schema(k, schema, 0) : -1;
  if (rv < 0 && cap > 0) {
    /* The reason matters more than the whole path: a long path is cut first. */
    size_t tail = 2 + strlen(k->why);
    struct text t;
    text_init(&t, err, cap > tail + 16 ? cap - tail : cap);
    text_str(&t, k->path.len == 0 ? "(root)" : k->path.p);
    t.cap = cap;
    t.len = strlen(err);
    text_str(&t, ": ");
    text_str(&t, k->why);
  }
  return rv;
}

const char *schema_errname(int code) {
  switch (code) {
#define SCHEMA_NAME_(name, value, message) \
  case SCHEMA_##name:                      \
    return #name;
    SCHEMA_ERRORS(SCHEMA_NAME_)
#undef SCHEMA_NAME_
  }
  return "E_UNKNOWN";
}
