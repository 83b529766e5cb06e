/* Builds the conversation's messages (see convo.h). The open message is kept as
 * its JSON text so far, and a growing text block is escaped into it delta by
 * delta: a reply is never copied or serialised whole, which for a reply of tens
 * of megabytes took the loop seconds and four times the reply's size. Blocks
 * other than text (a call, a result) are small and go through jansson. */
#include "convo.h"
#include "json_short.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The JSON of one message: past it the message is cut (c->lost). Far past any
 * reply: a turn's events, which carry its text, are capped at 64 MiB, and an
 * escape takes at most six bytes per byte. */
#define CONVO_MSG_CAP (400u << 20)
/* The ids of a rebuilt turn's open calls have no cap of their own: the turn's
 * log, which holds them, has one. */
#define CONVO_IDS_CAP SIZE_MAX

void convo_init(struct convo *c) {
  memset(c, 0, sizeof *c);
  turn_buf_init(&c->msg, CONVO_MSG_CAP, NULL);
  turn_buf_init(&c->unanswered, CONVO_IDS_CAP, NULL);
  turn_buf_init(&c->tiers, CONVO_IDS_CAP, NULL);
}

void convo_fini(struct convo *c) {
  free(c->signature);
  turn_buf_fini(&c->msg);
  turn_buf_fini(&c->unanswered);
  turn_buf_fini(&c->tiers);
  for (size_t i = 0; i < c->n_queued; i++)
    free(c->queue[i].json);
  memset(c, 0, sizeof *c);
}

/* Appends text to the open message; on failure it stays as it was and the
 * message is marked lost. */
static bool add(struct convo *c, const char *text, size_t len) {
  if (turn_buf_append(&c->msg, text, len) == TURN_OK) return true;
  c->lost = true;
  return false;
}

#define ADD_LIT(c, lit) add((c), (lit), sizeof(lit) - 1)

/* Appends a block given as a jansson value (taken). */
static void add_block(struct convo *c, json_t *block) {
  char *text = block != NULL ? json_dumps_shortest(block, JSON_COMPACT) : NULL;
  json_decref(block);
  size_t saved = c->msg.len;
  if (text == NULL || (c->n_blocks > 0 && !ADD_LIT(c, ",")) ||
      !add(c, text, strlen(text))) {
    c->msg.len = saved;
    c->lost = true;
  } else {
    c->n_blocks++;
  }
  free(text);
}

/* Escapes text into the growing text block, whose string is closed: the text
 * goes in place of the closing quote and brings its own. */
static void add_escaped(struct convo *c, const char *text, size_t len) {
  if (len == 0) return;
  size_t saved = c->msg.len; /* msg.data[saved - 1] is that quote */
  c->msg.len = saved - 1;
  if (turn_buf_append_json_string(&c->msg, text, len) != TURN_OK) {
    c->msg.len = saved; /* the string's first byte, a quote, is where it was */
    c->lost = true;
    return;
  }
  /* Its opening quote landed on the old closing one: what follows moves back
   * over it. */
  memmove(c->msg.data + saved - 1, c->msg.data + saved, c->msg.len - saved);
  c->msg.len--;
}

/* The bytes a UTF-8 sequence starting with lead takes (1 for anything that
 * starts none: the escaper makes it U+FFFD on its own). */
static size_t sequence_len(unsigned char lead) {
  return lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
}

/* Adds a delta to the growing block. A delta may end inside a character (a
 * provider's bytes cut anywhere); the escaper, which sees one delta at a time,
 * would make each half U+FFFD, so a character's first bytes wait for the rest
 * in c->partial. */
static void add_to_block(struct convo *c, turn_str delta) {
  const char *p = delta.p;
  size_t len = delta.len;
  if (c->n_partial > 0) {
    size_t need = sequence_len((unsigned char)c->partial[0]);
    while (c->n_partial < need && len > 0 && ((unsigned char)*p & 0xC0) == 0x80) {
      c->partial[c->n_partial++] = *p++;
      len--;
    }
    if (c->n_partial < need && len == 0) return; /* still cut */
    add_escaped(c, c->partial, c->n_partial);    /* whole, or invalid */
    c->n_partial = 0;
  }
  size_t held = 0; /* a character cut at the end */
  for (size_t i = 1; i <= 3 && i <= len; i++) {
    unsigned char b = (unsigned char)p[len - i];
    if ((b & 0xC0) == 0x80) continue;
    if (sequence_len(b) > i) held = i;
    break;
  }
  add_escaped(c, p, len - held);
  memcpy(c->partial, p + len - held, held);
  c->n_partial = held;
}

