/* The internal interface of turn-vectors: the state and helpers its sections
 * share, and one function per section of vectors/vectors.json. A vector that
 * does not hold is counted in vectors_failures, never written silently; main
 * writes nothing when the count is not zero. */
#ifndef TURN_VECTORS_H
#define TURN_VECTORS_H

#include "turn/turn.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Scratch arena for one parse: every user resets it before parsing, so nothing
 * parsed survives the next vector. main inits and finis it. */
extern turn_arena vectors_arena;
/* Number of vectors that did not give their expected result. */
extern int vectors_failures;

/* Prints what to stderr and exits 1: for faults of the generator itself (out of
 * memory, an encoder that cannot re-encode), not for vectors that do not hold. */
_Noreturn void vectors_die(const char *what);
/* Counts a failure and reports "what: detail" on stderr when ok is false. */
void vectors_check(bool ok, const char *what, const char *detail);
/* Sets line[0..len) on obj as key when it is valid UTF-8, else its hex as
 * key + "_hex", so invalid bytes survive the JSON file. Borrows line. */
void vectors_put_line(json_t *obj, const char *key, const char *line, size_t len);
/* Returns owned: text[0..len) loaded by jansson (the canonical value of what an
 * encoder wrote). Dies if jansson refuses it. */
json_t *vectors_as_json(const char *text, size_t len);
/* An inline (not truncated) input whose JSON is json; borrows json. */
turn_input vectors_inline_input(const char *json);

/* Each adds its section to doc as the key of the same name ("events", "blocks",
 * "inputs", "streams"); doc owns what is added. Call them in that order: the
 * file's key order is the order of the calls. */
void vectors_events(json_t *doc);
void vectors_blocks(json_t *doc);
void vectors_inputs(json_t *doc);
void vectors_streams(json_t *doc);

#endif
