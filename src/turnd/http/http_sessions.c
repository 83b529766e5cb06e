/* The session routes: the list of sessions, and one session's history, built by
 * the agent's history rules from the stored messages and recorded events. */
#include "agent/history.h"
#include "daemon.h"
#include "http_error.h"
#include "http_reply.h"
#include "routes.h"
#include "request_build.h"
#include "run/run.h"
#include "server.h"
#include "store/store.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The protocol's session fields, and running_turn: the id of the turn in
 * progress (null when none), so that a client that was not there when it
 * started (another device, a reloaded page) can follow it, cancel it or answer
 * its approval. */
static json_t *session_json(const struct session *s) {
  char created[25], updated[25];
  history_iso8601(s->created_ms, created);
  history_iso8601(s->updated_ms, updated);
  return json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:s?}", "id", s->id, "title", s->title,
                   "channel", "web", "created_at", created, "updated_at", updated,
                   "message_count", (json_int_t)s->message_count, "running_turn",
                   s->running != NULL ? s->running->id : NULL);
}

/* Most recently active first; the id breaks ties so the order is stable. */
static int newest_first(const void *a, const void *b) {
  const struct session *x = *(const struct session *const *)a;
  const struct session *y = *(const struct session *const *)b;
  if (x->updated_ms != y->updated_ms) return x->updated_ms > y->updated_ms ? -1 : 1;
  return strcmp(y->id, x->id);
}

/* GET /api/sessions */
void route_sessions_list(struct server *s, struct evhttp_request *req,
                         const char *const *params) {
  (void)params;
  size_t n = 0;
  for (struct session *x = s->d->sessions; x != NULL; x = x->next)
    n++;
  const struct session **all = malloc((n > 0 ? n : 1) * sizeof *all);
  json_t *list = json_array();
  if (all == NULL || list == NULL) {
    free(all);
    json_decref(list);
    http_error_send(req, HTTP_E_INTERNAL);
    return;
  }
  n = 0;
  for (struct session *x = s->d->sessions; x != NULL; x = x->next)
    all[n++] = x;
  qsort(all, n, sizeof *all, newest_first);
  for (size_t i = 0; i < n; i++)
    json_array_append_new(list, session_json(all[i]));
  free(all);
  http_reply_json(req, 200, json_pack("{s:o}", "sessions", list));
}

static int feed_events(void *ctx, const char *turn, uint64_t first_seq, uint64_t n,
                       uint64_t at_ms, const char *lines, size_t len) {
  (void)first_seq;
  (void)n;
  return history_add_events(ctx, turn, at_ms, lines, len);
}

static int feed_message(void *ctx, uint64_t n, const char *turn, uint64_t at_ms,
                        const char *json) {
  (void)n;
  return history_add_message(ctx, turn, at_ms, json);
}

/* request_build_fn, on the builder's thread: the session's blocks, "[...]",
 * from one snapshot of what the store has committed. That holds every turn a
 * reader has seen end, since readers see a turn's end only once it is
 * committed, with its messages (a message is queued before the events that
 * follow it); a running turn's last events may still wait for their commit. */
static char *history_blocks_text(const void *cfg, const char *session_id) {
  const struct turnd *d = cfg;
  struct history *h = history_new();
  turn_buf doc;
  turn_buf_init(&doc, SIZE_MAX, NULL);
  bool ok = h != NULL &&
            store_reader_history_each(d->request_reader, session_id, feed_events,
                                      feed_message, h) == 0 &&
            history_blocks(h, &doc) == 0 && turn_buf_append(&doc, "", 1) == 0; /* NUL */
  history_free(h);
  if (!ok) {
    turn_buf_fini(&doc);
    return NULL;
  }
  return doc.data; /* malloc'd: turn_buf's default allocator */
}

/* A GET waiting for its blocks: its request and the session part, which is
 * taken when the GET comes (the in-memory session is the loop's). */
struct history_get {
  struct turnd *d;
  struct evhttp_request *req;
  char *head; /* {"session":{...}} */
};

/* The blocks are built: the answer goes. Should the client have gone, libevent
 * only frees the request. When turnd is stopping (the builder hands back what
 * it had), no answer: the loop will not write it, and the server frees the
 * request with its connection. */
static void on_blocks_built(void *owner, char *blocks) {
  struct history_get *g = owner;
  if (g->d->stopping) {
    free(blocks);
    free(g->head);
    free(g);
    return;
  }
  turn_buf doc;
  turn_buf_init(&doc, SIZE_MAX, NULL);
  /* {"session":{...}} becomes {"session":{...},"blocks":[...]} */
  bool ok = blocks != NULL && turn_buf_append(&doc, g->head, strlen(g->head) - 1) == 0 &&
            turn_buf_append(&doc, ",\"blocks\":", 10) == 0 &&
            turn_buf_append(&doc, blocks, strlen(blocks)) == 0 &&
            turn_buf_append(&doc, "}", 1) == 0;
  if (ok)
    http_reply_json_text(g->req, 200, (const char *)doc.data, doc.len);
  else
    http_error_send(g->req, HTTP_E_INTERNAL);
  turn_buf_fini(&doc);
  free(blocks);
  free(g->head);
  free(g);
}

/* GET /api/sessions/<id>: {"session": {...}, "blocks": [...]}. The blocks read
 * and parse the session's whole history, so the builder's thread makes them
 * (request_build.h) and the loop goes on meanwhile. */
void route_session_get(struct server *s, struct evhttp_request *req,
                       const char *const *params) {
  struct session *session = session_find(s->d, params[0]);
  if (session == NULL) {
    http_error_send(req, HTTP_E_UNKNOWN_SESSION);
    return;
  }
  struct history_get *g = calloc(1, sizeof *g);
  json_t *head = json_pack("{s:o}", "session", session_json(session));
  if (g != NULL && head != NULL) g->head = json_dumps(head, JSON_COMPACT);
  json_decref(head);
  if (g == NULL || g->head == NULL) {
    free(g);
    http_error_send(req, HTTP_E_INTERNAL);
    return;
  }
  g->d = s->d;
  g->req = req;
  if (request_builder_submit(s->d->rb, history_blocks_text, session->id, on_blocks_built,
                             g) == NULL) {
    free(g->head);
    free(g);
    http_error_send(req, HTTP_E_INTERNAL);
  }
}
