/* A map from an id string to the object that carries it, for the lookups every
 * request makes (a session by id, a run by id): open addressing with linear
 * probing, at most half full. Keys are borrowed from the objects themselves, so
 * an object must leave the map before its id goes. */
#ifndef TURND_IDMAP_H
#define TURND_IDMAP_H

#include <stddef.h>

struct idmap_slot {
  const char *key; /* NULL: empty */
  void *value;
};

struct idmap {
  struct idmap_slot *slots;
  size_t cap; /* a power of two, or 0 */
  size_t n;
};

void idmap_init(struct idmap *m);
void idmap_fini(struct idmap *m);
/* Adds key (borrowed until idmap_del) -> value; key must not be there yet.
 * Returns 0 or -1 when out of memory. */
int idmap_put(struct idmap *m, const char *key, void *value);
void *idmap_get(const struct idmap *m, const char *key); /* NULL: absent */
void idmap_del(struct idmap *m, const char *key);

#endif
