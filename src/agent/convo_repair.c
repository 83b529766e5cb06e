/* A stored conversation made into one the providers take (see convo.h).
 *
 * A turn can end in ways that leave the store's conversation in a shape no
 * provider accepts: cancelled or limited while its tool calls ran (the results
 * message is there, but no reply follows it), killed while a call waited for
 * its approval (the reply with the call is there, its result never came), or
 * failed before the model said anything. The next turn's question then follows
 * a user message, or a tool call has no result, and the provider refuses every
 * request of that session from then on. Some blocks a reply may hold are refused
 * too: thinking without its signature (cut off by a cancel, or another
 * provider's reasoning), text that is only white space, and a call's input that
 * is not an object; and a tool's result that says nothing (a tool may end with
 * an empty or blank summary). The store keeps what happened; this repairs what
 * is sent. */
#include "convo.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define MISSING_RESULT "not run: the turn ended before this call finished"
#define SILENT_RESULT  "(the tool said nothing)"

static const char *role_of(json_t *m) {
  const char *role = json_string_value(json_object_get(m, "role"));
  return role != NULL ? role : "";
}

/* m's content as an array of blocks (a string becomes one text block), owned;
 * NULL when out of memory or m has no content of either form. */
static json_t *blocks_of(json_t *m) {
  json_t *content = json_object_get(m, "content");
  if (json_is_array(content)) return json_copy(content);
  if (!json_is_string(content)) return NULL;
  json_t *blocks = json_array();
  if (json_array_append_new(
          blocks, json_pack("{s:s, s:O}", "type", "text", "text", content)) != 0) {
    json_decref(blocks);
    return NULL;
  }
  return blocks;
}

static bool is_block(json_t *block, const char *type) {
  const char *t = json_string_value(json_object_get(block, "type"));
  return t != NULL && strcmp(t, type) == 0;
}

/* Whether s[0..len) holds nothing but white space. */
static bool is_blank(const char *s, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') return false;
  return true;
}

/* Whether a provider refuses block in a reply: thinking with no signature (the
 * API wants the one it gave, and none can be made up) or text of white space
 * only ("text content blocks must contain non-whitespace text"). */
static bool refused_in_reply(json_t *block) {
  if (is_block(block, "thinking")) {
    json_t *sig = json_object_get(block, "signature");
    return !json_is_string(sig) || json_string_length(sig) == 0;
  }
  json_t *text = json_object_get(block, "text");
  return is_block(block, "text") && json_is_string(text) &&
         is_blank(json_string_value(text), json_string_length(text));
}

/* Leaves out of a reply's blocks those a provider refuses, and gives a call
 * whose input is not an object (a model may send null or a list, which the
 * schema check then refused) an empty one: the API takes only an object. */
static void drop_refused(json_t *blocks) {
  for (size_t i = json_array_size(blocks); i-- > 0;) {
    json_t *block = json_array_get(blocks, i);
    if (refused_in_reply(block))
      json_array_remove(blocks, i);
    else if (is_block(block, "tool_use") &&
             !json_is_object(json_object_get(block, "input")))
      json_object_set_new(block, "input", json_object());
  }
}

/* Gives words to the tool results among a user message's blocks that the
 * Messages API refuses: one with is_error and no content ("content cannot be
 * empty if is_error is true") and one of white space only ("text content blocks
 * must contain non-whitespace text"). Returns false when out of memory. */
static bool fill_silent_results(json_t *blocks) {
  for (size_t i = 0; i < json_array_size(blocks); i++) {
    json_t *block = json_array_get(blocks, i);
    json_t *text = json_object_get(block, "content");
    bool is_error = json_is_true(json_object_get(block, "is_error"));
    bool empty = (json_is_string(text) && json_string_length(text) == 0) ||
                 (json_is_array(text) && json_array_size(text) == 0);
    bool spaces = json_is_string(text) && json_string_length(text) > 0 &&
                  is_blank(json_string_value(text), json_string_length(text));
    if (is_block(block, "tool_result") && ((is_error && empty) || spaces) &&
        json_object_set_new(block, "content", json_string(SILENT_RESULT)) != 0)
      return false;
  }
  return true;
}

/* Whether blocks hold a tool_result for the call id. */
static bool has_result(json_t *blocks, const char *id) {
  for (size_t i = 0; i < json_array_size(blocks); i++) {
    json_t *b = json_array_get(blocks, i);
    const char *for_id = json_string_value(json_object_get(b, "tool_use_id"));
    if (is_block(b, "tool_result") && for_id != NULL && strcmp(for_id, id) == 0)
      return true;
  }
  return false;
}

