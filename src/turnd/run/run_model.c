/* A run's calls to an external model (a provider): after a barrier (so that the
 * store holds everything said so far), the builder's thread reads the
 * conversation and makes it the provider's request body (request_build.h); the
 * body is sent, and the answer's model events are fed to the agent one by one,
 * pumping it after each. */
#include "run.h"

#include "agent/convo.h"
#include "daemon.h"
#include "model_http.h"
#include "request_build.h"
#include "store/store.h"
#include "turn/turn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct messages {
  char **json;
  size_t n, cap;
};

static int add_message(void *ctx, uint64_t n, const char *turn, uint64_t at_ms,
                       const char *json) {
  (void)n;
  (void)turn;
  (void)at_ms;
  struct messages *m = ctx;
  char **grown = turn_grow(m->json, m->n, &m->cap, sizeof *grown, 16);
  if (grown == NULL) return -1;
  m->json = grown;
  if ((m->json[m->n] = strdup(json)) == NULL) return -1;
  m->n++;
  return 0;
}

static void messages_free(struct messages *m) {
  for (size_t i = 0; i < m->n; i++)
    free(m->json[i]);
  free(m->json);
}

/* The body for messages[0..n) (borrowed), owned; NULL on failure. */
static char *request_body(const struct turnd *d, char *const *messages, size_t n) {
  const struct model_config *mc = &d->model;
  /* Every tool a model may call, demo and the owner's, as it is told of them. */
  const struct toolset *ts = &d->toolset;
  struct provider_tool *tools = calloc(ts->n + 1, sizeof *tools);
  if (tools == NULL) return NULL;
  for (size_t i = 0; i < ts->n; i++)
    tools[i] = (struct provider_tool){ts->defs[i].name, ts->defs[i].description,
                                      ts->defs[i].input_schema};
  struct provider_request req = {
      .model = mc->model_id,
      .system = mc->system,
      .messages = (const char *const *)messages,
      .n_messages = n,
      .tools = tools,
      .n_tools = ts->n,
      .max_tokens = d->opt->max_tokens,
      .max_completion_tokens = mc->openai_own_api,
  };
  char *body = mc->kind == PROVIDER_ANTHROPIC ? provider_anthropic_body(&req)
                                              : provider_openai_body(&req);
  free(tools);
  return body;
}

char *run_model_request(const void *cfg, const char *session) {
  const struct turnd *d = cfg;
  struct messages m = {NULL, 0, 0};
  char *body = NULL;
  if (store_reader_messages_each(d->request_reader, session, add_message, &m) == 0) {
    /* As stored, after a turn that ended early, the messages may be a shape
     * the provider refuses; on failure they go as they are. */
    if (convo_repair(&m.json, &m.n) == 0) m.cap = m.n;
    body = request_body(d, m.json, m.n);
  }
  messages_free(&m);
  return body;
}

static void feed(struct run *r, const struct model_event *ev) {
  agent_model_event(&r->agent, ev); /* a refusal: the turn already ended */
  run_pump(r);
}

static void on_model_event(void *ctx, const struct model_event *ev) {
  struct run *r = ctx;
  if (ev->kind == MODEL_EV_STOP || ev->kind == MODEL_EV_ERROR)
    r->call = NULL; /* its last event: model_http frees it */
  feed(r, ev);
}

static void call_failed(struct run *r, const char *why) {
  struct model_event ev;
  memset(&ev, 0, sizeof ev);
  ev.kind = MODEL_EV_ERROR;
  ev.text = why;
  ev.len = strlen(why);
  feed(r, &ev);
}

/* The request's body is built (request_build.c): the call starts. */
static void on_request_built(void *owner, char *body) {
  struct run *r = owner;
  r->build = NULL;
  if (r->ended) { /* cannot be: an ending run forgets its job; in case */
    free(body);
    return;
  }
  if (body == NULL) {
    call_failed(r, "turnd could not build the request");
    return;
  }
  const struct model_config *mc = &r->d->model;
  struct model_call_spec spec = {
      .kind = mc->kind,
      .url = mc->url,
      .api_key = mc->api_key,
      .body = body,
      .reply_timeout_s = r->d->opt->reply_timeout_s,
      .stall_timeout_s = r->d->opt->stall_timeout_s,
  };
  r->call = model_call_start(r->d->mh, &spec, on_model_event, r);
  free(body);
  if (r->call == NULL) call_failed(r, "turnd could not start the request");
}

void run_barrier_passed(struct run *r) {
  if (r->ended || r->call != NULL || r->build != NULL) return;
  r->build = request_builder_submit(r->d->rb, run_model_request, r->session->id,
                                    on_request_built, r);
  if (r->build == NULL) call_failed(r, "turnd could not build the request");
}

void run_model_call(struct run *r) {
  if (persist_barrier(r)) run_barrier_passed(r);
}

void run_model_stop(struct run *r) {
  persist_barrier_leave(r);
  if (r->build != NULL) request_job_forget(r->build);
  r->build = NULL;
  if (r->call != NULL) model_call_abort(r->call);
  r->call = NULL;
}