/* The growing text block, if one began, is complete. */
static void close_block(struct convo *c) {
  if (c->block == CONVO_BLOCK_NONE) return;
  if (c->block_begun) {
    add_escaped(c, c->partial, c->n_partial); /* a character never completed */
    c->n_partial = 0;
    size_t saved = c->msg.len;
    /* A provider takes its thinking back only with the signature it gave. */
    bool ok = c->block != CONVO_BLOCK_THINKING || c->signature == NULL ||
              (ADD_LIT(c, ",\"signature\":") &&
               turn_buf_append_json_string(&c->msg, c->signature, strlen(c->signature)) ==
                   TURN_OK);
    if (!ok || !ADD_LIT(c, "}")) {
      c->msg.len = saved; /* the block stays open: the message is lost anyway */
      c->lost = true;
    }
  }
  free(c->signature);
  c->signature = NULL;
  c->block = CONVO_BLOCK_NONE;
  c->block_begun = false;
}

static void enqueue(struct convo *c, char *json, uint64_t at_ms, uint64_t parts) {
  if (json == NULL || c->n_queued == CONVO_QUEUE) {
    free(json);
    c->lost = true;
    return;
  }
  c->queue[c->n_queued++] = (struct convo_message){json, at_ms, parts};
}

void convo_finish(struct convo *c) {
  if (c->open == CONVO_NONE) return;
  close_block(c);
  /* A reply cut short before it said anything leaves no message. The message's
   * buffer becomes the message: a reply is not copied once more. */
  if (c->n_blocks > 0 && add(c, "]}", 3)) { /* with its NUL */
    char *json = c->msg.data;
    c->msg.data = NULL;
    c->msg.len = c->msg.alloc = 0;
    enqueue(c, json, c->open_at_ms, c->parts);
  }
  turn_buf_reset(&c->msg);
  c->open = CONVO_NONE;
  c->parts = 0;
}

/* Makes sure a message of kind `want` is open. Returns false when out of memory. */
static bool open_message(struct convo *c, enum convo_open want, uint64_t now_ms) {
  if (c->open == want) return true;
  convo_finish(c);
  c->n_blocks = 0;
  bool ok = want == CONVO_ASSISTANT ? ADD_LIT(c, "{\"role\":\"assistant\",\"content\":[")
                                    : ADD_LIT(c, "{\"role\":\"user\",\"content\":[");
  if (!ok) return false;
  c->open = want;
  c->open_at_ms = now_ms;
  return true;
}

void convo_user_text(struct convo *c, const char *text, uint64_t now_ms) {
  convo_finish(c);
  json_t *msg = json_pack("{s:s, s:[{s:s, s:s}]}", "role", "user", "content", "type",
                          "text", "text", text);
  char *json = msg != NULL ? json_dumps(msg, JSON_COMPACT) : NULL;
  json_decref(msg);
  enqueue(c, json, now_ms, 0);
}

static void grow_block(struct convo *c, enum convo_block kind, turn_str delta,
                       uint64_t now_ms) {
  if (!open_message(c, CONVO_ASSISTANT, now_ms)) return;
  /* A signature comes at its block's end: thinking after it is the next block,
   * which has a signature of its own. */
  if (c->block != kind || c->signature != NULL) close_block(c);
  c->block = kind;
  /* Providers refuse empty text blocks; empty deltas said nothing, so a block
   * is written once it has text. */
  if (delta.len == 0) return;
  if (!c->block_begun) {
    size_t saved = c->msg.len;
    bool ok = (c->n_blocks == 0 || ADD_LIT(c, ",")) &&
              (kind == CONVO_BLOCK_TEXT
                   ? ADD_LIT(c, "{\"type\":\"text\",\"text\":\"\"")
                   : ADD_LIT(c, "{\"type\":\"thinking\",\"thinking\":\"\""));
    if (!ok) {
      c->msg.len = saved;
      return;
    }
    c->n_blocks++;
    c->block_begun = true;
  }
  add_to_block(c, delta);
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
  add_block(c, input == NULL ? NULL
                             : json_pack("{s:s, s:s, s:s, s:o}", "type", "tool_use", "id",
                                         id, "name", name, "input", input));
}

void convo_tool_result(struct convo *c, const char *id, turn_str summary, bool is_error,
                       uint64_t now_ms) {
  if (!open_message(c, CONVO_RESULTS, now_ms)) return;
  json_t *s = json_stringn(summary.p, summary.len);
  add_block(c, s == NULL
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

turn_str convo_front(const struct convo *c) {
  /* Before its first block a message may yet be dropped (a reply that said
   * nothing); a growing text block's closing quote moves with each delta. */
  if (c->open == CONVO_NONE || c->n_blocks == 0) return (turn_str){NULL, 0};
  return (turn_str){c->msg.data, c->msg.len - (c->block_begun ? 1 : 0)};
}

void convo_front_taken(struct convo *c) {
  turn_str front = convo_front(c);
  if (front.len == 0) return;
  memmove(c->msg.data, c->msg.data + front.len, c->msg.len - front.len);
  c->msg.len -= front.len;
  c->parts++;
}
