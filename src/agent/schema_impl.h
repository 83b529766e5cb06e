/* What schema.c (validation) and schema_check.c (checking a schema once, when
 * a tool is defined) share: bounded texts for paths and messages, and reading
 * keyword values. Internal to the schema module: include schema.h from outside. */
#ifndef TURND_AGENT_SCHEMA_IMPL_H
#define TURND_AGENT_SCHEMA_IMPL_H

#include "schema.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* jansson's iterators take a non-const object but never modify it. */
static inline json_t *mut(const json_t *j) {
  return (json_t *)j;
}

/* ---- Bounded text (schema_text.c) ----------------------------------------- */

/* Text into a fixed buffer. Invariant: len <= cap; len == cap means it was cut
 * (ends in "...") and takes no more; otherwise p[len] == '\0'. */
struct schema_text {
  char *p;
  size_t cap;
  size_t len;
};

/* Borrows p[0..cap) for t, empty. */
void schema_text_init(struct schema_text *t, char *p, size_t cap);
/* Appends s[0..n). Control bytes become '?', so a schema's key cannot break a
 * log line. A cut ends in "...", taking back earlier text if the buffer is
 * already full, and never splits a UTF-8 sequence. */
void schema_text_put(struct schema_text *t, const char *s, size_t n);
void schema_text_str(struct schema_text *t, const char *s);
__attribute__((format(printf, 2, 3))) void schema_text_printf(struct schema_text *t,
                                                              const char *fmt, ...);
/* Truncates back to an earlier length (a path segment is popped). */
void schema_text_restore(struct schema_text *t, size_t len);
/* "/key" as a JSON Pointer segment: '~' is "~0" and '/' is "~1". */
void schema_text_key(struct schema_text *t, const char *key, size_t len);
/* A limit from the schema, with '.' as the decimal point whatever the locale. */
void schema_text_number(struct schema_text *t, const json_t *num);
/* Part of the schema as compact ASCII JSON (enum and const values). */
void schema_text_json(struct schema_text *t, const json_t *j);

/* ---- Keyword values (schema_keyword.c) ------------------------------------ */

/* "type": one name or a non-empty array of names, as a mask of type bits. 0, or
 * -1 when malformed. */
int schema_read_types(const json_t *kw, unsigned *mask);
/* Whether v is of one of the types in mask ("integer": no fractional part). */
bool schema_type_matches(unsigned mask, const json_t *v);
/* The types of mask as a message says them: "an object or a string". */
void schema_text_types(struct schema_text *t, unsigned mask);
/* A non-negative integer (3.0 counts too, as JSON Schema says), clamped to
 * SIZE_MAX. 0, or -1 when malformed. */
int schema_read_count(const json_t *kw, size_t *out);
/* Whether a double has no fractional part (always, beyond 2^53). */
bool schema_real_is_integral(double r);
/* A subschema is an object or a boolean. */
bool schema_is_subschema(const json_t *s);
/* allOf, anyOf, oneOf: a non-empty array (its items are checked when applied). */
bool schema_is_list(const json_t *kw);
/* a <=> b for two JSON numbers, by value: 1 and 1.0 are equal. */
int schema_num_cmp(const json_t *a, const json_t *b);
/* The first keyword of the schema object s that constrains a value but that
 * this validator does not apply ($ref, pattern, if, multipleOf, ...), or NULL.
 * With hint not NULL, *hint says what to write instead. Static storage. */
const char *schema_unsupported_keyword(const json_t *s, const char **hint);

#endif
