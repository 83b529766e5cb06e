/* POST /api/approvals/<request> {"decision": "approved" | "rejected", "pin"?}:
 * the only way a tier-2 call gets through. 204 taken, 409 decided or expired
 * (also for an approval of a turn that is only in the store now: it ended, so
 * its approvals are over), 404 unknown; approving while locked is 423. Approving a call
 * whose effect needs the step-up takes the owner's PIN: 403 without it or when wrong,
 * and 409 while no PIN exists (the call waits: the owner may set one and approve
 * again). */
#include "auth/auth.h"
#include "daemon.h"
#include "http_body.h"
#include "http_error.h"
#include "routes.h"
#include "run/run.h"
#include "server.h"
#include "step_up.h"
#include "store/store.h"

#include <event2/http.h>
#include <string.h>

struct asked {
  const char *request;
  turn_arena arena;
  bool found;
};

static int find_approval(void *ctx, const char *turn, uint64_t first_seq, uint64_t n,
                         uint64_t at_ms, const char *lines, size_t len) {
  (void)turn;
  (void)first_seq;
  (void)n;
  (void)at_ms;
  struct asked *a = ctx;
  for (const char *p = lines, *end = lines + len; p < end && !a->found;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t line = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
    turn_event ev;
    turn_error err;
    turn_arena_reset(&a->arena);
    if (turn_event_parse(&ev, &a->arena, p, line, &err) == TURN_OK &&
        ev.type == TURN_EV_APPROVAL && ev.approval.request.len == strlen(a->request) &&
        memcmp(ev.approval.request.p, a->request, ev.approval.request.len) == 0)
      a->found = true;
    p += line + 1;
  }
  return a->found ? 1 : 0;
}

/* Whether request was asked by a turn that is only in the store now (it has
 * ended, so the approval is over). */
static bool stored_request(struct turnd *d, const char *request) {
  char turn[64];
  if (run_request_turn(request, turn, sizeof turn) != 0) return false;
  struct asked a = {request, {0}, false};
  turn_arena_init(&a.arena, NULL);
  store_turn_events_each(d->store, turn, 0, find_approval, &a);
  turn_arena_fini(&a.arena);
  return a.found;
}

void route_approval_decide(struct server *s, struct evhttp_request *req,
                           const char *const *params) {
  json_t *body = http_body_json(req);
  if (body == NULL) return;
  const char *decision = json_string_value(json_object_get(body, "decision"));
  json_t *pin = json_object_get(body, "pin");
  int d = decision == NULL                    ? -1
          : strcmp(decision, "approved") == 0 ? TURN_DECISION_APPROVED
          : strcmp(decision, "rejected") == 0 ? TURN_DECISION_REJECTED
                                              : -1;
  if (d < 0 || (pin != NULL &&
                (!json_is_string(pin) || json_string_length(pin) > CREDENTIAL_PIN_MAX))) {
    json_decref(body);
    http_error_send_why(req, HTTP_E_BAD_REQUEST,
                        d < 0 ? "decision must be \"approved\" or \"rejected\""
                              : "pin must be a string of at most 128 bytes");
    return;
  }
  if (s->d->guard_view.locked && d == TURN_DECISION_APPROVED) {
    /* The owner is away: nothing is approved. A no makes nothing happen, so it
     * stays open. */
    json_decref(body);
    http_error_send(req, HTTP_E_LOCKED);
    return;
  }
  struct run *r = run_of_request(s->d, params[0]);
  if (r != NULL && d == TURN_DECISION_APPROVED &&
      run_approval_of(r, params[0]) == AGENT_APPROVAL_STEP_UP) {
    /* No PIN: asking for one would send the owner after something that does
     * not exist yet. Checked first, so the answer is the same with or without
     * a "pin", and says how to make one. */
    int pin_set = guard_pin_set(s->d);
    if (pin_set == 0)
      http_error_send_variant(req, HTTP_EV_PIN_NOT_SET_APPROVE);
    else if (pin_set < 0)
      http_error_send(req, HTTP_E_INTERNAL);
    else if (pin == NULL)
      http_error_send(req, HTTP_E_STEP_UP_REQUIRED);
    else
      step_up_begin(s->d, req, STEP_UP_APPROVE, params[0], json_string_value(pin),
                    json_string_length(pin));
    json_decref(body);
    return;
  }
  json_decref(body);
  int rv = r != NULL ? run_decide(r, params[0], (turn_decision)d) : -1;
  if (r == NULL && stored_request(s->d, params[0])) rv = 1;
  if (rv == 0)
    evhttp_send_reply(req, 204, "No Content", NULL);
  else
    http_error_send(req, rv > 0 ? HTTP_E_DECIDED : HTTP_E_UNKNOWN_REQUEST);
}
