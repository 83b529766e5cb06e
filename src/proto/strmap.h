/* A small string -> index map for the order checker: open addressing, keys owned
 * by the caller (they live in the checker's arena), reset per turn. */
#ifndef TURN_PROTO_STRMAP_H
#define TURN_PROTO_STRMAP_H

#include "turn/turn.h"

typedef struct turn__strmap {
  struct turn__strmap_slot *slots; /* NULL iff cap == 0 */
  size_t cap;                      /* a power of two, or 0 */
  size_t n;                        /* entries; kept <= cap * 3 / 4 */
  const turn_mem *mem;
} turn__strmap;

void turn__strmap_init(turn__strmap *m, const turn_mem *mem);
void turn__strmap_fini(turn__strmap *m);
void turn__strmap_clear(turn__strmap *m);
/* The value stored for key, or -1. */
long turn__strmap_get(const turn__strmap *m, turn_str key);
/* Stores key -> value (key must not be present; borrows key.p until clear).
 * Returns TURN_OK or TURN_E_NOMEM. */
int turn__strmap_put(turn__strmap *m, turn_str key, long value);

#endif
