/* POST /api/approvals/<request> {"decision": "approved" | "rejected"}: the only
 * way a tier-2 call gets through. 204 taken, 409 decided or expired, 404 unknown. */
#include "http_body.h"
#include "http_error.h"
#include "routes.h"
#include "run.h"
#include "server.h"

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
  if (rv == 0)
    evhttp_send_reply(req, 204, "No Content", NULL);
  else
    http_error_send(req, rv > 0 ? HTTP_E_DECIDED : HTTP_E_UNKNOWN_REQUEST);
}
