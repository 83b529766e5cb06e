/* A validator for the JSON Schema subset that tool definitions use: a model's
 * tool-call input is checked against the tool's input_schema before the tool
 * runs, and an invalid input goes back to the model as an error result.
 * Errors name the rule and the limit, never the data: the text reaches a model
 * and the logs, so it holds no string or number of the checked value. No I/O.
 *
 * Supported keywords: type, enum, const; properties, required,
 * additionalProperties, minProperties, maxProperties; prefixItems and items
 * (draft 2020-12), or items as an array of schemas applied by position and
 * additionalItems for the rest (drafts 4 to 2019-09), minItems, maxItems,
 * uniqueItems; minLength, maxLength (in code points); minimum, maximum,
 * exclusiveMinimum, exclusiveMaximum (the numeric form of draft 6 and later);
 * allOf, anyOf, oneOf, not. Annotations (title, description, default, examples,
 * format, $schema, $id, $comment, deprecated, readOnly, writeOnly, ...) and
 * unknown keywords are ignored, as validators do. Every other keyword that
 * constrains a value is refused ($ref, if/then/else, pattern,
 * patternProperties, propertyNames, dependentRequired, multipleOf, contains,
 * unevaluatedProperties, ...): ignoring it would silently leave that part of
 * the input unchecked.
 *
 * Numbers compare by value: 1 equals 1.0 in enum and const, and "integer"
 * accepts any number without a fractional part (3.0 yes, 3.5 no). */
#ifndef TURND_AGENT_SCHEMA_H
#define TURND_AGENT_SCHEMA_H

#include <jansson.h>
#include <stddef.h>

/* A subschema may sit at most this many levels below the root (properties,
 * prefixItems, items, additionalItems, additionalProperties, allOf/anyOf/oneOf
 * branches and not each count a level), and enum and const values may nest at
 * most this deep; the recursion is bounded by it, so a hostile schema or value
 * cannot exhaust the stack. */
#define SCHEMA_MAX_DEPTH 32

/* Work limit of one schema_validate, in steps: a subschema applied, an object
 * member or array item visited, a node compared or hashed. A legitimate tool
 * input takes a tiny fraction of it; a schema whose anyOf branches nest into
 * each other could otherwise cost exponential time on a small value. */
#define SCHEMA_MAX_STEPS 1000000ul

/* One table for the codes, their stable names and their meaning (style guide
 * 3). Codes are negative and never renumbered or reused. */
#define SCHEMA_ERRORS(X)                                                             \
  X(OK, 0, "ok")                                                                     \
  X(E_INVALID, -1, "value does not match the schema")                                \
  X(E_SCHEMA, -2, "schema cannot be applied: a keyword is malformed or unsupported") \
  X(E_LIMIT, -3, "too deep or too much work to check")                               \
  X(E_NOMEM, -900, "out of memory")

enum schema_code {
#define SCHEMA_ENUM_(name, value, message) SCHEMA_##name = value,
  SCHEMA_ERRORS(SCHEMA_ENUM_)
#undef SCHEMA_ENUM_
};

#define SCHEMA_PATH_CAP    160
#define SCHEMA_MESSAGE_CAP 200

/* The first problem found. Both texts are NUL-terminated, printable UTF-8 (no
 * control characters), cut with "..." when longer than the field. */
struct schema_error {
  int code; /* an enum schema_code below 0 */
  /* Where, in the checked value, as a JSON Pointer ("" is the value itself,
   * "/items/2/name"). Object keys appear only when the schema names them in
   * "properties"; any other key is "(unknown key)". Array items are indexes. */
  char path[SCHEMA_PATH_CAP];
  /* What is wrong with the value at path, e.g. "must be a string",
   * "must have at most 3 items". May quote the schema (a limit, a required
   * property's name, the enum values), never the value. */
  char message[SCHEMA_MESSAGE_CAP];
};

/* Checks value against schema (an object, or true/false). Borrows both; keeps
 * nothing. Returns SCHEMA_OK (0) when value is valid, else a negative code with
 * the first problem in *err (when err is not NULL):
 *   SCHEMA_E_INVALID  value does not match the schema
 *   SCHEMA_E_SCHEMA   a keyword the check reached is malformed, or is one this
 *                     validator refuses; this never happens for a schema that
 *                     schema_check accepted
 *   SCHEMA_E_LIMIT    more than SCHEMA_MAX_STEPS of work, or uniqueItems met
 *                     items nested deeper than SCHEMA_MAX_DEPTH
 *   SCHEMA_E_NOMEM    out of memory (uniqueItems needs a table of the items)
 * Every negative code means "do not run the tool". Only the keywords that apply
 * to the value are examined, so call schema_check once when a tool is loaded.
 * On success *err is untouched. A NULL schema gives SCHEMA_E_SCHEMA, a NULL
 * value SCHEMA_E_INVALID. */
int schema_validate(const json_t *schema, const json_t *value, struct schema_error *err);
/* e.g. the tool result for the model:
 *   if (schema_validate(tool->input_schema, input, &err) != SCHEMA_OK)
 *     snprintf(text, cap, "invalid input at \"%s\": %s", err.path, err.message); */

/* Checks, once at start-up, that schema is an object this validator can apply:
 * every supported keyword in it and in all its subschemas has a well-formed
 * value, nothing nests deeper than SCHEMA_MAX_DEPTH, and there is no keyword
 * that it refuses (see above; e.g. "/properties/s/pattern: is not supported by
 * this validator; ..."). It does not require "type": "object" at the root: the
 * tools file does (tools_config.c).
 * Borrows schema. Returns 0, or -1 with the reason in err[0..cap) (NUL-terminated
 * when cap > 0, e.g. "/properties/count/minimum: must be a number"); err is
 * untouched on success. */
int schema_check(const json_t *schema, char *err, size_t cap);

/* The stable name of a code ("E_INVALID"), or "E_UNKNOWN". Static storage. */
const char *schema_errname(int code);

#endif
