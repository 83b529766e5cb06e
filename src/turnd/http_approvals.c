/* POST /api/approvals/<request> {"decision": "approved" | "rejected"}: the only
 * way a tier-2 call gets through. 204 taken, 409 decided or expired (also for a
 * turn that is only in the store now: it ended, so its approvals are over), 404
 * unknown. */
#include "daemon.h"
#include "http_body.h"
#include "http_error.h"
#include "routes.h"
#include "run.h"
#include "server.h"
#include "store.h"

#include <event2/http.h>
#include <string.h>

void route_approval_decide(struct server *s, struct evhttp_request *req,
                           const char *const *params) {
  json_t *body = http_body_json(req);
  if (body == NULL) return;
  const char *decision = json_string_value(json_object_get(body, "decision"));
  int d = decision == NULL                    ? -1
          : strcmp(decision, "approved") == 0 ? TURN_DECISION_APPROVED
          : strcmp(decision, "rejected") == 0 ? TURN_DECISION_REJECTED
                                              : -1;
  json_decref(body);
  if (d < 0) {
    http_error_send(req, HTTP_E_BAD_REQUEST);
    return;
  }
  struct run *r = run_of_request(s->d, params[0]);
  int rv = r != NULL ? run_decide(r, params[0], (turn_decision)d) : -1;
  char turn[64], session[64];
  if (r == NULL && run_request_turn(params[0], turn, sizeof turn) == 0 &&
      store_turn_find(s->d->store, turn, session, sizeof session) == 1)
    rv = 1;
  if (rv == 0)
    evhttp_send_reply(req, 204, "No Content", NULL);
  else
    http_error_send(req, rv > 0 ? HTTP_E_DECIDED : HTTP_E_UNKNOWN_REQUEST);
}
