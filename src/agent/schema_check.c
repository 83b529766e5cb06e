/* schema_check (see schema.h): a tool's input_schema is checked once, when
 * the tool is defined, so that a malformed keyword is refused at start-up
 * rather than found while a model waits. */
#include "schema_impl.h"

#include <stdio.h>
#include <string.h>

/* What a keyword's value must be, for schema_check. Keywords not listed here
 * are either refused (schema_unsupported_keyword) or ignored: annotations such
 * as title, description, default, examples and format, and unknown ones. */
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
};

static const struct {
  const char *name;
  enum kw_form form;
} keywords[] = {
    {"type", KW_TYPE},
    {"properties", KW_SCHEMA_MAP},
    {"required", KW_NAMES},
    {"additionalProperties", KW_SCHEMA},
    {"minProperties", KW_COUNT},
    {"maxProperties", KW_COUNT},
    {"enum", KW_VALUES},
    {"const", KW_VALUE},
    {"prefixItems", KW_SCHEMA_LIST},
    {"items", KW_ITEMS},
    {"additionalItems", KW_SCHEMA},
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
};

#define STRINGIFY_(x) #x
#define STRINGIFY(x)  STRINGIFY_(x)
#define DEPTH_TEXT    STRINGIFY(SCHEMA_MAX_DEPTH)

struct check {
  char path_buf[2 * SCHEMA_PATH_CAP];
  struct schema_text path; /* the keyword being checked, as a JSON Pointer */
  const char *why;         /* set on the first failure */
  char why_buf[160];       /* why, when it is assembled */
  unsigned long steps;     /* subschemas visited, <= SCHEMA_MAX_STEPS: a schema built
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
  schema_text_printf(&k->path, "/%zu", i);
  int rv = check_schema(k, s, depth);
  if (rv == 0) schema_text_restore(&k->path, saved);
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
    return schema_read_types(kw, &mask);
  case KW_SCHEMA:
    return check_schema(k, kw, depth + 1);
  case KW_SCHEMA_MAP:
    k->why = "must be an object of schemas";
    if (!json_is_object(kw)) return -1;
    for (void *it = json_object_iter(mut(kw)); it != NULL;
         it = json_object_iter_next(mut(kw), it)) {
      size_t saved = k->path.len;
      schema_text_key(&k->path, json_object_iter_key(it), json_object_iter_key_len(it));
      if (check_schema(k, json_object_iter_value(it), depth + 1) < 0) return -1;
      schema_text_restore(&k->path, saved);
    }
    return 0;
  case KW_SCHEMA_LIST:
    k->why = "must be a non-empty array of schemas";
    if (!schema_is_list(kw)) return -1;
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
    return schema_read_count(kw, &count);
  case KW_NUMBER:
    k->why = "must be a number";
    return json_is_number(kw) ? 0 : -1;
  case KW_BOOLEAN:
    k->why = "must be true or false";
    return json_is_boolean(kw) ? 0 : -1;
  }
  return -1;
}

/* Sets the path to keyword and the reason to why; returns -1. */
static int refuse_keyword(struct check *k, const char *keyword, const char *why) {
  schema_text_key(&k->path, keyword, strlen(keyword));
  k->why = why;
  return -1;
}

/* A keyword that would be ignored though it constrains the value. */
static int check_supported(struct check *k, const json_t *s) {
  const char *hint;
  const char *keyword = schema_unsupported_keyword(s, &hint);
  if (keyword == NULL) return 0;
  snprintf(k->why_buf, sizeof k->why_buf, "is not supported by this validator; %s", hint);
  return refuse_keyword(k, keyword, k->why_buf);
}

/* The array keywords of two drafts must not mix: after prefixItems (2020-12)
 * items is the schema for the rest; an array of schemas in items (draft 4 to
 * 2019-09) is the tuple, and additionalItems the schema for the rest. What each
 * means alone is checked by the keyword table. */
static int check_array_layout(struct check *k, const json_t *s) {
  const json_t *prefix = json_object_get(s, "prefixItems");
  const json_t *items = json_object_get(s, "items");
  const json_t *additional = json_object_get(s, "additionalItems");
  if (prefix != NULL && json_is_array(items))
    return refuse_keyword(k, "items",
                          "must be a schema, not an array, beside prefixItems");
  if (prefix != NULL && additional != NULL)
    return refuse_keyword(k, "additionalItems",
                          "does not apply beside prefixItems: use items for the rest");
  if (additional != NULL && !json_is_array(items))
    return refuse_keyword(k, "additionalItems",
                          "applies only after an array of schemas in items, so here "
                          "it would check nothing");
  return 0;
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
    schema_text_key(&k->path, keywords[i].name, strlen(keywords[i].name));
    if (check_keyword(k, keywords[i].form, kw, depth) < 0) return -1;
    schema_text_restore(&k->path, saved);
  }
  if (check_supported(k, s) < 0 || check_array_layout(k, s) < 0) return -1;
  return 0;
}

int schema_check(const json_t *schema, char *err, size_t cap) {
  struct check check;
  struct check *k = &check;
  schema_text_init(&k->path, k->path_buf, sizeof k->path_buf);
  k->steps = 0;
  k->why = "must be an object";
  int rv = json_is_object(schema) ? check_schema(k, schema, 0) : -1;
  if (rv < 0 && cap > 0) {
    /* The reason matters more than the whole path: a long path is cut first. */
    size_t tail = 2 + strlen(k->why);
    struct schema_text t;
    schema_text_init(&t, err, cap > tail + 16 ? cap - tail : cap);
    schema_text_str(&t, k->path.len == 0 ? "(root)" : k->path.p);
    t.cap = cap;
    t.len = strlen(err);
    schema_text_str(&t, ": ");
    schema_text_str(&t, k->why);
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
