/* Shortest exact JSON numbers (see json_short.h). */
#include "json_short.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Whether v holds a real anywhere: without one, every precision writes the
 * same text and one pass is enough. */
static bool has_real(const json_t *v) {
  if (json_is_real(v)) return true;
  if (json_is_array(v)) {
    for (size_t i = 0; i < json_array_size(v); i++)
      if (has_real(json_array_get(v, i))) return true;
  } else if (json_is_object(v)) {
    const char *key;
    json_t *item;
    json_object_foreach((json_t *)v, key, item) {
      if (has_real(item)) return true;
    }
  }
  return false;
}

/* Past this, a value keeps its 17 digits: the check reads the whole text back,
 * up to twice, and a body of megabytes is not worth that for its numbers'
 * looks. */
#define SHORTEST_MAX_BYTES (256u << 10)

char *json_dumps_shortest(const json_t *v, size_t flags) {
  if (!has_real(v)) return json_dumps(v, flags);
  char *exact = json_dumps(v, flags); /* jansson's 17 digits: always the value */
  if (exact == NULL || strlen(exact) > SHORTEST_MAX_BYTES) return exact;
  for (int digits = 15; digits < 17; digits++) {
    char *out = json_dumps(v, flags | JSON_REAL_PRECISION(digits));
    /* JSON_ALLOW_NUL: a string holding \u0000 reads back too. */
    json_t *back =
        out != NULL ? json_loads(out, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL) : NULL;
    bool same = back != NULL && json_equal(back, v);
    json_decref(back);
    if (same) {
      free(exact);
      return out;
    }
    free(out);
  }
  return exact;
}
