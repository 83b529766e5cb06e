/* stream_gen: the structure of the stream. Sessions of whole turns, each made of
 * deltas and interleaved tool calls that follow the order rules, encoded by libturn
 * into the NDJSON stream; stream_history.c writes the same turns as history. */
#include "stream_content.h"
#include "stream_history.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------------- messages */

static const char *const progress_templates[] = {
    "downloading page %u of %u",      "running tests: %u/%u passed",
    "compiling unit %u of %u",        "fetched %u of %u results",
    "waiting for the device (%u/%u)", "übertrage Datei %u von %u…",
    "scanning %u of %u folders"};

static const char *const error_messages[] = {
    "model provider returned HTTP 529 (overloaded)",
    "the agent loop stopped: tool process exited with signal 9",
    "store write failed: disk full",
    "Verbindung zum Modell abgebrochen (timeout nach 60 s)"};

static const char *const notice_texts[] = {
    "Das Gerät „Schreibtischlampe“ ist offline.",
    "Your session will be archived in 7 days.",
    "La routine « bonne nuit » a été exécutée.",
    "Guard: step-up required for physical actions after 22:00.",
    "Token budget: 80% of the daily limit used."};

/* ----------------------------------------------------------------- tools */

struct tool {
  const char *name;
  int tier; /* 0-2 or TURN_TIER_NULL (routines, which are exempt) */
  const char *effect;
  enum tool_kind kind;
  uint32_t weight; /* how often the model picks it */
};

static const struct tool tools[] = {
    {"read_file", 0, "read", K_READ, 20},
    {"web_search", 0, "network", K_SEARCH, 16},
    {"shell", 1, "exec", K_SHELL, 14},
    {"write_file", 1, "write", K_WRITE, 10},
    {"calendar_create", 1, "write", K_CALENDAR, 6},
    {"lamp_set", 2, "physical", K_DEVICE, 6},
    {"door_unlock", 2, "physical", K_DEVICE, 2},
    {"send_email", 2, "external", K_EMAIL, 4},
    {"render_ui", 0, "display", K_UI, 8},
    {"routine_run", TURN_TIER_NULL, "physical", K_ROUTINE, 4},
};

static const struct tool *pick_tool(struct rng *r) {
  uint32_t total = 0;
  for (size_t i = 0; i < COUNT(tools); i++)
    total += tools[i].weight;
  uint32_t x = rng_below(r, total);
  for (size_t i = 0; i < COUNT(tools); i++) {
    if (x < tools[i].weight) return &tools[i];
    x -= tools[i].weight;
  }
  return &tools[0];
}

/* ----------------------------------------------------------------- clock */

#define START_S 1790841600u /* 2026-10-01T08:00:00Z */

static void advance(struct gen *g, uint32_t lo_ms, uint32_t hi_ms) {
  g->now_ms += rng_range(&g->rng, lo_ms, hi_ms);
}

/* ------------------------------------------------------------- output */

static void emit(struct gen *g, turn_event ev) {
  if (g->rv != TURN_OK) return;
  struct stream_gen *st = g->st;
  ev.seq = g->seq++;
  if (st->n_events == st->cap_events) {
    size_t cap = st->cap_events == 0 ? 4096 : st->cap_events * 2;
    turn_event *grown = realloc(st->events, cap * sizeof *grown);
    if (grown == NULL) {
      set_rv(g, TURN_E_NOMEM);
      return;
    }
    st->events = grown;
    st->cap_events = cap;
  }
  turn_buf_reset(&g->line);
  int rv = turn_event_encode(&ev, &g->line);
  if (rv == TURN_OK) rv = turn_buf_append(&st->ndjson, g->line.data, g->line.len);
  if (rv == TURN_OK) rv = turn_buf_append(&st->ndjson, "\n", 1);
  if (rv != TURN_OK) {
    set_rv(g, rv);
    return;
  }
  st->events[st->n_events++] = ev;
  st->n_by_type[ev.type]++;
  st->bytes_by_type[ev.type] += g->line.len + 1;
  if (g->line.len > st->max_line) st->max_line = g->line.len;
}

/* ------------------------------------------------------------- events */

