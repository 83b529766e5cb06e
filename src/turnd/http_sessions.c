/* The session routes: the list of sessions, and one session's history, built by
 * the agent's history rules from the stored messages and recorded events. */
#include "agent/history.h"
#include "daemon.h"
#include "http_error.h"
#include "http_reply.h"
#include "routes.h"
#include "server.h"
#include "session.h"
#include "store.h"

#include <stdlib.h>
#include <string.h>

static json_t *session_json(const struct session *s) {
  char created[25], updated[25];
  history_iso8601(s->created_ms, created);
  history_iso8601(s->updated_ms, updated);
  return json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}", "id", s->id, "title", s->title,
                   "channel", "web", "created_at", created, "updated_at", updated,
                   "message_count", (json_int_t)s->message_count);
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

/* GET /api/sessions/<id>: {"session": {...}, "blocks": [...]} */
void route_session_get(struct server *s, struct evhttp_request *req,
                       const char *const *params) {
  struct session *session = session_find(s->d, params[0]);
  if (session == NULL) {
    http_error_send(req, HTTP_E_UNKNOWN_SESSION);
    return;
  }
  /* The blocks are what the store has committed: everything any reader has been
   * shown, since readers see committed events only, with their messages (a
   * message is queued before the events that follow it). */
  struct history *h = history_new();
  json_t *head = json_pack("{s:o}", "session", session_json(session));
  char *head_text = head != NULL ? json_dumps(head, JSON_COMPACT) : NULL;
  json_decref(head);
  turn_buf doc;
  turn_buf_init(&doc, SIZE_MAX, NULL);
  /* {"session":{...}} becomes {"session":{...},"blocks":[...]} */
  bool ok = h != NULL && head_text != NULL &&
            store_session_events_each(s->d->store, session->id, feed_events, h) == 0 &&
            store_messages_each(s->d->store, session->id, feed_message, h) == 0 &&
            turn_buf_append(&doc, head_text, strlen(head_text) - 1) == 0 &&
            turn_buf_append(&doc, ",\"blocks\":", 10) == 0 &&
            history_blocks(h, &doc) == 0 && turn_buf_append(&doc, "}", 1) == 0;
  free(head_text);
  history_free(h);
  if (ok)
    http_reply_json_text(req, 200, (const char *)doc.data, doc.len);
  else
    http_error_send(req, HTTP_E_INTERNAL);
  turn_buf_fini(&doc);
}
