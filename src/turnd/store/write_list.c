/* The store's queued writes (see write_list.h). */
#include "write_list.h"

#include <stdlib.h>
#include <string.h>

struct write *write_new(enum write_kind kind, const char *const s[3],
                        const size_t slen[3], const uint64_t num[3], const void *blob,
                        size_t blob_len, void *owner) {
  size_t total = blob_len;
  for (int i = 0; i < 3; i++)
    if (s[i] != NULL) total += slen[i] + 1;
  struct write *wr = malloc(sizeof *wr + total);
  if (wr == NULL) return NULL;
  memset(wr, 0, sizeof *wr);
  wr->kind = kind;
  wr->owner = owner;
  char *p = wr->text;
  for (int i = 0; i < 3; i++) {
    wr->num[i] = num[i];
    if (s[i] == NULL) continue;
    memcpy(p, s[i], slen[i]);
    p[slen[i]] = '\0';
    wr->s[i] = p;
    wr->slen[i] = slen[i];
    p += slen[i] + 1;
  }
  if (blob != NULL) {
    memcpy(p, blob, blob_len);
    wr->blob = p;
    wr->blob_len = blob_len;
  }
  return wr;
}

void write_list_append(struct write_list *to, struct write_list *from) {
  if (from->first == NULL) return;
  if (to->first == NULL)
    to->first = from->first;
  else
    to->last->next = from->first;
  to->last = from->last;
  from->first = from->last = NULL;
}

void write_list_free(struct write_list *l) {
  while (l->first != NULL) {
    struct write *next = l->first->next;
    free(l->first);
    l->first = next;
  }
  l->last = NULL;
}
