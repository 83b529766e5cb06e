/* Reading a script model from JSON. Everything is checked here, at start-up, so a
 * turn never meets a malformed step. */
#include "script.h"

#include "turn/turn.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_step(json_t *j, struct script_step *st, char *err, size_t cap) {
  memset(st, 0, sizeof *st);
  if (!json_is_object(j) || json_object_size(j) != 1) {
    snprintf(err, cap, "a step must be an object with one key");
    return -1;
  }
  const char *key = json_object_iter_key(json_object_iter(j));
  json_t *v = json_object_iter_value(json_object_iter(j));
  if (strcmp(key, "text") == 0 || strcmp(key, "reasoning") == 0 ||
      strcmp(key, "fail") == 0) {
    if (!json_is_string(v)) goto bad;
    st->kind = key[0] == 't'   ? SCRIPT_TEXT
               : key[0] == 'r' ? SCRIPT_REASONING
                               : SCRIPT_FAIL;
    st->text = strdup(json_string_value(v));
    return st->text != NULL ? 0 : -1;
  }
  if (strcmp(key, "tool_use") == 0) {
    json_t *name = json_object_get(v, "name");
    json_t *input = json_object_get(v, "input");
    if (!json_is_string(name) || json_string_length(name) == 0 ||
        (input != NULL && !json_is_object(input)))
      goto bad;
    st->kind = SCRIPT_TOOL_USE;
    st->text = strdup(json_string_value(name));
    st->input = input != NULL ? json_dumps(input, JSON_COMPACT) : strdup("{}");
    return st->text != NULL && st->input != NULL ? 0 : -1;
  }
  if (strcmp(key, "delay_ms") == 0) {
    if (!json_is_integer(v) || json_integer_value(v) < 0 ||
        json_integer_value(v) > 3600 * 1000)
      goto bad;
    st->kind = SCRIPT_DELAY;
    st->ms = (uint32_t)json_integer_value(v);
    return 0;
  }
  if (strcmp(key, "throttle") == 0) {
    if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) > 3600)
      goto bad;
    st->kind = SCRIPT_THROTTLE;
    st->seconds = json_number_value(v);
    return 0;
  }
  if (strcmp(key, "stop") == 0) {
    if (!json_is_string(v)) goto bad;
    int r = turn_stop_reason_from_name(turn_str_c(json_string_value(v)));
    if (r != TURN_STOP_END_TURN && r != TURN_STOP_MAX_TOKENS) goto bad;
    st->kind = SCRIPT_STOP;
    st->stop_reason = r;
    return 0;
  }
  snprintf(err, cap, "unknown step \"%s\"", key);
  return -1;
bad:
  snprintf(err, cap, "bad value for step \"%s\"", key);
  return -1;
}

static int parse_replies(json_t *j, struct script_replies *r, char *err, size_t cap) {
  if (!json_is_array(j) || json_array_size(j) == 0) {
    snprintf(err, cap, "replies must be a non-empty list");
    return -1;
  }
  r->n = json_array_size(j);
  r->replies = calloc(r->n, sizeof *r->replies);
  if (r->replies == NULL) return -1;
  for (size_t i = 0; i < r->n; i++) {
    json_t *reply = json_array_get(j, i);
    if (!json_is_array(reply)) {
      snprintf(err, cap, "reply %zu must be a list of steps", i);
      return -1;
    }
    struct script_reply *rep = &r->replies[i];
    rep->n = json_array_size(reply);
    rep->steps = calloc(rep->n + 1, sizeof *rep->steps);
    if (rep->steps == NULL) return -1;
    for (size_t k = 0; k < rep->n; k++) {
      if (parse_step(json_array_get(reply, k), &rep->steps[k], err, cap) != 0) return -1;
    }
  }
  return 0;
}

int script_parse(struct script *s, const char *text, size_t len, char *err, size_t cap) {
  memset(s, 0, sizeof *s);
  snprintf(err, cap, "out of memory");
  json_error_t e;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
  if (root == NULL) {
    snprintf(err, cap, "not valid JSON (line %d)", e.line);
    return -1;
  }
  int rv = -1;
  json_t *turns = json_object_get(root, "turns");
  json_t *fallback = json_object_get(root, "default");
  if (!json_is_object(root) || (turns != NULL && !json_is_array(turns))) {
    snprintf(err, cap, "a script is {\"turns\": [...], \"default\": [...]}");
    goto done;
  }
  if (turns != NULL) {
    s->n_turns = json_array_size(turns);
    s->turns = calloc(s->n_turns + 1, sizeof *s->turns);
    if (s->turns == NULL) goto done;
    for (size_t i = 0; i < s->n_turns; i++) {
      json_t *t = json_array_get(turns, i);
      json_t *when = json_object_get(t, "when");
      if (!json_is_string(when)) {
        snprintf(err, cap, "turn %zu needs a \"when\" string", i);
        goto done;
      }
      s->turns[i].when = strdup(json_string_value(when));
      if (s->turns[i].when == NULL ||
          parse_replies(json_object_get(t, "replies"), &s->turns[i], err, cap) != 0)
        goto done;
    }
  }
  if (fallback != NULL && parse_replies(fallback, &s->fallback, err, cap) != 0) goto done;
  if (s->n_turns == 0 && s->fallback.n == 0) {
    snprintf(err, cap, "the script has no turns and no default");
    goto done;
  }
  rv = 0;
done:
  json_decref(root);
  if (rv != 0) script_free(s);
  return rv;
}

static void free_replies(struct script_replies *r) {
  for (size_t i = 0; r->replies != NULL && i < r->n; i++) {
    for (size_t k = 0; k < r->replies[i].n; k++) {
      free(r->replies[i].steps[k].text);
      free(r->replies[i].steps[k].input);
    }
    free(r->replies[i].steps);
  }
  free(r->replies);
  free(r->when);
}

void script_free(struct script *s) {
  for (size_t i = 0; s->turns != NULL && i < s->n_turns; i++)
    free_replies(&s->turns[i]);
  free(s->turns);
  free_replies(&s->fallback);
  memset(s, 0, sizeof *s);
}

const struct script_replies *script_pick(const struct script *s, const char *user_text) {
  for (size_t i = 0; i < s->n_turns; i++)
    if (strstr(user_text, s->turns[i].when) != NULL) return &s->turns[i];
  return s->fallback.n > 0 ? &s->fallback : NULL;
}

const struct script_reply *script_reply_at(const struct script_replies *r, size_t call) {
  return &r->replies[call < r->n ? call : r->n - 1];
}
