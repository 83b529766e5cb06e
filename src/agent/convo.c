/* Builds the conversation's messages (see convo.h). Text arrives as many small
 * deltas, so a growing text block is kept as plain bytes and becomes a JSON
 * string only when the block ends: appending to a JSON string would copy it on
 * every delta. */
#include "convo.h"
#include "json_short.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A text or thinking block larger than any reply; past it the block is cut. */
#define CONVO_TEXT_CAP (64u << 20)
/* The ids of a rebuilt turn's open calls have no cap of their own: the turn's
 * log, which holds them, has one. */
#define CONVO_IDS_CAP SIZE_MAX

void convo_init(struct convo *c) {
  memset(c, 0, sizeof *c);
  turn_buf_init(&c->text, CONVO_TEXT_CAP, NULL);
  turn_buf_init(&c->unanswered, CONVO_IDS_CAP, NULL);
  turn_buf_init(&c->tiers, CONVO_IDS_CAP, NULL);
}

void convo_fini(struct convo *c) {
  free(c->signature);
  json_decref(c->content);
  turn_buf_fini(&c->text);
  turn_buf_fini(&c->unanswered);
  turn_buf_fini(&c->tiers);
  for (size_t i = 0; i < c->n_queued; i++)
    free(c->queue[i].json);
  memset(c, 0, sizeof *c);
}

static void append_block(struct convo *c, json_t *block) {
  if (block == NULL || json_array_append_new(c->content, block) != 0) c->lost = true;
}

/* The growing text block becomes a content block. */
static void close_block(struct convo *c) {
  if (c->block == CONVO_BLOCK_NONE) return;
  const char *key = c->block == CONVO_BLOCK_TEXT ? "text" : "thinking";
  /* Providers refuse empty text blocks; empty deltas said nothing. */
  if (c->text.len > 0) {
    json_t *s = json_stringn((const char *)c->text.data, c->text.len);
    json_t *block = s == NULL ? NULL : json_pack("{s:s, s:o}", "type", key, key, s);
    /* A provider takes its thinking back only with the signature it gave. */
    if (block != NULL && c->block == CONVO_BLOCK_THINKING && c->signature != NULL &&
        json_object_set_new(block, "signature", json_string(c->signature)) != 0) {
      json_decref(block);
      block = NULL;
    }
    append_block(c, block);
  }
  free(c->signature);
  c->signature = NULL;
  turn_buf_reset(&c->text);
  c->block = CONVO_BLOCK_NONE;
}

static void enqueue(struct convo *c, const char *role, json_t *content, uint64_t at_ms) {
  json_t *msg = json_pack("{s:s, s:o}", "role", role, "content", content);
  char *text = msg == NULL ? NULL : json_dumps_shortest(msg, JSON_COMPACT);
  json_decref(msg);
  if (text == NULL || c->n_queued == CONVO_QUEUE) {
    free(text);
    c->lost = true;
    return;
  }
  c->queue[c->n_queued++] = (struct convo_message){text, at_ms};
}

void convo_finish(struct convo *c) {
  if (c->open == CONVO_NONE) return;
  close_block(c);
  json_t *content = c->content;
  c->content = NULL;
  /* A reply cut short before it said anything leaves no message. */
  if (json_array_size(content) > 0)
    enqueue(c, c->open == CONVO_ASSISTANT ? "assistant" : "user", content, c->open_at_ms);
  else
    json_decref(content);
  c->open = CONVO_NONE;
}

/* Makes sure a message of kind `want` is open. Returns false when out of memory. */
static bool open_message(struct convo *c, enum convo_open want, uint64_t now_ms) {
  if (c->open == want) return true;
  convo_finish(c);
  c->content = json_array();
  if (c->content == NULL) {
    c->lost = true;
    return false;
  }
  c->open = want;
  c->open_at_ms = now_ms;
  return true;
}

void convo_user_text(struct convo *c, const char *text, uint64_t now_ms) {
  convo_finish(c);
  json_t *content = json_pack("[{s:s, s:s}]", "type", "text", "text", text);
  if (content == NULL) {
    c->lost = true;
    return;
  }
  enqueue(c, "user", content, now_ms);
}

static void grow_block(struct convo *c, enum convo_block kind, turn_str delta,
                       uint64_t now_ms) {
  if (!open_message(c, CONVO_ASSISTANT, now_ms)) return;
  /* A signature comes at its block's end: thinking after it is the next block,
   * which has a signature of its own. */
  if (c->block != kind || c->signature != NULL) close_block(c);
  c->block = kind;
  if (turn_buf_append(&c->text, delta.p, delta.len) != 0) c->lost = true;
}

void convo_text(struct convo *c, turn_str delta, uint64_t now_ms) {
  grow_block(c, CONVO_BLOCK_TEXT, delta, now_ms);
}

void convo_thinking(struct convo *c, turn_str delta, uint64_t now_ms) {
  grow_block(c, CONVO_BLOCK_THINKING, delta, now_ms);
}

void convo_signature(struct convo *c, turn_str signature) {
  if (c->block != CONVO_BLOCK_THINKING) return; /* a signature of nothing kept */
  /* Signatures may come in pieces, as deltas do. */
  size_t have = c->signature != NULL ? strlen(c->signature) : 0;
  char *grown = realloc(c->signature, have + signature.len + 1);
  if (grown == NULL) {
    c->lost = true;
    return;
  }
  memcpy(grown + have, signature.p, signature.len);
  grown[have + signature.len] = '\0';
  c->signature = grown;
}

void convo_tool_use(struct convo *c, const char *id, const char *name,
                    const char *input_json, uint64_t now_ms) {
  if (!open_message(c, CONVO_ASSISTANT, now_ms)) return;
  close_block(c);
  json_t *input = json_loads(input_json, JSON_DECODE_ANY, NULL);
  if (input == NULL) input = json_object(); /* the script's input is an object */
  append_block(c, input == NULL ? NULL
                                : json_pack("{s:s, s:s, s:s, s:o}", "type", "tool_use",
                                            "id", id, "name", name, "input", input));
}

void convo_tool_result(struct convo *c, const char *id, turn_str summary, bool is_error,
                       uint64_t now_ms) {
  if (!open_message(c, CONVO_RESULTS, now_ms)) return;
  json_t *s = json_stringn(summary.p, summary.len);
  append_block(c, s == NULL
                      ? NULL
                      : json_pack("{s:s, s:s, s:o, s:b}", "type", "tool_result",
                                  "tool_use_id", id, "content", s, "is_error", is_error));
}

bool convo_take(struct convo *c, struct convo_message *out) {
  if (c->n_queued == 0) return false;
  *out = c->queue[0];
  memmove(c->queue, c->queue + 1, (c->n_queued - 1) * sizeof c->queue[0]);
  c->n_queued--;
  return true;
}
