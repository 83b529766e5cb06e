/* One field check of an [expect] clause on a JSON value: status=ok,
 * summary~"lamp", len(preview)=8192, !input.html, duration_ms=@number. A value is
 * a quoted JSON string (compared as text), an object or array (compared as JSON),
 * a kind @KIND (any value of that kind), or a bare word (compared as text, as a
 * number, or as the field's compact JSON). */
#ifndef CASE_CHECK_H
#define CASE_CHECK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum case_check_op {
  CASE_CHECK_PRESENT, /* path          the field exists */
  CASE_CHECK_ABSENT,  /* !path         it does not */
  CASE_CHECK_EQ,      /* path=value */
  CASE_CHECK_NE,      /* path!=value   (the field must exist) */
  CASE_CHECK_HAS,     /* path~text     its text contains text */
  CASE_CHECK_HASNT    /* path!~text */
};

struct case_check {
  char path[128];        /* dot-separated keys; a number indexes an array */
  bool len;              /* len(path): the field's length is compared instead */
  enum case_check_op op; /* what to compare */
  char *text;            /* the value as text, unquoted; owned, NULL for none */
  json_t *json;          /* the value given as an object or array; owned, or NULL */
  bool quoted;           /* text was a quoted string: it only equals a string */
  int kind;              /* a value @KIND (a case_kind), compared by kind; 0: none */
};

/* What a value @KIND stands for: any value of that kind. */
enum case_kind {
  CASE_KIND_NONE,
  CASE_KIND_NUMBER,  /* @number */
  CASE_KIND_STRING,  /* @string */
  CASE_KIND_BOOL,    /* @bool */
  CASE_KIND_NULL,    /* @null */
  CASE_KIND_OBJECT,  /* @object */
  CASE_KIND_ARRAY,   /* @array */
  CASE_KIND_ISO8601, /* @iso8601: a string libturn's turn_iso8601_valid accepts */
  CASE_KIND__COUNT
};

/* Reads one check at *p (borrowed) and moves *p past it. Returns 0, or -1 with a
 * message in err; either way case_check_free releases *c. */
int case_check_parse(struct case_check *c, const char **p, char *err, size_t cap);
void case_check_free(struct case_check *c);

/* Reads one value at *p: a quoted JSON string, an object or array, or a bare
 * word up to a space or ';'. *text is owned by the caller (free), *json too
 * (json_decref, NULL unless the value is an object or array). */
int case_value_parse(const char **p, char **text, json_t **json, bool *quoted, char *err,
                     size_t cap);

/* Whether c holds on root (borrowed); when it does not, why says what was found. */
bool case_check_holds(const struct case_check *c, json_t *root, char *why, size_t cap);

#endif
