/* The tool input validator (see schema.h). One recursive walk applies a schema
 * to a value; the recursion depth is the schema's nesting depth, capped at
 * SCHEMA_MAX_DEPTH, and every node visited costs a step out of SCHEMA_MAX_STEPS.
 * Error texts are built only from the schema and from indexes: no byte of the
 * value is ever copied into them. */
#include "schema_impl.h"

#include "turn/turn.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ctx {
  size_t depth;        /* subschema levels below the root, <= MAX_DEPTH */
  unsigned long steps; /* work done so far, <= SCHEMA_MAX_STEPS */
  char path_buf[SCHEMA_PATH_CAP];
  struct schema_text path; /* the value being checked, as a JSON Pointer */
  struct schema_error e;   /* scratch: anyOf branches fail here too */
};

/* Records a problem of kind code at the current path, with an empty message;
 * the caller writes the message through the returned text and returns code. */
static struct schema_text fail_text(struct ctx *c, int code) {
  c->e.code = code;
  memcpy(c->e.path, c->path_buf, sizeof c->e.path); /* same size, NUL-terminated */
  struct schema_text t;
  schema_text_init(&t, c->e.message, sizeof c->e.message);
  return t;
}

__attribute__((format(printf, 3, 4))) static int fail(struct ctx *c, int code,
                                                      const char *fmt, ...) {
  struct schema_text t = fail_text(c, code);
  char buf[SCHEMA_MESSAGE_CAP];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0)
    schema_text_put(&t, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
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
  if (json_is_number(a) && json_is_number(b)) return schema_num_cmp(a, b) == 0;
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
    else if (schema_real_is_integral(r) && r < 9223372036854775808.0 &&
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
  if (schema_read_types(kw, &mask) < 0)
    return bad_keyword(c, "type", "is not a type name or a list of them");
  if (schema_type_matches(mask, v)) return 0;
  struct schema_text t = fail_text(c, SCHEMA_E_INVALID);
  schema_text_str(&t, "must be ");
  schema_text_types(&t, mask);
  return SCHEMA_E_INVALID;
}

static int validate_enum(struct ctx *c, const json_t *kw, const json_t *v) {
  if (!json_is_array(kw)) return bad_keyword(c, "enum", "is not an array");
  for (size_t i = 0; i < json_array_size(kw); i++) {
    int eq = equal(c, json_array_get(kw, i), v, 0);
    if (eq != 0) return eq < 0 ? eq : 0;
  }
  struct schema_text t = fail_text(c, SCHEMA_E_INVALID);
  schema_text_str(&t, "must be one of the values in enum: ");
  schema_text_json(&t, kw);
  return SCHEMA_E_INVALID;
}

static int validate_const(struct ctx *c, const json_t *kw, const json_t *v) {
  int eq = equal(c, kw, v, 0);
  if (eq != 0) return eq < 0 ? eq : 0;
  struct schema_text t = fail_text(c, SCHEMA_E_INVALID);
  schema_text_str(&t, "must be the value in const: ");
  schema_text_json(&t, kw);
  return SCHEMA_E_INVALID;
}

/* The "min<what>" and "max<what>" keywords of s against n members of the
 * value: minItems and maxItems, minProperties and maxProperties. one and many
 * name a member in the message ("item", "items"). */
static int validate_count(struct ctx *c, const json_t *s, size_t n, const char *min_kw,
                          const char *max_kw, const char *one, const char *many) {
  size_t limit;
  const json_t *kw;
  if ((kw = json_object_get(s, min_kw)) != NULL) {
    if (schema_read_count(kw, &limit) < 0)
      return bad_keyword(c, min_kw, "is not a non-negative integer");
    if (n < limit)
      return fail(c, SCHEMA_E_INVALID, "must have at least %zu %s", limit,
                  limit == 1 ? one : many);
  }
  if ((kw = json_object_get(s, max_kw)) != NULL) {
    if (schema_read_count(kw, &limit) < 0)
      return bad_keyword(c, max_kw, "is not a non-negative integer");
    if (n > limit)
      return fail(c, SCHEMA_E_INVALID, "must have at most %zu %s", limit,
                  limit == 1 ? one : many);
  }
  return 0;
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
    struct schema_text t = fail_text(c, SCHEMA_E_INVALID);
    schema_text_str(&t, "is missing the required property \"");
    schema_text_put(&t, json_string_value(name), json_string_length(name));
    schema_text_str(&t, "\"");
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
    schema_text_key(&c->path, key, key_len); /* the schema's key: a known name */
    rv = validate_sub(c, json_object_iter_value(it), member);
    schema_text_restore(&c->path, saved);
    if (rv < 0) return rv;
  }

  const json_t *extra = json_object_get(s, "additionalProperties");
  if (extra == NULL || json_is_true(extra)) return 0;
  if (!schema_is_subschema(extra))
    return bad_keyword(c, "additionalProperties", "is not a boolean or a schema");
  for (void *it = json_object_iter(mut(v)); it != NULL;
       it = json_object_iter_next(mut(v), it)) {
    int rv = step(c);
    if (rv < 0) return rv;
    if (json_object_getn(props, json_object_iter_key(it), json_object_iter_key_len(it)))
      continue;
    /* The model chose this key: it stays out of the path. */
    size_t saved = c->path.len;
    schema_text_str(&c->path, "/(unknown key)");
    if (json_is_false(extra))
      rv = fail(c, SCHEMA_E_INVALID,
                "is not allowed: the object may only have the properties the schema "
                "lists (additionalProperties is false)");
    else
      rv = validate_sub(c, extra, json_object_iter_value(it));
    schema_text_restore(&c->path, saved);
    if (rv < 0) return rv;
  }
  return 0;
}

