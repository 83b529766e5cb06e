/* turn-vectors: writes vectors/vectors.json, the shared test vectors of the turn
 * protocol, from the C encoder. Every valid line is made by turn_event_encode (or
 * is a hand-written variant that must parse), every invalid line must give the
 * error written next to it, and every stream must get the checker's verdict;
 * if any does not, this program fails instead of writing a wrong contract.
 * The sections live in vectors/, one file each; this file only assembles them. */
#include "vectors/vectors.h"

#include <stdio.h>
#include <stdlib.h>

int main(void) {
  turn_arena_init(&vectors_arena, NULL);

  json_t *errors = json_object();
#define ERR_ENTRY(name, value, msg) \
  json_object_set_new(errors, #name, json_integer(value));
  TURN_ERRORS(ERR_ENTRY)
#undef ERR_ENTRY

  json_t *doc = json_object();
  json_object_set_new(doc, "protocol", json_integer(1));
  json_object_set_new(doc, "input_limit", json_integer(TURN_INPUT_LIMIT));
  json_object_set_new(doc, "errors", errors);
  vectors_events(doc);
  vectors_blocks(doc);
  vectors_inputs(doc);
  vectors_streams(doc);
  turn_arena_fini(&vectors_arena);
  if (vectors_failures > 0) {
    json_decref(doc);
    fprintf(stderr, "turn-vectors: %d vectors do not hold; nothing written\n",
            vectors_failures);
    return 1;
  }
  char *text = json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
  json_decref(doc);
  if (text == NULL) vectors_die("out of memory");
  fputs(text, stdout);
  fputc('\n', stdout);
  free(text);
  return 0;
}
