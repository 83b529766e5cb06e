/* Sessions (see run.h). */
#include "run.h"

#include "clock.h"
#include "daemon.h"
#include "random_hex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TITLE_MAX 80 /* bytes, cut at a UTF-8 boundary */

struct session *session_find(struct turnd *d, const char *id) {
  return idmap_get(&d->session_ids, id);
}

static char *make_title(const char *text) {
  size_t n = turn_utf8_cut(text, strlen(text), TITLE_MAX);
  char *t = malloc(n + 1);
  if (t == NULL) return NULL;
  for (size_t i = 0; i < n; i++)
    t[i] = text[i] == '\n' || text[i] == '\r' || text[i] == '\t' ? ' ' : text[i];
  t[n] = '\0';
  return t;
}

/* Lists s (takes it). Returns s, or NULL after freeing it when out of memory. */
static struct session *add(struct turnd *d, struct session *s) {
  if (idmap_put(&d->session_ids, s->id, s) != 0) {
    free(s->title);
    free(s);
    return NULL;
  }
  s->next = d->sessions;
  d->sessions = s;
  return s;
}

struct session *session_create(struct turnd *d, const char *first_text) {
  struct session *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  uint64_t now = turnd_now_ms();
  time_t secs = (time_t)(now / 1000);
  struct tm tm;
  gmtime_r(&secs, &tm);
  char stamp[20], rnd[5];
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  s->title = make_title(first_text);
  /* The id's random part is short (the protocol's ids look like
   * 20261001-080000-abcd): draw again on the rare clash within one second. */
  int tries = 0;
  do {
    if (s->title == NULL || ++tries > 64 || turnd_random_hex(rnd, 2) != 0) {
      free(s->title);
      free(s);
      return NULL;
    }
    snprintf(s->id, sizeof s->id, "%s-%s", stamp, rnd);
  } while (session_find(d, s->id) != NULL);
  s->created_ms = s->updated_ms = now;
  s = add(d, s);
  return s;
}

struct session *session_add_loaded(struct turnd *d, const char *id, const char *title,
                                   uint64_t created_ms, uint64_t updated_ms,
                                   uint64_t message_count) {
  struct session *s = calloc(1, sizeof *s);
  if (s == NULL || strlen(id) >= sizeof s->id || (s->title = strdup(title)) == NULL) {
    free(s);
    return NULL;
  }
  memcpy(s->id, id, strlen(id) + 1);
  s->created_ms = created_ms;
  s->updated_ms = updated_ms;
  s->message_count = message_count;
  return add(d, s);
}

void session_free_all(struct turnd *d) {
  struct session *s = d->sessions;
  while (s != NULL) {
    struct session *next = s->next;
    free(s->title);
    free(s);
    s = next;
  }
  d->sessions = NULL;
  idmap_fini(&d->session_ids);
}