/* Which schema applies to each item: the first n_first items each have their
 * own (first[i]), the rest share one (rest, or NULL for none). prefixItems and
 * items are draft 2020-12's way to say it, an array of schemas in items and
 * additionalItems the way of drafts 4 to 2019-09; the two do not mix. */
struct item_schemas {
  const json_t *first;
  size_t n_first;
  const json_t *rest;
  const char *rest_keyword; /* the keyword of rest, for a message */
};

static int read_item_schemas(struct ctx *c, const json_t *s, struct item_schemas *out) {
  const json_t *prefix = json_object_get(s, "prefixItems");
  const json_t *items = json_object_get(s, "items");
  const json_t *additional = json_object_get(s, "additionalItems");
  if (prefix != NULL && !schema_is_list(prefix))
    return bad_keyword(c, "prefixItems", "is not a list of schemas");
  if (items != NULL && !schema_is_subschema(items) && !json_is_array(items))
    return bad_keyword(c, "items", "is not a schema or an array of schemas");
  if (additional != NULL && !schema_is_subschema(additional))
    return bad_keyword(c, "additionalItems", "is not a schema");
  if (prefix != NULL && (json_is_array(items) || additional != NULL))
    return bad_keyword(
        c, "prefixItems",
        "is beside an array of schemas in items or beside additionalItems");
  if (additional != NULL && !json_is_array(items))
    return bad_keyword(c, "additionalItems", "is not after an array of schemas in items");
  *out = (struct item_schemas){NULL, 0, items, "items"};
  if (prefix != NULL) {
    out->first = prefix;
  } else if (json_is_array(items)) {
    out->first = items;
    out->rest = additional;
    out->rest_keyword = "additionalItems";
  }
  out->n_first = json_array_size(out->first);
  return 0;
}

static int validate_items(struct ctx *c, const json_t *s, const json_t *v) {
  struct item_schemas layout = {NULL, 0, NULL, NULL};
  int rv = read_item_schemas(c, s, &layout);
  for (size_t i = 0; i < json_array_size(v) && rv == 0; i++) {
    const json_t *sub =
        i < layout.n_first ? json_array_get(layout.first, i) : layout.rest;
    if (sub == NULL) break; /* no schema for the rest: anything goes */
    size_t saved = c->path.len;
    schema_text_printf(&c->path, "/%zu", i);
    if (json_is_false(sub) && i >= layout.n_first)
      rv = fail(c, SCHEMA_E_INVALID,
                "is not allowed: the array may have at most %zu item%s (%s is false)",
                layout.n_first, layout.n_first == 1 ? "" : "s", layout.rest_keyword);
    else
      rv = validate_sub(c, sub, json_array_get(v, i));
    schema_text_restore(&c->path, saved);
  }
  return rv;
}

