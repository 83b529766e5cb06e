/* Builds history blocks (see history.h). Events are read first into a table of
 * tool calls keyed by (turn, call id), since call ids repeat across turns; then
 * each message becomes blocks, and the notices are merged in: each among the
 * blocks of its own turn, by time (a turn's notice never drifts into the next
 * turn when both fall in the same millisecond). */
#include "history.h"

#include "json_short.h"
#include "tools_demo.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct call_info {
  char *turn, *id;
  char *tool;       /* from tool_use; an approval names the tool, not the call */
  char *request;    /* the approval this call got, or NULL */
  uint64_t input_n; /* order in which inputs completed (0: not yet) */
  int tier;
  bool has_tier, has_result;
  bool has_widget; /* a widget event was recorded for it */
  turn_status status;
  turn_approval approval;
  char *summary;
  uint64_t ready_ms;  /* input complete, or approval decided */
  uint64_t result_ms; /* tool_result recorded */
};

struct notice {
  uint64_t at_ms;
  char *text;
  size_t turn; /* index in history.turns */
};

struct message {
  char *turn;
  uint64_t at_ms;
  json_t *body;
};

struct history {
  struct call_info *calls;
  size_t n_calls, cap_calls;
  struct notice *notices;
  size_t n_notices, cap_notices;
  struct message *messages;
  size_t n_messages, cap_messages;
  uint64_t n_inputs; /* inputs completed so far, for input_n */
  char **turns;      /* the turns whose events were fed, in that order */
  size_t n_turns, cap_turns;
  turn_arena arena;
};

struct history *history_new(void) {
  struct history *h = calloc(1, sizeof *h);
  if (h != NULL) turn_arena_init(&h->arena, NULL);
  return h;
}

void history_free(struct history *h) {
  if (h == NULL) return;
  for (size_t i = 0; i < h->n_calls; i++) {
    free(h->calls[i].turn);
    free(h->calls[i].id);
    free(h->calls[i].summary);
    free(h->calls[i].tool);
    free(h->calls[i].request);
  }
  for (size_t i = 0; i < h->n_notices; i++)
    free(h->notices[i].text);
  for (size_t i = 0; i < h->n_messages; i++) {
    free(h->messages[i].turn);
    json_decref(h->messages[i].body);
  }
  for (size_t i = 0; i < h->n_turns; i++)
    free(h->turns[i]);
  free(h->turns);
  free(h->calls);
  free(h->notices);
  free(h->messages);
  turn_arena_fini(&h->arena);
  free(h);
}

static char *dup_str(turn_str s) {
  char *p = malloc(s.len + 1);
  if (p == NULL) return NULL;
  memcpy(p, s.p, s.len);
  p[s.len] = '\0';
  return p;
}

static bool str_is(turn_str s, const char *c) {
  return s.len == strlen(c) && memcmp(s.p, c, s.len) == 0;
}

static struct call_info *call_find(struct history *h, const char *turn, turn_str id) {
  for (size_t i = h->n_calls; i-- > 0;)
    if (str_is(id, h->calls[i].id) && strcmp(h->calls[i].turn, turn) == 0)
      return &h->calls[i];
  return NULL;
}

/* The call's record, made on first sight. NULL when out of memory. */
static struct call_info *call_get(struct history *h, const char *turn, turn_str id) {
  struct call_info *c = call_find(h, turn, id);
  if (c != NULL) return c;
  struct call_info *calls =
      turn_grow(h->calls, h->n_calls, &h->cap_calls, sizeof *calls, 16);
  if (calls == NULL) return NULL;
  h->calls = calls;
  c = &calls[h->n_calls];
  memset(c, 0, sizeof *c);
  c->turn = strdup(turn);
  c->id = dup_str(id);
  if (c->turn == NULL || c->id == NULL) {
    free(c->turn);
    free(c->id);
    return NULL;
  }
  h->n_calls++;
  return c;
}

