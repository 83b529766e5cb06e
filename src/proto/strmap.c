/* String map with open addressing and linear probing; see strmap.h. */
#include "strmap.h"

#include "mem.h"

#include <string.h>

struct turn__strmap_slot {
  turn_str key; /* key.p == NULL: empty */
  long value;
};

static uint64_t hash(turn_str s) {
  uint64_t h = 14695981039346656037ULL; /* FNV-1a */
  for (size_t i = 0; i < s.len; i++) {
    h ^= (unsigned char)s.p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

void turn__strmap_init(turn__strmap *m, const turn_mem *mem) {
  m->slots = NULL;
  m->cap = 0;
  m->n = 0;
  m->mem = mem;
}

void turn__strmap_fini(turn__strmap *m) {
  turn__free(m->mem, m->slots);
  turn__strmap_init(m, m->mem);
}

void turn__strmap_clear(turn__strmap *m) {
  if (m->slots != NULL) memset(m->slots, 0, m->cap * sizeof *m->slots);
  m->n = 0;
}

long turn__strmap_get(const turn__strmap *m, turn_str key) {
  if (m->cap == 0) return -1;
  for (size_t i = hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    const struct turn__strmap_slot *s = &m->slots[i];
    if (s->key.p == NULL) return -1;
    if (turn_str_eq(s->key, key)) return s->value;
  }
}

static void insert(struct turn__strmap_slot *slots, size_t cap, turn_str key,
                   long value) {
  size_t i = hash(key) & (cap - 1);
  while (slots[i].key.p != NULL)
    i = (i + 1) & (cap - 1);
  slots[i].key = key;
  slots[i].value = value;
}

int turn__strmap_put(turn__strmap *m, turn_str key, long value) {
  if (key.p == NULL) key.p = ""; /* an empty key still marks its slot used */
  if ((m->n + 1) * 4 > m->cap * 3) {
    size_t cap = m->cap == 0 ? 16 : m->cap * 2;
    struct turn__strmap_slot *slots = turn__malloc(m->mem, cap * sizeof *slots);
    if (slots == NULL) return TURN_E_NOMEM;
    memset(slots, 0, cap * sizeof *slots);
    for (size_t i = 0; i < m->cap; i++)
      if (m->slots[i].key.p != NULL)
        insert(slots, cap, m->slots[i].key, m->slots[i].value);
    turn__free(m->mem, m->slots);
    m->slots = slots;
    m->cap = cap;
  }
  insert(m->slots, m->cap, key, value);
  m->n++;
  return TURN_OK;
}
