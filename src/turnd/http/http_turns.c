/* The turn routes: start a turn and stream it, follow a turn from a seq, cancel
 * a turn. A streaming answer, once started, is a run's reader (http_follow.c). */
#include "daemon.h"
#include "http_body.h"
#include "http_error.h"
#include "http_follow.h"
#include "http_replay.h"
#include "routes.h"
#include "run/run.h"
#include "server.h"
#include "store/store.h"

#include <event2/buffer.h>
#include <event2/http.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_MAX (32u * 1024u) /* bytes of one user message */

/* True when s has something besides whitespace. */
static bool has_text(const char *s) {
  for (; *s != '\0'; s++)
    if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') return true;
  return false;
}

/* POST /api/turns {"session"?: id, "text": "..."} */
void route_turn_create(struct server *s, struct evhttp_request *req,
                       const char *const *params) {
  (void)params;
  if (s->d->draining) { /* see on_stop_signal */
    http_error_send(req, HTTP_E_STOPPING);
    return;
  }
  json_t *body = http_body_json(req);
  if (body == NULL) return;
  json_t *text = json_object_get(body, "text");
  json_t *sid = json_object_get(body, "session");
  const char *why = !json_is_string(text) ? "text must be a string"
                    : !has_text(json_string_value(text))
                        ? "text must hold more than white space"
                    : json_string_length(text) > TEXT_MAX ? "text is over 32 KiB"
                    : strlen(json_string_value(text)) != json_string_length(text)
                        ? "text must not hold a NUL character"
                    : sid != NULL && !json_is_string(sid)
                        ? "session must be a session's id, or left out"
                        : NULL;
  if (why != NULL) {
    json_decref(body);
    http_error_send_why(req, HTTP_E_BAD_REQUEST, why);
    return;
  }
  struct session *session;
  if (sid != NULL) {
    session = session_find(s->d, json_string_value(sid));
    if (session == NULL) {
      json_decref(body);
      http_error_send(req, HTTP_E_UNKNOWN_SESSION);
      return;
    }
  } else {
    /* While locked the turn is refused, and its new session keeps nothing of
     * what was sent: a device that may not act does not get to title the
     * owner's sessions. */
    session = session_create(s->d, s->d->guard_view.locked ? "Refused: turnd was locked"
                                                           : json_string_value(text));
    if (session != NULL) persist_session(s->d, session);
  }
  struct run *r =
      session != NULL ? run_start(s->d, session, json_string_value(text)) : NULL;
  json_decref(body);
  /* The request lives as long as its stream; the body's buffer (a whole read
   * chunk, 8 KiB) need not. */
  struct evbuffer *in = evhttp_request_get_input_buffer(req);
  evbuffer_drain(in, evbuffer_get_length(in));
  if (r == NULL || http_follow(r, req, 0, s->device) != 0)
    http_error_send(req, HTTP_E_INTERNAL);
}

/* The seq after "after=" in a raw query (other parameters are ignored): digits
 * only, read before any percent-decoding, so "1%00x" is not taken for 1. Sets
 * *next to after + 1 (0 without after). */
static bool parse_after(const char *query, uint64_t *next) {
  *next = 0;
  for (const char *p = query; p != NULL && *p != '\0';) {
    const char *amp = strchr(p, '&');
    size_t len = amp != NULL ? (size_t)(amp - p) : strlen(p);
    if (len >= 6 && memcmp(p, "after=", 6) == 0) {
      size_t digits = len - 6;
      if (digits == 0 || digits > 19) return false;
      uint64_t v = 0;
      for (size_t i = 6; i < len; i++) {
        if (p[i] < '0' || p[i] > '9') return false;
        v = v * 10 + (uint64_t)(p[i] - '0');
      }
      *next = v + 1;
    }
    p = amp != NULL ? amp + 1 : NULL;
  }
  return true;
}

/* Whether the store knows the turn (one that left memory has ended). */
static bool turn_stored(struct server *s, const char *turn) {
  return store_turn_exists(s->d->store, turn) == 1;
}

/* GET /api/turns/<turn>?after=<seq>: from memory while the turn runs or has just
 * ended, else from the store. A turn that has ended has no seq past its last:
 * an after beyond it is 409 after_past_end with the last seq, not an empty 200
 * a client cannot tell from a stream cut off. (after = the last seq, the end
 * the client has, is an empty 200: nothing follows it.) A running turn may
 * yet reach any after: its reader waits, and is cut off should the turn end
 * short of it (run.c), so that coming back it gets the 409. */
void route_turn_follow(struct server *s, struct evhttp_request *req,
                       const char *const *params) {
  struct run *r = run_find(s->d, params[0]);
  uint64_t n_events = 0; /* stored, of a turn no longer in memory */
  if (r == NULL && store_turn_find(s->d->store, params[0], &n_events) != 1) {
    http_error_send(req, HTTP_E_UNKNOWN_TURN);
    return;
  }
  uint64_t next = 0;
  if (!parse_after(evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req)), &next)) {
    http_error_send_why(req, HTTP_E_BAD_REQUEST, "after must be a seq: 1 to 19 digits");
    return;
  }
  if (r != NULL) n_events = r->n_events;
  if ((r == NULL || r->ended) && next > n_events) {
    http_error_send_with(req, HTTP_E_AFTER_PAST_END, "last_seq",
                         n_events > 0 ? json_integer((json_int_t)(n_events - 1))
                                      : json_null());
    return;
  }
  int rc = r != NULL ? http_follow(r, req, next, s->device)
                     : http_replay_start(s->d, req, params[0], next, s->device);
  if (rc != 0) http_error_send(req, HTTP_E_INTERNAL);
}

/* POST /api/turns/<turn>/cancel: 204, also for a turn that has ended. */
void route_turn_cancel(struct server *s, struct evhttp_request *req,
                       const char *const *params) {
  struct run *r = run_find(s->d, params[0]);
  if (r == NULL && !turn_stored(s, params[0])) {
    http_error_send(req, HTTP_E_UNKNOWN_TURN);
    return;
  }
  if (r != NULL) run_cancel(r); /* a stored turn has ended: nothing to do */
  evhttp_send_reply(req, 204, "No Content", NULL);
}