static int take_event(struct history *h, const char *turn, uint64_t at_ms,
                      const turn_event *ev) {
  struct call_info *c;
  switch (ev->type) {
  case TURN_EV_TOOL_USE:
    if ((c = call_get(h, turn, ev->tool_use.id)) == NULL) return -1;
    c->tier = ev->tool_use.tier;
    c->has_tier = true;
    free(c->tool);
    if ((c->tool = dup_str(ev->tool_use.tool)) == NULL) return -1;
    return 0;
  case TURN_EV_TOOL_INPUT:
    if ((c = call_get(h, turn, ev->tool_input.id)) == NULL) return -1;
    c->ready_ms = at_ms;
    c->input_n = ++h->n_inputs;
    return 0;
  case TURN_EV_APPROVAL: {
    /* The protocol's rule: the tier-2 call of that tool whose input completed
     * first and which has neither an approval nor a result yet (a call refused
     * before it was asked has its result, and the model's retry is the one
     * that waits). */
    struct call_info *best = NULL;
    for (size_t i = 0; i < h->n_calls; i++) {
      c = &h->calls[i];
      if (strcmp(c->turn, turn) != 0 || c->tier != 2 || c->input_n == 0 ||
          c->request != NULL || c->has_result || c->tool == NULL ||
          !str_is(ev->approval.tool, c->tool))
        continue;
      if (best == NULL || c->input_n < best->input_n) best = c;
    }
    if (best != NULL && (best->request = dup_str(ev->approval.request)) == NULL)
      return -1;
    return 0;
  }
  case TURN_EV_APPROVAL_DECIDED:
    for (size_t i = 0; i < h->n_calls; i++) {
      c = &h->calls[i];
      if (c->request != NULL && strcmp(c->turn, turn) == 0 &&
          str_is(ev->approval_decided.request, c->request) && at_ms > c->ready_ms)
        c->ready_ms = at_ms;
    }
    return 0;
  case TURN_EV_WIDGET:
    if ((c = call_get(h, turn, ev->widget.id)) == NULL) return -1;
    c->has_widget = true;
    return 0;
  case TURN_EV_TOOL_RESULT:
    if ((c = call_get(h, turn, ev->tool_result.id)) == NULL) return -1;
    c->has_result = true;
    c->status = ev->tool_result.status;
    c->approval = ev->tool_result.approval;
    free(c->summary);
    if ((c->summary = dup_str(ev->tool_result.summary)) == NULL) return -1;
    c->result_ms = at_ms;
    return 0;
  case TURN_EV_NOTICE: {
    struct notice *ns =
        turn_grow(h->notices, h->n_notices, &h->cap_notices, sizeof *ns, 16);
    if (ns == NULL) return -1;
    h->notices = ns;
    char *text = dup_str(ev->notice.text);
    if (text == NULL) return -1;
    ns[h->n_notices++] = (struct notice){at_ms, text, h->n_turns - 1};
    return 0;
  }
  default:
    return 0;
  }
}

int history_add_events(struct history *h, const char *turn, uint64_t at_ms,
                       const char *lines, size_t len) {
  if (h->n_turns == 0 || strcmp(h->turns[h->n_turns - 1], turn) != 0) {
    char **ts = turn_grow(h->turns, h->n_turns, &h->cap_turns, sizeof *ts, 16);
    if (ts == NULL) return -1;
    h->turns = ts;
    if ((ts[h->n_turns] = strdup(turn)) == NULL) return -1;
    h->n_turns++;
  }
  const char *p = lines, *end = lines + len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
    turn_event ev;
    turn_error err;
    turn_arena_reset(&h->arena);
    int rc = turn_event_parse(&ev, &h->arena, p, n, &err);
    if (rc <= TURN_E_NOMEM) return -1;
    if (rc == TURN_OK && take_event(h, turn, at_ms, &ev) != 0) return -1;
    p += n + 1;
  }
  return 0;
}

int history_add_message(struct history *h, const char *turn, uint64_t at_ms,
                        const char *json) {
  json_t *body = json_loads(json, 0, NULL);
  if (body == NULL) return 0; /* not a message we wrote: nothing to show */
  struct message *ms =
      turn_grow(h->messages, h->n_messages, &h->cap_messages, sizeof *ms, 16);
  char *t = strdup(turn);
  if (ms == NULL || t == NULL) {
    free(t);
    json_decref(body);
    return -1;
  }
  h->messages = ms;
  ms[h->n_messages++] = (struct message){t, at_ms, body};
  return 0;
}

void history_iso8601(uint64_t ms, char out[25]) {
  time_t secs = (time_t)(ms / 1000);
  struct tm tm;
  gmtime_r(&secs, &tm);
  char day[21];
  strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(out, 25, "%.19s.%03uZ", day, (unsigned)(ms % 1000));
}

/* ------------------------------------------------------------- building */

struct builder {
  struct history *h;
  turn_buf *out;
  size_t n_blocks;    /* written so far */
  size_t next_notice; /* notices before it are written */
  int rc;
};

