/* The single-pass JSON scanner under the event and block parsers. It validates
 * exactly what jansson (the oracle) accepts: RFC 8259 JSON in strict UTF-8, no
 * \u0000, integers within long long, reals that do not overflow, at most
 * TURN__JSON_MAX_DEPTH nested containers. It builds no tree: the caller walks an
 * object member by member and takes each value as a span of the input, with
 * strings decoded into the arena on request. */
#ifndef TURN_PROTO_JSON_SCAN_H
#define TURN_PROTO_JSON_SCAN_H

#include "turn/turn.h"

#define TURN__JSON_MAX_DEPTH 2048 /* jansson's JSON_PARSER_MAX_DEPTH */

typedef struct turn__scan {
  const char *beg; /* start of the input: offsets in errors are from here */
  const char *p;   /* next byte to read; beg <= p <= end */
  const char *end;
  turn_arena *arena; /* where decoded strings go */
  size_t err_off;    /* offset of the first error */
  int depth;         /* containers open around p, counting the caller's */
} turn__scan;

enum turn__jkind {
  TURN__J_NONE,
  TURN__J_STRING,
  TURN__J_NUMBER,
  TURN__J_TRUE,
  TURN__J_FALSE,
  TURN__J_NULL,
  TURN__J_OBJECT,
  TURN__J_ARRAY
};

typedef struct turn__jval {
  enum turn__jkind kind;
  bool is_int;  /* a number without fraction or exponent */
  turn_str raw; /* the value's bytes in the input */
  turn_str str; /* strings, when decoded: the text, in the arena */
  int nest;     /* levels of values from this one to its deepest, itself included:
                   1 for a scalar or an empty container, 2 for {"a":1}, ... */
} turn__jval;

void turn__scan_init(turn__scan *s, const char *data, size_t len, turn_arena *arena);

/* All below return TURN_OK (or 0/1 as stated) or a negative code with s->err_off
 * set: TURN_E_JSON, TURN_E_UTF8, or TURN_E_NOMEM for the arena. */

static inline void turn__scan_ws(turn__scan *s) {
  if (s->p < s->end && (unsigned char)*s->p > ' ') return; /* compact input: none */
  while (s->p < s->end &&
         (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
    s->p++;
}

/* The value of an integer v (kind NUMBER, is_int): the scanner bounded it to the
 * range of int64_t, so this cannot overflow. "-0" is 0, as in jansson. */
static inline int64_t turn__jval_int(const turn__jval *v) {
  const char *p = v->raw.p;
  const char *end = p + v->raw.len;
  bool negative = *p == '-';
  if (negative) p++;
  uint64_t u = 0;
  for (; p < end; p++)
    u = u * 10 + (uint64_t)(*p - '0');
  return negative ? (int64_t)(0 - u) : (int64_t)u;
}

/* Reads any value at s->p (after whitespace). decode: copy strings' text into
 * the arena (v->str); containers are validated and given as raw spans only. */
int turn__scan_value(turn__scan *s, turn__jval *v, bool decode);
/* Reads '{'; returns 1 when a member follows, 0 for "{}". */
int turn__scan_object_begin(turn__scan *s);
/* Reads a member's "key" and ':'; key is decoded (into the arena if escaped). */
int turn__scan_key(turn__scan *s, turn_str *key);
/* After a member's value: reads ',' (returns 1) or '}' (returns 0). */
int turn__scan_member_end(turn__scan *s);
/* Reads '['; returns 1 when an element follows, 0 for "[]". */
int turn__scan_array_begin(turn__scan *s);
/* After an element: reads ',' (returns 1) or ']' (returns 0). */
int turn__scan_element_end(turn__scan *s);
/* After the top value: only whitespace may remain. */
int turn__scan_finish(turn__scan *s);

/* At s->p is something other than '{' where an object should start: returns
 * TURN_E_NOT_OBJECT if the rest is one valid JSON value, else its JSON error, with
 * s->err_off set either way. */
int turn__scan_not_object(turn__scan *s);

/* Whole-document check: s[0..len) is one JSON value of any kind. For tests and
 * for the differential fuzz target against jansson. */
int turn__json_validate(const char *s, size_t len, turn_arena *arena);
/* The same for a value that will sit inside `depth` open containers. */
int turn__json_validate_at(const char *s, size_t len, int depth);

/* A tool input sits inside a history document, its blocks array and its block:
 * inputs are checked at this depth so that every line or document that carries
 * one stays within jansson's limit. */
#define TURN__INPUT_DEPTH 3

#endif
