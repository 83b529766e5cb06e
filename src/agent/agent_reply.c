/* The model's reply, as the agent core takes it (state MODEL): each model
 * event (model.h) becomes at most one protocol event. Text and reasoning deltas
 * of an external model are coalesced within a window; tool calls are added as
 * they start and their inputs made canonical as they end; a throttle waits and
 * tries again; the reply's stop says whether its calls run. */
#include "agent_impl.h"

#include "json_short.h"
#include "tools_demo.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of text one event of a provider's carries. Escaped, a byte can take six
 * (\u001f), and a line must stay within the 1 MiB NDJSON readers take by default
 * (libturn's TURN_READER_DEFAULT_MAX_LINE, hence turn and turncheck). */
#define TEXT_EVENT_MAX (160u << 10)
#define MAX_RETRIES    5 /* throttled attempts of one call before it fails */

/* A new call of the reply, from the model's id and name. Returns it, or NULL
 * when out of memory or past AGENT_MAX_CALLS. */
static struct agent_call *call_add(struct agent *a, const char *id, const char *name) {
  if (a->n_calls == AGENT_MAX_CALLS) return NULL;
  if (a->n_calls == a->cap_calls) {
    size_t cap = a->cap_calls == 0 ? 2 : a->cap_calls * 2;
    struct agent_call *grown = realloc(a->calls, cap * sizeof *grown);
    if (grown == NULL) return NULL;
    a->calls = grown;
    a->cap_calls = cap;
  }
  struct agent_call *c = &a->calls[a->n_calls];
  memset(c, 0, sizeof *c);
  c->id = strdup(id);
  c->name = strdup(name);
  if (c->id == NULL || c->name == NULL) {
    free(c->id);
    free(c->name);
    return NULL;
  }
  a->n_calls++;
  if (a->tools != NULL) {
    const struct tool_def *def = toolset_find(a->tools, name);
    c->tier = def != NULL ? def->tier : TURN_TIER_NULL;
  } else {
    const struct demo_tool *tool = demo_tool_find(name);
    c->tier = tool != NULL ? tool->tier : TURN_TIER_NULL;
  }
  return c;
}

/* The model call failed for good: a notice tells the owner, then the end. */
static void call_failed(struct agent *a, struct agent_action *out, const char *why,
                        size_t len) {
  if (len == SIZE_MAX) len = strlen(why);
  /* At most 200 bytes of it, cut between characters (the notice is UTF-8). */
  size_t cut = turn_utf8_cut(why, len, 200);
  char buf[300];
  snprintf(buf, sizeof buf, "The model call failed: %.*s", (int)cut, why);
  agent_notice(out, agent_text(a, buf, strlen(buf)));
  a->stop = TURN_STOP_ERROR;
  a->end_why = "the model call failed";
  agent_set_state(a, AGENT_S_END);
}

/* Seconds before throttled attempt n (from 1) starts again, when the provider
 * did not say: 1, 2, 4, 8, 16 s, each with up to a quarter more, spread by the
 * turn's id so that turns throttled together do not come back together. */
static double backoff_s(const struct agent *a, unsigned n) {
  unsigned spread = 0;
  for (const char *p = a->turn_id; *p != '\0'; p++)
    spread = spread * 31u + (unsigned char)*p;
  spread = (spread + n * 2654435761u) % 1000u;
  return (double)(1u << (n - 1)) * (1.0 + (double)spread / 4000.0);
}

/* a + b, or UINT64_MAX past it: a provider's counts are its word, and a wrapped
 * sum would slip under the token budget. */
static uint64_t add_capped(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The reply is complete: its calls run, unless it was cut at max_tokens, the
 * token budget is spent, or the provider's policy stopped it (then it is not
 * the reply the model meant to give, and the turn ends after it). */
static void reply_done(struct agent *a, enum model_stop stop, struct agent_action *out) {
  convo_finish(&a->convo);
  a->tokens_in = add_capped(a->tokens_in, a->call_in);
  a->tokens_out = add_capped(a->tokens_out, a->call_out);
  a->call_in = a->call_out = 0;
  /* A server that counts nothing (one that ignores stream_options) would let
   * the budget pass unseen: the owner is told, once a turn. */
  if (a->external && a->limits.max_total_tokens > 0 && !a->call_counted &&
      !a->uncounted_told)
    a->uncounted_due = true;
  if (!a->explicit_stop)
    a->stop = stop == MODEL_STOP_MAX_TOKENS ? TURN_STOP_MAX_TOKENS : TURN_STOP_END_TURN;
  a->tool = 0;
  if (a->limits.max_total_tokens > 0 &&
      add_capped(a->tokens_in, a->tokens_out) >= a->limits.max_total_tokens) {
    a->stop = TURN_STOP_LIMIT_TOTAL_TOKENS;
    a->skip_calls = "not run: the turn reached its token limit";
  } else if (stop == MODEL_STOP_REFUSED) {
    a->skip_calls = "not run: the provider stopped the reply";
  }
  /* The calls that do not run each get a result that says so, so the turn ends
   * with none open (the reply itself stays): those of a reply cut at max_tokens
   * (the last may not even be whole) as the turn ends, the others here. */
  agent_set_state(a, a->n_calls > 0 && a->stop != TURN_STOP_MAX_TOKENS ? AGENT_S_TOOLS
                                                                       : AGENT_S_END);
  if (a->stop == TURN_STOP_MAX_TOKENS)
    a->end_why = "the reply was cut at the output limit";
  /* The protocol has no stop reason for a policy's stop, and a reply that
   * stops midway without a word reads as the model's own choice. */
  if (stop == MODEL_STOP_REFUSED)
    agent_notice(
        out, str_of("The model's provider stopped this reply under its content policy."));
  else
    agent_go_on(out);
}

/* A tool call's input as everyone sees it from then on (the tool, the owner,
 * the conversation): the model's text parsed and written out again compactly,
 * so a tool reads one line of JSON holding exactly the value its schema check
 * passed. Text that does not parse, or that repeats a key (parsers disagree on
 * which one wins), is kept as it came, and the check refuses it. NULL when out
 * of memory. */
static char *canonical_input(const char *text, size_t len) {
  if (len == 0) return strdup("{}");
  json_t *v = json_loadb(text, len, INPUT_JSON_FLAGS, NULL);
  char *out = v != NULL ? json_dumps_shortest(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
  json_decref(v);
  return out != NULL ? out : strndup(text, len);
}

/* Whether deltas are held at now_ms. The clock is the wall clock, which can be
 * set back: a window that ends further off than a whole window from now is
 * over, or text would wait for as long as the clock went back. */
static bool in_window(const struct agent *a, uint64_t now_ms) {
  return now_ms < a->window_end_ms && a->window_end_ms - now_ms <= a->limits.coalesce_ms;
}

/* Whether a delta at now_ms belongs to the burst of the one before: it came
 * within a window of it. One that comes later is the first of a new burst and
 * goes at once, even if held text went out since and opened a window of its
 * own: a provider that fell behind and caught up in a rush, then went on at
 * its pace, is not held back all along. (A clock set back counts as soon.) */
static bool in_burst(const struct agent *a, uint64_t now_ms) {
  return a->last_delta_ms != 0 &&
         (now_ms < a->last_delta_ms || now_ms - a->last_delta_ms < a->limits.coalesce_ms);
}

/* Sends the held text as one event, or its first TEXT_EVENT_MAX bytes or so (cut
 * between characters) when there is more: the rest goes at the next step, and
 * the next window starts once all of it is out. */
void agent_flush_held(struct agent *a, uint64_t now_ms, struct agent_action *out) {
  size_t n = turn_utf8_cut(a->held.data, a->held.len, TEXT_EVENT_MAX);
  agent_emit(out, a->held_kind == MODEL_EV_TEXT ? TURN_EV_TEXT : TURN_EV_REASONING);
  out->ev.text.delta = agent_text(a, (const char *)a->held.data, n);
  memmove(a->held.data, a->held.data + n, a->held.len - n);
  a->held.len -= n;
  a->window_end_ms = a->held.len > 0 ? now_ms : now_ms + a->limits.coalesce_ms;
}

/* Whether the turn has had a call with this id. */
static bool call_id_used(const struct agent *a, const char *id) {
  if (a->call_ids.len == 0) return false;
  const char *p = a->call_ids.data, *end = p + a->call_ids.len;
  for (; p < end; p += strlen(p) + 1)
    if (strcmp(p, id) == 0) return true;
  return false;
}

/* One model event of the current call: at most one protocol event. */
void agent_reply_take(struct agent *a, const struct model_event *ev, uint64_t now_ms,
                      struct agent_action *out) {
  switch (ev->kind) {
  case MODEL_EV_TEXT:
  case MODEL_EV_REASONING: {
    turn_str delta = agent_text(a, ev->text, ev->len);
    if (ev->kind == MODEL_EV_TEXT)
      convo_text(&a->convo, delta, now_ms);
    else
      convo_thinking(&a->convo, delta, now_ms);
    /* A provider's deltas that come soon after the last one sent wait for the
     * window to end and go out together: a fast model's tiny deltas would
     * otherwise cost every client an event each. The first of a burst goes at
     * once. (The script's are its test's to count: never held.) */
    bool held = a->external && a->limits.coalesce_ms > 0 && in_window(a, now_ms) &&
                in_burst(a, now_ms);
    a->last_delta_ms = now_ms;
    if (held && turn_buf_append(&a->held, delta.p, delta.len) == 0) {
      a->held_kind = ev->kind;
      agent_go_on(out);
      return;
    }
    /* Nothing is held here (see agent_reply_step). A delta too big for one event
     * goes out in pieces. */
    if (a->external && delta.len > TEXT_EVENT_MAX &&
        turn_buf_append(&a->held, delta.p, delta.len) == 0) {
      a->held_kind = ev->kind;
      agent_flush_held(a, now_ms, out);
      return;
    }
    agent_emit(out, ev->kind == MODEL_EV_TEXT ? TURN_EV_TEXT : TURN_EV_REASONING);
    out->ev.text.delta = delta;
    a->window_end_ms = now_ms + a->limits.coalesce_ms;
    return;
  }
  case MODEL_EV_SIGNATURE:
    convo_signature(&a->convo, (turn_str){ev->text, ev->len});
    agent_go_on(out);
    return;
  case MODEL_EV_TOOL_DELTA: /* nothing to show: the input goes out whole, at its end */
    agent_go_on(out);
    return;
  case MODEL_EV_USAGE:
    a->call_in = ev->input_tokens;
    a->call_out = ev->output_tokens;
    a->call_counted = true;
    agent_go_on(out);
    return;
  case MODEL_EV_TOOL_START: {
    /* Unique in the turn, as the protocol wants. A provider's own id is kept
     * unless the turn used it already: some servers number a reply's calls from
     * 0 (Kimi's "functions.clock:0"), or send none. Those get one made of the
     * characters every provider takes back ([A-Za-z0-9_-]) if the session
     * changes provider. */
    char made[64];
    const char *id = ev->id;
    if (id == NULL || id[0] == '\0' || call_id_used(a, id)) {
      do
        snprintf(made, sizeof made, "call_%.40s_%zu", a->turn_id, ++a->tools_used);
      while (call_id_used(a, made));
      id = made;
    }
    struct agent_call *c = call_add(a, id, ev->name);
    if (c == NULL) {
      agent_notice(out, str_of("The model asked for too many tool calls at once."));
      a->stop = TURN_STOP_ERROR;
      a->end_why = "the model asked for too many tool calls at once";
      agent_set_state(a, AGENT_S_END);
      return;
    }
    /* Past CALL_IDS_CAP (thousands of calls) a repeat is no longer caught. */
    (void)turn_buf_append(&a->call_ids, c->id, strlen(c->id) + 1);
    agent_emit(out, TURN_EV_TOOL_USE);
    out->ev.tool_use.id = str_of(c->id);
    out->ev.tool_use.tool = str_of(c->name);
    out->ev.tool_use.tier = c->tier;
    return;
  }
  case MODEL_EV_TOOL_END: {
    if (ev->index >= a->n_calls || a->calls[ev->index].input != NULL) {
      call_failed(a, out, "the model ended a tool call it never started", SIZE_MAX);
      return;
    }
    struct agent_call *c = &a->calls[ev->index];
    c->input = canonical_input(ev->text, ev->len);
    if (c->input == NULL) {
      call_failed(a, out, "out of memory", SIZE_MAX);
      return;
    }
    convo_tool_use(&a->convo, c->id, c->name, c->input, now_ms);
    agent_emit(out, TURN_EV_TOOL_INPUT);
    out->ev.tool_input.id = str_of(c->id);
    out->ev.tool_input.tool = str_of(c->name);
    out->ev.tool_input.input = agent_call_input(a, c);
    return;
  }
  case MODEL_EV_STOP:
    reply_done(a, ev->stop, out);
    return;
  case MODEL_EV_ERROR:
    /* The same call again says again what this attempt said, text aside (it
     * stays said): a call it began would be begun twice, so that fails instead,
     * as the shell fails a throttle once anything was said. */
    if (ev->throttled && a->retries < MAX_RETRIES && a->n_calls == 0) {
      a->retries++;
      double delay_s =
          ev->retry_after_s >= 0 ? ev->retry_after_s : backoff_s(a, a->retries);
      agent_emit(out, TURN_EV_THROTTLED);
      out->ev.throttled.delay_seconds = delay_s;
      a->pending_wait_ms = (uint64_t)(delay_s * 1000.0);
      agent_set_state(a, AGENT_S_RETRY);
      return;
    }
    call_failed(a, out, ev->text != NULL ? ev->text : "", ev->text != NULL ? ev->len : 0);
    return;
  }
}

/* MODEL, with an external model: the model event in the inbox, or what is held
 * once it is due, or a wait for either. */
void agent_reply_step(struct agent *a, uint64_t now_ms, struct agent_action *out) {
  /* What is held goes before anything else: before an event of another kind,
   * once its window is over (a delta of its kind that came then goes with
   * it, after it), and before a delta that would not fit with it. */
  if (a->held.len > 0 && (!in_window(a, now_ms) ||
                          (a->has_inbox && (a->inbox.kind != a->held_kind ||
                                            a->held.len + a->inbox.len > HELD_CAP)))) {
    if (a->has_inbox && a->inbox.kind == a->held_kind &&
        a->held.len + a->inbox.len <= HELD_CAP &&
        turn_buf_append(&a->held, a->inbox.text, a->inbox.len) == 0) {
      turn_str delta = {a->inbox.text, a->inbox.len};
      if (a->held_kind == MODEL_EV_TEXT)
        convo_text(&a->convo, delta, now_ms);
      else
        convo_thinking(&a->convo, delta, now_ms);
      a->has_inbox = false;
      a->last_delta_ms = now_ms;
    }
    agent_flush_held(a, now_ms, out);
    return;
  }
  if (!a->has_inbox) {
    out->kind = AGENT_AWAIT_MODEL;
    out->wait_ms = a->held.len > 0 ? a->window_end_ms - now_ms : 0;
    return;
  }
  a->has_inbox = false;
  agent_reply_take(a, &a->inbox, now_ms, out);
}
