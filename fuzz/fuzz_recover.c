/* Fuzz target: rebuilding a cut-off turn's messages from its recorded events
 * (convo_recover, src/agent/convo_recover.c). turnd does this at start-up, so a
 * crash here would keep it from ever starting again, and a message it cannot
 * send would break the session's every later turn. The stream is fed once
 * whole and once cut in two chunks at a line boundary (the store keeps a turn
 * in chunks of lines), and both runs must hand out the same messages. Every
 * message must be a user or assistant message with content, and the lot must
 * be a conversation convo_repair takes.
 *
 * Input: byte 0  which line the second chunk starts at (modulo the lines + 1)
 *        rest    the events, NDJSON */
#include "fuzz_support.h"
#include "agent/convo.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The messages one run was handed. */
struct taken {
  char **json;
  size_t n, cap;
  struct fuzz_log log; /* each message's time and text, in order */
};

static int take(void *ctx, struct convo_message *m) {
  struct taken *t = ctx;
  if (t->n == t->cap) {
    size_t cap = t->cap == 0 ? 8 : t->cap * 2;
    char **grown = realloc(t->json, cap * sizeof *grown);
    CHECK(grown != NULL);
    t->json = grown;
    t->cap = cap;
  }
  fuzz_log_put(&t->log, &m->at_ms, sizeof m->at_ms);
  fuzz_log_put(&t->log, m->json, strlen(m->json) + 1);
  t->json[t->n++] = m->json;
  return 0;
}

/* Feeds lines[0..len) in the chunks that cut divides it into (cut == len: one),
 * then finishes the last message. Returns convo_recover's result. */
static int run(const char *lines, size_t len, size_t cut, struct taken *t) {
  struct convo c;
  convo_init(&c);
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  int rc = convo_recover(&c, &arena, lines, cut, 1, take, t);
  if (rc == 0 && cut < len)
    rc = convo_recover(&c, &arena, lines + cut, len - cut, 1, take, t);
  if (rc == 0) {
    convo_recover_finish(&c, 1, (len & 1) != 0); /* either way, as the input falls */
    struct convo_message m;
    while (convo_take(&c, &m))
      take(t, &m);
  }
  turn_arena_fini(&arena);
  convo_fini(&c);
  return rc;
}

static void check_message(const char *text) {
  json_t *msg = json_loads(text, 0, NULL);
  CHECK(msg != NULL);
  const char *role = json_string_value(json_object_get(msg, "role"));
  CHECK(role != NULL && (strcmp(role, "user") == 0 || strcmp(role, "assistant") == 0));
  CHECK(json_array_size(json_object_get(msg, "content")) > 0);
  json_decref(msg);
}

static void taken_free(struct taken *t) {
  for (size_t i = 0; i < t->n; i++)
    free(t->json[i]);
  free(t->json);
  free(t->log.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const char *lines = (const char *)data + 1;
  size_t len = size - 1;
  /* The cut: just after the k-th newline, k from byte 0. */
  size_t newlines = 0;
  for (size_t i = 0; i < len; i++)
    newlines += lines[i] == '\n';
  size_t k = data[0] % (newlines + 1), cut = len;
  for (size_t i = 0, seen = 0; i < len && k > 0; i++)
    if (lines[i] == '\n' && ++seen == k) cut = i + 1;

  struct taken whole = {0}, split = {0};
  int rc_whole = run(lines, len, len, &whole);
  int rc_split = run(lines, len, cut, &split);
  CHECK(rc_whole == 0 && rc_split == 0); /* only running out of memory fails */
  CHECK(whole.log.len == split.log.len &&
        (whole.log.len == 0 || memcmp(whole.log.p, split.log.p, whole.log.len) == 0));
  for (size_t i = 0; i < whole.n; i++)
    check_message(whole.json[i]);

  /* After the user's text, as in the store, the messages make a conversation
   * a provider is sent. */
  size_t n = whole.n + 1;
  char **conversation = malloc(n * sizeof *conversation);
  CHECK(conversation != NULL);
  conversation[0] =
      strdup("{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}");
  CHECK(conversation[0] != NULL);
  for (size_t i = 0; i < whole.n; i++) {
    conversation[i + 1] = whole.json[i];
    whole.json[i] = NULL;
  }
  CHECK(convo_repair(&conversation, &n) == 0);
  for (size_t i = 0; i < n; i++)
    free(conversation[i]);
  free(conversation);

  taken_free(&whole);
  taken_free(&split);
  return 0;
}