static void put(struct builder *b, turn_block *blk, uint64_t at_ms) {
  char at[25];
  history_iso8601(at_ms, at);
  blk->at = turn_str_c(at);
  if (b->rc != 0) return;
  if ((b->n_blocks++ > 0 && turn_buf_append(b->out, ",", 1) != 0) ||
      turn_block_encode(blk, b->out) != TURN_OK)
    b->rc = -1;
}

/* The index of turn among the turns fed, or SIZE_MAX. */
static size_t turn_index(const struct history *h, const char *turn) {
  for (size_t i = h->n_turns; i-- > 0;)
    if (strcmp(h->turns[i], turn) == 0) return i;
  return SIZE_MAX;
}

/* Whether notice n comes before a message of that turn begun at at_ms. */
static bool notice_before(const struct notice *n, size_t turn, uint64_t at_ms) {
  if (turn == SIZE_MAX || n->turn == turn) return n->at_ms < at_ms;
  return n->turn < turn;
}

/* The notices that come before a message of turn begun at at_ms (all: every one
 * left) go out first. */
static void notices_until(struct builder *b, size_t turn, uint64_t at_ms, bool all) {
  struct history *h = b->h;
  while (b->next_notice < h->n_notices &&
         (all || notice_before(&h->notices[b->next_notice], turn, at_ms))) {
    struct notice *n = &h->notices[b->next_notice++];
    turn_block blk;
    memset(&blk, 0, sizeof blk);
    blk.type = TURN_BLOCK_NOTICE;
    blk.text.text = turn_str_c(n->text);
    put(b, &blk, n->at_ms);
  }
}

static void text_block(struct builder *b, turn_block_type type, const char *text,
                       size_t len, uint64_t at_ms) {
  turn_block blk;
  memset(&blk, 0, sizeof blk);
  blk.type = type;
  blk.text.text = (turn_str){text, len};
  put(b, &blk, at_ms);
}

static const char *str_field(json_t *o, const char *key) {
  return json_string_value(json_object_get(o, key));
}

/* A tool block for a call the messages show: details from the events. */
static void tool_block(struct builder *b, const struct message *m, json_t *use) {
  const char *id = str_field(use, "id"), *name = str_field(use, "name");
  if (id == NULL || name == NULL) return;
  turn_arena_reset(&b->h->arena);
  char *input_text = json_dumps_shortest(json_object_get(use, "input"), JSON_COMPACT);
  const char *visible =
      input_text != NULL ? demo_visible_input(name, input_text, &b->h->arena) : NULL;
  turn_block blk;
  memset(&blk, 0, sizeof blk);
  blk.type = TURN_BLOCK_TOOL;
  blk.tool.id = turn_str_c(id);
  blk.tool.tool = turn_str_c(name);
  blk.tool.tier = TURN_TIER_NULL;
  blk.tool.status = TURN_STATUS_NULL;
  blk.tool.approval = TURN_APPROVAL_NULL;
  turn_error err;
  if (visible == NULL || turn_input_from_json(&blk.tool.input, &b->h->arena, visible,
                                              strlen(visible), &err) != TURN_OK)
    blk.tool.input.json = TURN_STR("{}");
  const struct call_info *c = call_find(b->h, m->turn, turn_str_c(id));
  if (c != NULL && c->has_tier) blk.tool.tier = c->tier;
  if (c != NULL && c->has_result) {
    blk.tool.status = c->status;
    blk.tool.approval = c->approval;
    blk.tool.summary = turn_str_c(c->summary);
    blk.tool.has_summary = true;
    if (c->ready_ms > 0 && c->result_ms >= c->ready_ms) {
      blk.tool.has_duration_ms = true;
      blk.tool.duration_ms = (int64_t)(c->result_ms - c->ready_ms);
    }
  }
  put(b, &blk, m->at_ms);
  free(input_text);
  /* A widget from a render_ui call with a valid input. Where the call's events
   * were recorded they say whether its widget was shown: not for a call that
   * was refused, rejected or cancelled first. */
  const char *title = str_field(json_object_get(use, "input"), "title");
  const char *html = str_field(json_object_get(use, "input"), "html");
  if (strcmp(name, "render_ui") == 0 && title != NULL && html != NULL &&
      (c == NULL || c->has_widget)) {
    memset(&blk, 0, sizeof blk);
    blk.type = TURN_BLOCK_WIDGET;
    blk.widget.id = turn_str_c(id);
    blk.widget.title = turn_str_c(title);
    blk.widget.html = turn_str_c(html);
    put(b, &blk, m->at_ms);
  }
}

