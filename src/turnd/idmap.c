/* The id map (see idmap.h). Deletion shifts later entries of the same probe run
 * back, so there are no tombstones and lookups stay short however many ids come
 * and go. */
#include "idmap.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t hash(const char *s) {
  uint64_t h = 1469598103934665603u; /* FNV-1a */
  for (; *s != '\0'; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211u;
  return (size_t)(h ^ (h >> 29));
}

void idmap_init(struct idmap *m) {
  memset(m, 0, sizeof *m);
}

void idmap_fini(struct idmap *m) {
  free(m->slots);
  memset(m, 0, sizeof *m);
}

static size_t find(const struct idmap *m, const char *key) {
  size_t i = hash(key) & (m->cap - 1);
  while (m->slots[i].key != NULL && strcmp(m->slots[i].key, key) != 0)
    i = (i + 1) & (m->cap - 1);
  return i;
}

static int grow(struct idmap *m) {
  size_t cap = m->cap == 0 ? 64 : m->cap * 2;
  struct idmap_slot *old = m->slots;
  size_t old_cap = m->cap;
  m->slots = calloc(cap, sizeof *m->slots);
  if (m->slots == NULL) {
    m->slots = old;
    return -1;
  }
  m->cap = cap;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i].key != NULL) m->slots[find(m, old[i].key)] = old[i];
  free(old);
  return 0;
}

int idmap_put(struct idmap *m, const char *key, void *value) {
  if ((m->n + 1) * 2 > m->cap && grow(m) != 0) return -1;
  size_t i = find(m, key);
  if (m->slots[i].key == NULL) m->n++;
  m->slots[i] = (struct idmap_slot){key, value};
  return 0;
}

void *idmap_get(const struct idmap *m, const char *key) {
  if (m->cap == 0) return NULL;
  size_t i = find(m, key);
  return m->slots[i].key != NULL ? m->slots[i].value : NULL;
}

void idmap_del(struct idmap *m, const char *key) {
  if (m->cap == 0) return;
  size_t i = find(m, key);
  if (m->slots[i].key == NULL) return;
  m->n--;
  /* Move back each later entry of the run that the hole would cut off from its
   * home slot. */
  size_t hole = i;
  for (size_t j = (i + 1) & (m->cap - 1); m->slots[j].key != NULL;
       j = (j + 1) & (m->cap - 1)) {
    size_t home = hash(m->slots[j].key) & (m->cap - 1);
    /* j may move to hole when home is not cyclically within (hole, j]. */
    bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (!stays) {
      m->slots[hole] = m->slots[j];
      hole = j;
    }
  }
  m->slots[hole] = (struct idmap_slot){NULL, NULL};
}