/* Puts an error result at the front of blocks for every tool_use of reply (an
 * assistant's blocks, or NULL) that blocks do not answer. Returns false when out
 * of memory. */
static bool answer_calls(json_t *reply, json_t *blocks) {
  size_t at = 0;
  for (size_t i = 0; i < json_array_size(reply); i++) {
    json_t *b = json_array_get(reply, i);
    const char *id = json_string_value(json_object_get(b, "id"));
    if (!is_block(b, "tool_use") || id == NULL || has_result(blocks, id)) continue;
    json_t *result =
        json_pack("{s:s, s:s, s:s, s:b}", "type", "tool_result", "tool_use_id", id,
                  "content", MISSING_RESULT, "is_error", true);
    if (json_array_insert_new(blocks, at++, result) != 0) return false;
  }
  return true;
}

/* Appends a message of role with blocks (taken) to out, or the blocks to out's
 * last message when it has the same role. Returns false when out of memory. */
static bool append(json_t *out, const char *role, json_t *blocks) {
  json_t *last = json_array_get(out, json_array_size(out) - 1);
  if (last != NULL && strcmp(role_of(last), role) == 0) {
    bool ok = json_array_extend(json_object_get(last, "content"), blocks) == 0;
    json_decref(blocks);
    return ok;
  }
  json_t *m = json_pack("{s:s, s:o}", "role", role, "content", blocks);
  return m != NULL && json_array_append_new(out, m) == 0;
}

/* The repaired conversation as a JSON array of messages, owned; NULL when a
 * message is not a conversation's or out of memory. */
static json_t *repaired(const char *const *messages, size_t n) {
  json_t *out = json_array();
  json_t *reply = NULL; /* the last assistant message's blocks, while unanswered */
  bool ok = out != NULL;
  for (size_t i = 0; ok && i <= n; i++) {
    json_t *m = i < n ? json_loads(messages[i], JSON_ALLOW_NUL, NULL) : NULL;
    json_t *blocks = m != NULL ? blocks_of(m) : NULL;
    const char *role = m != NULL ? role_of(m) : "";
    bool user = strcmp(role, "user") == 0;
    ok = i == n || (blocks != NULL && (user || strcmp(role, "assistant") == 0));
    if (ok && i < n && !user) drop_refused(blocks);
    if (ok && i < n && user) ok = fill_silent_results(blocks);
    if (ok && i < n && !user && json_array_size(blocks) == 0) {
      /* Nothing of it can be sent: as if it were not there, so that its
       * neighbours join (and the reply before it still gets its results). */
      json_decref(blocks);
      json_decref(m);
      continue;
    }
    if (ok && reply != NULL && !user) {
      /* A reply's calls need their results before anything else but a user
       * message, which takes them at its front. */
      json_t *results = json_array();
      ok = results != NULL && answer_calls(reply, results) &&
           (json_array_size(results) == 0 || append(out, "user", json_incref(results)));
      json_decref(results);
    } else if (ok && reply != NULL) {
      ok = answer_calls(reply, blocks);
    }
    reply = NULL;
    if (ok && i < n) {
      ok = append(out, role, json_incref(blocks));
      if (!user)
        reply = json_object_get(json_array_get(out, json_array_size(out) - 1), "content");
    }
    json_decref(blocks);
    json_decref(m);
  }
  if (!ok) {
    json_decref(out);
    return NULL;
  }
  return out;
}

int convo_repair(char ***messages, size_t *n) {
  json_t *fixed = repaired((const char *const *)*messages, *n);
  if (fixed == NULL) return -1;
  size_t count = json_array_size(fixed);
  char **out = calloc(count > 0 ? count : 1, sizeof *out);
  bool ok = out != NULL;
  for (size_t i = 0; ok && i < count; i++) {
    /* Only an intermediate: the request body parses it again and writes its
     * numbers shortest itself. */
    out[i] = json_dumps(json_array_get(fixed, i), JSON_COMPACT);
    ok = out[i] != NULL;
  }
  json_decref(fixed);
  if (!ok) {
    for (size_t i = 0; out != NULL && i < count; i++)
      free(out[i]);
    free(out);
    return -1;
  }
  for (size_t i = 0; i < *n; i++)
    free((*messages)[i]);
  free(*messages);
  *messages = out;
  *n = count;
  return 0;
}