/* Whether a tool_use with that id came earlier in the same turn's messages. */
static bool call_shown(const struct history *h, size_t upto, const char *turn,
                       const char *id) {
  for (size_t i = 0; i < upto; i++) {
    const struct message *m = &h->messages[i];
    if (strcmp(m->turn, turn) != 0) continue;
    json_t *content = json_object_get(m->body, "content");
    size_t k;
    json_t *blk;
    json_array_foreach(content, k, blk) {
      const char *type = str_field(blk, "type"), *bid = str_field(blk, "id");
      if (type != NULL && strcmp(type, "tool_use") == 0 && bid != NULL &&
          strcmp(bid, id) == 0)
        return true;
    }
  }
  return false;
}

/* A result whose call is not in the history: tool "?". */
static void orphan_block(struct builder *b, const struct message *m, json_t *res) {
  const char *id = str_field(res, "tool_use_id");
  if (id == NULL) return;
  const char *content = str_field(res, "content");
  turn_block blk;
  memset(&blk, 0, sizeof blk);
  blk.type = TURN_BLOCK_TOOL;
  blk.tool.id = turn_str_c(id);
  blk.tool.tool = TURN_STR("?");
  blk.tool.tier = TURN_TIER_NULL;
  blk.tool.input.truncated = false; /* "input": null, "truncated": false */
  blk.tool.status =
      json_is_true(json_object_get(res, "is_error")) ? TURN_STATUS_ERROR : TURN_STATUS_OK;
  blk.tool.approval = TURN_APPROVAL_NULL;
  blk.tool.summary = turn_str_c(content != NULL ? content : "");
  blk.tool.has_summary = content != NULL;
  const struct call_info *c = call_find(b->h, m->turn, turn_str_c(id));
  if (c != NULL && c->has_result) {
    blk.tool.status = c->status;
    blk.tool.approval = c->approval;
  }
  put(b, &blk, m->at_ms);
}

static void message_blocks(struct builder *b, size_t index) {
  const struct message *m = &b->h->messages[index];
  const char *role = str_field(m->body, "role");
  json_t *content = json_object_get(m->body, "content");
  if (role == NULL) return;
  notices_until(b, turn_index(b->h, m->turn), m->at_ms, false);
  if (json_is_string(content)) { /* the short form of a text-only message */
    text_block(b, strcmp(role, "user") == 0 ? TURN_BLOCK_USER : TURN_BLOCK_ASSISTANT,
               json_string_value(content), json_string_length(content), m->at_ms);
    return;
  }
  turn_buf joined; /* consecutive text blocks of this message */
  turn_buf_init(&joined, SIZE_MAX, NULL);
  bool in_text = false;
  size_t k;
  json_t *blk;
  json_array_foreach(content, k, blk) {
    const char *type = str_field(blk, "type");
    if (type == NULL) continue;
    bool is_text = strcmp(type, "text") == 0;
    if (in_text && !is_text) {
      text_block(b, strcmp(role, "user") == 0 ? TURN_BLOCK_USER : TURN_BLOCK_ASSISTANT,
                 (const char *)joined.data, joined.len, m->at_ms);
      turn_buf_reset(&joined);
      in_text = false;
    }
    json_t *text = json_object_get(blk, "text");
    if (is_text && json_is_string(text)) {
      if (turn_buf_append(&joined, json_string_value(text), json_string_length(text)))
        b->rc = -1;
      in_text = true;
    } else if (strcmp(type, "thinking") == 0) {
      json_t *t = json_object_get(blk, "thinking");
      if (json_is_string(t))
        text_block(b, TURN_BLOCK_REASONING, json_string_value(t), json_string_length(t),
                   m->at_ms);
    } else if (strcmp(type, "tool_use") == 0) {
      tool_block(b, m, blk);
    } else if (strcmp(type, "tool_result") == 0) {
      const char *id = str_field(blk, "tool_use_id");
      if (id != NULL && !call_shown(b->h, index, m->turn, id)) orphan_block(b, m, blk);
    }
  }
  if (in_text)
    text_block(b, strcmp(role, "user") == 0 ? TURN_BLOCK_USER : TURN_BLOCK_ASSISTANT,
               (const char *)joined.data, joined.len, m->at_ms);
  turn_buf_fini(&joined);
}

int history_blocks(struct history *h, turn_buf *out) {
  struct builder b = {h, out, 0, 0, 0};
  if (turn_buf_append(out, "[", 1) != 0) return -1;
  for (size_t i = 0; i < h->n_messages && b.rc == 0; i++)
    message_blocks(&b, i);
  notices_until(&b, SIZE_MAX, 0, true);
  if (b.rc == 0 && turn_buf_append(out, "]", 1) != 0) b.rc = -1;
  return b.rc;
}