static turn_str new_id(struct gen *g, const char *prefix, size_t n_chars) {
  static const char b62[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  char id[64];
  size_t n = strlen(prefix);
  memcpy(id, prefix, n);
  for (size_t i = 0; i < n_chars && n < sizeof id; i++)
    id[n++] = b62[rng_below(&g->rng, 62)];
  g->ids++;
  return keep(g, id, n);
}

static void emit_delta(struct gen *g, turn_event_type type) {
  turn_buf_reset(&g->text);
  if (rng_permille(&g->rng, 900)) append(g, &g->text, " ", 1);
  stream_content_words(g, &g->text,
                       type == TURN_EV_TEXT ? rng_range(&g->rng, 1, 5)
                                            : rng_range(&g->rng, 2, 10));
  uint32_t p = rng_below(&g->rng, 100);
  if (p < 10)
    append(g, &g->text, ".", 1);
  else if (p < 15)
    append(g, &g->text, ",", 1);
  turn_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = type;
  ev.text.delta = keep_buf(g, &g->text);
  append(g, type == TURN_EV_TEXT ? &g->reply : &g->thought, g->text.data, g->text.len);
  advance(g, 5, 80);
  emit(g, ev);
}

static void emit_throttled(struct gen *g) {
  turn_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = TURN_EV_THROTTLED;
  ev.throttled.delay_seconds = (double)rng_range(&g->rng, 1, 16) * 0.25;
  emit(g, ev);
}

static void emit_notice(struct gen *g) {
  const char *text = PICK(&g->rng, notice_texts);
  turn_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = TURN_EV_NOTICE;
  ev.notice.text = keep(g, text, strlen(text));
  emit(g, ev);
  turn_block b;
  memset(&b, 0, sizeof b);
  b.type = TURN_BLOCK_NOTICE;
  b.text.text = ev.notice.text;
  stream_history_add_block(g, b);
}

/* One tool call, stepped one event at a time so calls of a batch interleave:
 * USE -> INPUT -> [APPROVAL -> GUARD* -> DECIDED] -> PROGRESS* -> [WIDGET] -> RESULT */
enum step {
  S_USE,
  S_INPUT,
  S_APPROVAL,
  S_GUARD,
  S_DECIDED,
  S_PROGRESS,
  S_WIDGET,
  S_RESULT,
  S_DONE
};

struct call {
  const struct tool *tool;
  turn_str id, request;
  turn_input input;
  enum step step;
  uint32_t guards_left, progress_left, progress_total;
  turn_decision decision;
  uint64_t started_ms;
};

static void call_init(struct gen *g, struct call *c, const struct tool *t) {
  memset(c, 0, sizeof *c);
  c->tool = t;
  c->step = S_USE;
  c->progress_total = t->kind == K_SHELL || t->kind == K_SEARCH
                          ? rng_range(&g->rng, 0, 8)
                          : rng_range(&g->rng, 0, 2);
  c->progress_left = c->progress_total;
  c->guards_left = rng_permille(&g->rng, 300) ? rng_range(&g->rng, 1, 3) : 0;
  uint32_t d = rng_below(&g->rng, 100);
  c->decision = d < 80   ? TURN_DECISION_APPROVED
                : d < 92 ? TURN_DECISION_REJECTED
                         : TURN_DECISION_TIMEOUT;
}

static enum step after_input(const struct call *c) {
  if (c->progress_left > 0) return S_PROGRESS;
  return c->tool->kind == K_UI ? S_WIDGET : S_RESULT;
}

static void call_result(struct gen *g, struct call *c) {
  turn_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = TURN_EV_TOOL_RESULT;
  ev.tool_result.id = c->id;
  ev.tool_result.tool = (turn_str){c->tool->name, strlen(c->tool->name)};
  turn_status status = TURN_STATUS_OK;
  turn_approval approval = TURN_APPROVAL_NULL;
  if (c->tool->tier == 2) {
    static const turn_approval of_decision[TURN_DECISION__COUNT] = {
        TURN_APPROVAL_APPROVED, TURN_APPROVAL_REJECTED, TURN_APPROVAL_TIMEOUT};
    approval = of_decision[c->decision];
    if (c->decision != TURN_DECISION_APPROVED) status = TURN_STATUS_REJECTED;
  } else if (c->tool->tier == TURN_TIER_NULL) {
    approval = TURN_APPROVAL_EXEMPT;
  }
  if (status == TURN_STATUS_OK && rng_permille(&g->rng, 80)) status = TURN_STATUS_ERROR;
  turn_buf_reset(&g->text);
  if (status == TURN_STATUS_REJECTED) {
    append_c(g, &g->text,
             c->decision == TURN_DECISION_TIMEOUT
                 ? "no decision before the approval expired"
                 : "the owner rejected the call");
  } else if (status == TURN_STATUS_ERROR) {
    appendf(g, &g->text, "%s failed: ", c->tool->name);
    stream_content_words(g, &g->text, rng_range(&g->rng, 3, 12));
  } else {
    appendf(g, &g->text, "%s ok: ", c->tool->name);
    stream_content_words(g, &g->text, rng_range(&g->rng, 3, 40));
    if (rng_permille(&g->rng, 200)) {
      append_c(g, &g->text, "\nstdout:\n");
      stream_content_words_until(g, &g->text,
                                 g->text.len + rng_range(&g->rng, 100, 1500));
    }
  }
  ev.tool_result.summary = keep_buf(g, &g->text);
  ev.tool_result.status = status;
  ev.tool_result.approval = approval;
  advance(g, 50, 3000);
  emit(g, ev);

  turn_block b;
  memset(&b, 0, sizeof b);
  b.type = TURN_BLOCK_TOOL;
  b.tool.id = c->id;
  b.tool.tool = ev.tool_result.tool;
  b.tool.tier = c->tool->tier;
  b.tool.input = c->input;
  b.tool.status = status;
  b.tool.summary = ev.tool_result.summary;
  b.tool.has_summary = true;
  b.tool.approval = approval;
  b.tool.has_duration_ms = true;
  b.tool.duration_ms = (int64_t)(g->now_ms - c->started_ms);
  stream_history_add_block(g, b);
}

/* A call cut short by a cancel: the history knows only what was asked. */
static void call_abandoned(struct gen *g, const struct call *c) {
  if (c->step == S_USE || c->step == S_DONE) return;
  turn_block b;
  memset(&b, 0, sizeof b);
  b.type = TURN_BLOCK_TOOL;
  b.tool.id = c->id;
  b.tool.tool = (turn_str){c->tool->name, strlen(c->tool->name)};
  b.tool.tier = c->tool->tier;
  b.tool.input = c->input; /* empty before tool_input: "input":null, unknown */
  b.tool.status = TURN_STATUS_NULL;
  b.tool.approval = TURN_APPROVAL_NULL;
  stream_history_add_block(g, b);
}

static void call_step(struct gen *g, struct call *c) {
  turn_event ev;
  memset(&ev, 0, sizeof ev);
  turn_str tool = {c->tool->name, strlen(c->tool->name)};
  switch (c->step) {
  case S_USE:
    c->id = new_id(g, "toolu_01", 22);
    c->started_ms = g->now_ms;
    ev.type = TURN_EV_TOOL_USE;
    ev.tool_use.id = c->id;
    ev.tool_use.tool = tool;
    ev.tool_use.tier = c->tool->tier;
    emit(g, ev);
    c->step = S_INPUT;
    return;
  case S_INPUT:
    c->input = stream_content_input(g, c->tool->kind);
    ev.type = TURN_EV_TOOL_INPUT;
    ev.tool_input.id = c->id;
    ev.tool_input.tool = tool;
    ev.tool_input.input = c->input;
    advance(g, 100, 2000);
    emit(g, ev);
    c->step = c->tool->tier == 2 ? S_APPROVAL : after_input(c);
    return;
  case S_APPROVAL:
    c->request = new_id(g, "apr_", 12);
    ev.type = TURN_EV_APPROVAL;
    ev.approval.request = c->request;
    ev.approval.tool = tool;
    ev.approval.tier = 2;
    ev.approval.effect = (turn_str){c->tool->effect, strlen(c->tool->effect)};
    ev.approval.input = c->input;
    ev.approval.has_expires_at = !rng_permille(&g->rng, 100);
    ev.approval.expires_at_s = (double)(g->now_ms / 1000 + 300);
    emit(g, ev);
    c->step = c->guards_left > 0 ? S_GUARD : S_DECIDED;
    return;
  case S_GUARD: {
    static const char *const messages[] = {"Bestätige die Aktion auf deinem Telefon.",
                                           "Step-up sent to Ana's phone",
                                           "waiting for the second factor…"};
    const char *msg = PICK(&g->rng, messages);
    ev.type = TURN_EV_GUARD;
    ev.guard.action = TURN_STR("step_up");
    ev.guard.request = c->request;
    ev.guard.message = keep(g, msg, strlen(msg));
    advance(g, 1000, 20000);
    emit(g, ev);
    if (--c->guards_left == 0) c->step = S_DECIDED;
    return;
  }
  case S_DECIDED:
    ev.type = TURN_EV_APPROVAL_DECIDED;
    ev.approval_decided.request = c->request;
    ev.approval_decided.decision = c->decision;
    advance(g, 2000, 60000);
    emit(g, ev);
    c->step = c->decision == TURN_DECISION_APPROVED ? after_input(c) : S_RESULT;
    return;
  case S_PROGRESS:
    turn_buf_reset(&g->text);
    appendf(g, &g->text, PICK(&g->rng, progress_templates),
            c->progress_total - c->progress_left + 1, c->progress_total);
    ev.type = TURN_EV_TOOL_PROGRESS;
    ev.tool_progress.id = c->id;
    ev.tool_progress.tool = tool;
    ev.tool_progress.message = keep_buf(g, &g->text);
    advance(g, 100, 1500);
    emit(g, ev);
    if (--c->progress_left == 0) c->step = c->tool->kind == K_UI ? S_WIDGET : S_RESULT;
    return;
  case S_WIDGET: {
    turn_buf_reset(&g->text);
    stream_content_words(g, &g->text, rng_range(&g->rng, 2, 5));
    turn_str title = keep_buf(g, &g->text);
    ev.type = TURN_EV_WIDGET;
    ev.widget.id = c->id;
    ev.widget.title = title;
    ev.widget.html = stream_content_html(g, title, rng_range(&g->rng, 300, 6000));
    emit(g, ev);
    turn_block b;
    memset(&b, 0, sizeof b);
    b.type = TURN_BLOCK_WIDGET;
    b.widget.id = ev.widget.id;
    b.widget.title = ev.widget.title;
    b.widget.html = ev.widget.html;
    stream_history_add_block(g, b);
    c->step = S_RESULT;
    return;
  }
  case S_RESULT:
    call_result(g, c);
    c->step = S_DONE;
    return;
  case S_DONE:
    return;
  }
}

/* One to three calls of distinct tools (so each approval names one call), their
 * events interleaved, with a text delta now and then between them. Returns false
 * when the turn was cancelled in the middle. */
static bool tool_batch(struct gen *g, bool may_cancel) {
  struct call calls[3];
  uint32_t x = rng_below(&g->rng, 100);
  size_t n = x < 65 ? 1 : x < 90 ? 2 : 3;
  for (size_t i = 0; i < n; i++) {
    const struct tool *t = pick_tool(&g->rng);
    for (size_t j = 0; j < i; j++)
      if (calls[j].tool == t) {
        t = pick_tool(&g->rng);
        j = (size_t)-1; /* check the new pick against all again */
      }
    call_init(g, &calls[i], t);
  }
  stream_history_flush_text(g);
  size_t open = n;
  while (open > 0 && g->rv == TURN_OK) {
    if (may_cancel && rng_permille(&g->rng, 80)) {
      for (size_t i = 0; i < n; i++)
        call_abandoned(g, &calls[i]);
      return false;
    }
    /* Mostly the oldest open call goes on; sometimes another one does. */
    size_t i = 0;
    while (calls[i].step == S_DONE)
      i++;
    if (rng_permille(&g->rng, 350)) {
      size_t j = rng_below(&g->rng, (uint32_t)n);
      if (calls[j].step != S_DONE) i = j;
    }
    call_step(g, &calls[i]);
    if (calls[i].step == S_DONE) open--;
    if (rng_permille(&g->rng, 40)) emit_delta(g, TURN_EV_TEXT);
    if (rng_permille(&g->rng, 4)) emit_throttled(g);
  }
  stream_history_flush_text(g);
  return true;
}

static void user_block(struct gen *g) {
  turn_buf_reset(&g->text);
  stream_content_words(g, &g->text, rng_range(&g->rng, 3, 40));
  append(g, &g->text, "?", 1);
  turn_block b;
  memset(&b, 0, sizeof b);
  b.type = TURN_BLOCK_USER;
  b.text.text = (turn_str){g->text.data, g->text.len};
  stream_history_add_block(g, b);
}

static void gen_turn(struct gen *g) {
  char id[32];
  int n = snprintf(id, sizeof id, "t-%012llx",
                   (unsigned long long)(rng_next(&g->rng) & 0xffffffffffffULL));
  turn_event ev;
  memset(&ev, 0, sizeof ev);
  g->seq = 0;
  ev.type = TURN_EV_TURN;
  ev.turn.turn = keep(g, id, (size_t)n);
  ev.turn.session = g->session;
  advance(g, 5000, 600000);
  emit(g, ev);
  user_block(g);

  /* How the turn ends: mostly end_turn; some are cancelled in a tool call, some
   * fail with an error event, a few hit a limit. */
  uint32_t fate = rng_below(&g->rng, 1000);
  bool may_cancel = fate < 15;
  bool fails = fate >= 15 && fate < 20;
  turn_stop_reason stop = fate < 25   ? TURN_STOP_END_TURN
                          : fate < 35 ? TURN_STOP_MAX_TOKENS
                          : fate < 40 ? TURN_STOP_LIMIT_TURNS
                                      : TURN_STOP_END_TURN;
  uint32_t rounds = rng_range(&g->rng, 1, 4);
  bool cancelled = false;
  for (uint32_t r = 0; r < rounds && !cancelled && g->rv == TURN_OK; r++) {
    if (rng_permille(&g->rng, r == 0 ? 550 : 300)) {
      for (uint32_t i = rng_range(&g->rng, 2, 24); i > 0; i--)
        emit_delta(g, TURN_EV_REASONING);
      stream_history_flush_text(g);
    }
    for (uint32_t i = rng_range(&g->rng, 4, 64); i > 0; i--)
      emit_delta(g, TURN_EV_TEXT);
    if (r + 1 < rounds) cancelled = !tool_batch(g, may_cancel);
    if (rng_permille(&g->rng, 20)) emit_notice(g);
    if (rng_permille(&g->rng, 5)) emit_throttled(g);
  }
  stream_history_flush_text(g);
  if (fails) {
    const char *msg = PICK(&g->rng, error_messages);
    memset(&ev, 0, sizeof ev);
    ev.type = TURN_EV_ERROR;
    ev.error.message = keep(g, msg, strlen(msg));
    emit(g, ev);
    stop = TURN_STOP_ERROR;
  }
  if (cancelled) stop = TURN_STOP_CANCELLED;
  memset(&ev, 0, sizeof ev);
  ev.type = TURN_EV_END;
  ev.end.stop_reason = stop;
  emit(g, ev);
  g->st->n_turns++;
}

int stream_gen_build(struct stream_gen *st, size_t target_bytes, uint64_t seed) {
  memset(st, 0, sizeof *st);
  turn_arena_init(&st->arena, NULL);
  turn_buf_init(&st->ndjson, SIZE_MAX, NULL);
  turn_buf_init(&st->history, SIZE_MAX, NULL);

  struct gen g;
  memset(&g, 0, sizeof g);
  g.st = st;
  g.rng.s = seed;
  g.now_ms = (uint64_t)START_S * 1000;
  turn_buf_init(&g.line, SIZE_MAX, NULL);
  turn_buf_init(&g.text, SIZE_MAX, NULL);
  turn_buf_init(&g.json, SIZE_MAX, NULL);
  turn_buf_init(&g.reply, SIZE_MAX, NULL);
  turn_buf_init(&g.thought, SIZE_MAX, NULL);
  /* Reserving up front keeps 200 MB of doubling copies out of the build time. */
  if (turn_buf_reserve(&st->ndjson, target_bytes + (1u << 20)) != TURN_OK ||
      turn_buf_reserve(&st->history, target_bytes + (1u << 20)) != TURN_OK)
    set_rv(&g, TURN_E_NOMEM);

  while (st->ndjson.len < target_bytes && g.rv == TURN_OK) {
    uint32_t turns = rng_range(&g.rng, 1, 8); /* turns in this session */
    stream_history_begin(&g, turns);
    for (uint32_t i = 0; i < turns && g.rv == TURN_OK; i++)
      gen_turn(&g);
    stream_history_end(&g);
  }

  turn_buf_fini(&g.line);
  turn_buf_fini(&g.text);
  turn_buf_fini(&g.json);
  turn_buf_fini(&g.reply);
  turn_buf_fini(&g.thought);
  if (g.rv != TURN_OK) stream_gen_free(st);
  return g.rv;
}

void stream_gen_free(struct stream_gen *st) {
  free(st->events);
  free(st->docs);
  free(st->blocks);
  turn_buf_fini(&st->ndjson);
  turn_buf_fini(&st->history);
  turn_arena_fini(&st->arena);
  memset(st, 0, sizeof *st);
}
