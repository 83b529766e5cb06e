/* stream_history: the history documents, one per session, written as the turns
 * are made: {"session": {...}, "blocks": [...]}, each block encoded by libturn.
 * Consecutive deltas of one reply are joined into one block, as the history does. */
#include "stream_history.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* "2026-10-01T08:00:05.123Z", sometimes with an offset or without the fraction. */
static size_t format_at(struct gen *g, char *out, size_t cap) {
  time_t t = (time_t)(g->now_ms / 1000);
  struct tm tm;
  gmtime_r(&t, &tm);
  size_t n = strftime(out, cap, "%Y-%m-%dT%H:%M:%S", &tm);
  uint32_t style = rng_below(&g->rng, 10);
  int m;
  if (style < 7)
    m = snprintf(out + n, cap - n, ".%03uZ", (unsigned)(g->now_ms % 1000));
  else if (style < 9)
    m = snprintf(out + n, cap - n, "+00:00");
  else
    m = snprintf(out + n, cap - n, "Z");
  return n + (size_t)m;
}

static void push_span(struct gen *g, struct stream_gen_span **v, size_t *n, size_t *cap,
                      size_t off, size_t len) {
  if (g->rv != TURN_OK) return;
  if (*n == *cap) {
    size_t grown_cap = *cap == 0 ? 1024 : *cap * 2;
    struct stream_gen_span *grown = realloc(*v, grown_cap * sizeof *grown);
    if (grown == NULL) {
      set_rv(g, TURN_E_NOMEM);
      return;
    }
    *v = grown;
    *cap = grown_cap;
  }
  (*v)[(*n)++] = (struct stream_gen_span){off, len};
}

/* Appends one block to the open history document; 1 in 20 has "at": null. */
void stream_history_add_block(struct gen *g, turn_block b) {
  if (g->rv != TURN_OK || !g->doc_open) return;
  char at[48];
  b.at = (turn_str){NULL, 0};
  if (!rng_permille(&g->rng, 50)) b.at = (turn_str){at, format_at(g, at, sizeof at)};
  turn_buf_reset(&g->line);
  int rv = turn_block_encode(&b, &g->line);
  if (rv != TURN_OK) {
    set_rv(g, rv);
    return;
  }
  struct stream_gen *st = g->st;
  if (g->doc_blocks > 0) append(g, &st->history, ",", 1);
  size_t off = st->history.len;
  append(g, &st->history, g->line.data, g->line.len);
  push_span(g, &st->blocks, &st->n_blocks, &st->cap_blocks, off, g->line.len);
  g->doc_blocks++;
}

static void add_text_block(struct gen *g, turn_block_type type, const turn_buf *text) {
  if (text->len == 0) return;
  turn_block b;
  memset(&b, 0, sizeof b);
  b.type = type;
  b.text.text = (turn_str){text->data, text->len};
  stream_history_add_block(g, b);
}

/* Consecutive deltas of one reply become one block, as the history joins them. */
void stream_history_flush_text(struct gen *g) {
  add_text_block(g, TURN_BLOCK_REASONING, &g->thought);
  add_text_block(g, TURN_BLOCK_ASSISTANT, &g->reply);
  turn_buf_reset(&g->thought);
  turn_buf_reset(&g->reply);
}

void stream_history_begin(struct gen *g, uint32_t n_turns) {
  struct stream_gen *st = g->st;
  char id[32], at[48];
  time_t t = (time_t)(g->now_ms / 1000);
  struct tm tm;
  gmtime_r(&t, &tm);
  size_t n = strftime(id, sizeof id, "%Y%m%d-%H%M%S-", &tm);
  for (int i = 0; i < 4; i++)
    id[n++] = (char)('a' + rng_below(&g->rng, 26));
  g->session = keep(g, id, n);
  size_t at_len = format_at(g, at, sizeof at);

  g->doc_off = st->history.len;
  g->doc_blocks = 0;
  g->doc_open = true;
  append_c(g, &st->history, "{\"session\":{\"id\":\"");
  append(g, &st->history, id, n);
  append_c(g, &st->history, "\",\"title\":\"");
  turn_buf_reset(&g->text);
  stream_content_words(g, &g->text, rng_range(&g->rng, 2, 6));
  /* Titles are picked from words; escape the few that need it by hand. */
  for (size_t i = 0; i < g->text.len; i++) {
    char c = g->text.data[i];
    if (c == '"' || c == '\\')
      append(g, &st->history, "\\", 1);
    else if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
    append(g, &st->history, &c, 1);
  }
  append_c(g, &st->history, "\",\"channel\":\"web\",\"created_at\":\"");
  append(g, &st->history, at, at_len);
  appendf(g, &st->history, "\",\"updated_at\":null,\"message_count\":%u},\"blocks\":[",
          2 * n_turns);
}

void stream_history_end(struct gen *g) {
  if (!g->doc_open) return;
  struct stream_gen *st = g->st;
  append_c(g, &st->history, "]}");
  push_span(g, &st->docs, &st->n_docs, &st->cap_docs, g->doc_off,
            st->history.len - g->doc_off);
  g->doc_open = false;
}
