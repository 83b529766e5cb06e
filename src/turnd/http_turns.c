/* The turn routes: start a turn and stream it, follow a turn from a seq, cancel
 * a turn. Streaming answers belong to run.c's followers once started. */
#include "daemon.h"
#include "http_body.h"
#include "http_error.h"
#include "routes.h"
#include "run.h"
#include "server.h"
#include "session.h"

#include <errno.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
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
  json_t *body = http_body_json(req);
  if (body == NULL) return;
  json_t *text = json_object_get(body, "text");
  json_t *sid = json_object_get(body, "session");
  if (!json_is_string(text) || !has_text(json_string_value(text)) ||
      json_string_length(text) > TEXT_MAX ||
      strlen(json_string_value(text)) != json_string_length(text) ||
      (sid != NULL && !json_is_string(sid))) {
    json_decref(body);
    http_error_send(req, HTTP_E_BAD_REQUEST);
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
    session = session_create(s->d, json_string_value(text));
  }
  struct run *r =
      session != NULL ? run_start(s->d, session, json_string_value(text)) : NULL;
  json_decref(body);
  if (r == NULL || run_follow(r, req, 0) != 0) http_error_send(req, HTTP_E_INTERNAL);
}

/* GET /api/turns/<turn>?after=<seq> */
void route_turn_follow(struct server *s, struct evhttp_request *req,
                       const char *const *params) {
  struct run *r = run_find(s->d, params[0]);
  if (r == NULL) {
    http_error_send(req, HTTP_E_UNKNOWN_TURN);
    return;
  }
  uint64_t next = 0;
  const char *query = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req));
  if (query != NULL) {
    struct evkeyvalq args;
    if (evhttp_parse_query_str(query, &args) != 0) {
      http_error_send(req, HTTP_E_BAD_REQUEST);
      return;
    }
    const char *after = evhttp_find_header(&args, "after");
    bool ok = true;
    if (after != NULL) {
      char *end;
      errno = 0;
      unsigned long long v = strtoull(after, &end, 10);
      ok = after[0] >= '0' && after[0] <= '9' && *end == '\0' && errno == 0 &&
           v < UINT64_MAX;
      next = v + 1;
    }
    evhttp_clear_headers(&args);
    if (!ok) {
      http_error_send(req, HTTP_E_BAD_REQUEST);
      return;
    }
  }
  if (run_follow(r, req, next) != 0) http_error_send(req, HTTP_E_INTERNAL);
}

/* POST /api/turns/<turn>/cancel: 204, also for a turn that has ended. */
void route_turn_cancel(struct server *s, struct evhttp_request *req,
                       const char *const *params) {
  struct run *r = run_find(s->d, params[0]);
  if (r == NULL) {
    http_error_send(req, HTTP_E_UNKNOWN_TURN);
    return;
  }
  run_cancel(r);
  evhttp_send_reply(req, 204, "No Content", NULL);
}