static int validate_array(struct ctx *c, const json_t *s, const json_t *v) {
  const json_t *kw;
  int rv =
      validate_count(c, s, json_array_size(v), "minItems", "maxItems", "item", "items");
  if (rv == 0) rv = validate_items(c, s, v);
  if (rv < 0) return rv;
  if ((kw = json_object_get(s, "uniqueItems")) != NULL) {
    if (!json_is_boolean(kw)) return bad_keyword(c, "uniqueItems", "is not a boolean");
    if (json_is_true(kw)) return check_unique(c, v);
  }
  return 0;
}

/* Code points in s[0..len). jansson keeps strings as valid UTF-8, so every
 * step decodes a whole character (a byte that did not would count as one). */
static size_t utf8_count(const char *s, size_t len) {
  size_t n = 0;
  for (size_t i = 0, step; i<len; i += step> 0 ? step : 1, n++)
    step = turn_utf8_decode(s + i, len - i, NULL);
  return n;
}

static int validate_string(struct ctx *c, const json_t *s, const json_t *v) {
  /* "pattern" is refused (schema_unsupported_keyword): no regex library is in
   * scope, and an ECMA-262 regex from a schema could backtrack for exponential
   * time. "format" is an annotation (draft 2020-12) and is not asserted. */
  const json_t *min = json_object_get(s, "minLength");
  const json_t *max = json_object_get(s, "maxLength");
  if (min == NULL && max == NULL) return 0;
  size_t n = utf8_count(json_string_value(v), json_string_length(v)), limit;
  if (min != NULL) {
    if (schema_read_count(min, &limit) < 0)
      return bad_keyword(c, "minLength", "is not a non-negative integer");
    if (n < limit)
      return fail(c, SCHEMA_E_INVALID, "must be at least %zu character%s long", limit,
                  limit == 1 ? "" : "s");
  }
  if (max != NULL) {
    if (schema_read_count(max, &limit) < 0)
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
    int cmp = schema_num_cmp(v, kw);
    if (cmp >= bounds[i].low && cmp <= bounds[i].high) continue;
    struct schema_text t = fail_text(c, SCHEMA_E_INVALID);
    schema_text_printf(&t, "must be %s ", bounds[i].op);
    schema_text_number(&t, kw);
    schema_text_printf(&t, " (%s)", bounds[i].keyword);
    return SCHEMA_E_INVALID;
  }
  return 0;
}

/* allOf, anyOf, oneOf and not all apply their branches to the same value. */
static int validate_combinators(struct ctx *c, const json_t *s, const json_t *v) {
  const json_t *kw;
  if ((kw = json_object_get(s, "allOf")) != NULL) {
    if (!schema_is_list(kw)) return bad_keyword(c, "allOf", "is not a list of schemas");
    for (size_t i = 0; i < json_array_size(kw); i++) {
      int rv = validate_sub(c, json_array_get(kw, i), v);
      if (rv < 0) return rv; /* the branch's own error says most */
    }
  }
  if ((kw = json_object_get(s, "anyOf")) != NULL) {
    if (!schema_is_list(kw)) return bad_keyword(c, "anyOf", "is not a list of schemas");
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
    if (!schema_is_list(kw)) return bad_keyword(c, "oneOf", "is not a list of schemas");
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
    if (!schema_is_subschema(kw)) return bad_keyword(c, "not", "is not a schema");
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
  const char *unsupported = schema_unsupported_keyword(s, NULL);
  if (unsupported != NULL) return bad_keyword(c, unsupported, "is not supported");

  const json_t *kw;
  if ((kw = json_object_get(s, "type")) != NULL && (rv = validate_type(c, kw, v)) < 0)
    return rv;
  if ((kw = json_object_get(s, "enum")) != NULL && (rv = validate_enum(c, kw, v)) < 0)
    return rv;
  if ((kw = json_object_get(s, "const")) != NULL && (rv = validate_const(c, kw, v)) < 0)
    return rv;

  switch (json_typeof(v)) {
  case JSON_OBJECT:
    rv = validate_count(c, s, json_object_size(v), "minProperties", "maxProperties",
                        "property", "properties");
    if (rv == 0) rv = validate_object(c, s, v);
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
  schema_text_init(&c->path, c->path_buf, sizeof c->path_buf);
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
