/* The owner guard's routes: GET /api/guard (its state), POST /api/guard/lock,
 * POST /api/guard/unlock {"pin": "..."}. Unlocking needs the step-up; locking
 * does not (anyone holding a device may lock), but needs a PIN to exist, or
 * nothing could unlock again. */
#include "auth/auth.h"
#include "daemon.h"
#include "http_body.h"
#include "http_error.h"
#include "http_reply.h"
#include "routes.h"
#include "server.h"
#include "step_up.h"

#include <event2/http.h>
#include <string.h>

void route_guard_get(struct server *s, struct evhttp_request *req,
                     const char *const *params) {
  (void)params;
  struct turnd *d = s->d;
  int pin_set = guard_pin_set(d);
  json_t *effects = json_array();
  for (size_t i = 0; effects != NULL && i < d->guard_view.n_step_up_effects; i++)
    json_array_append_new(effects, json_string(d->guard_view.step_up_effects[i]));
  if (pin_set < 0 || effects == NULL) {
    json_decref(effects);
    http_error_send(req, HTTP_E_INTERNAL);
    return;
  }
  json_t *lock_after =
      d->opt->lock_after_s > 0 ? json_integer(d->opt->lock_after_s) : json_null();
  http_reply_json(req, 200,
                  json_pack("{s:b,s:b,s:o,s:o}", "locked", d->guard_view.locked,
                            "pin_set", pin_set == 1, "lock_after", lock_after,
                            "step_up_effects", effects));
}

void route_guard_lock(struct server *s, struct evhttp_request *req,
                      const char *const *params) {
  (void)params;
  int pin_set = guard_pin_set(s->d);
  if (pin_set != 1) {
    if (pin_set == 0)
      http_error_send_variant(req, HTTP_EV_PIN_NOT_SET_LOCK);
    else
      http_error_send(req, HTTP_E_INTERNAL);
    return;
  }
  if (guard_lock(s->d) != 0) {
    http_error_send(req, HTTP_E_INTERNAL);
    return;
  }
  evhttp_send_reply(req, 204, "No Content", NULL);
}

void route_guard_unlock(struct server *s, struct evhttp_request *req,
                        const char *const *params) {
  (void)params;
  json_t *body = http_body_json(req);
  if (body == NULL) return;
  json_t *pin = json_object_get(body, "pin");
  if (!json_is_string(pin) || json_string_length(pin) > CREDENTIAL_PIN_MAX) {
    json_decref(body);
    http_error_send_why(req, HTTP_E_BAD_REQUEST,
                        "pin must be a string of at most 128 bytes");
    return;
  }
  step_up_begin(s->d, req, STEP_UP_UNLOCK, NULL, json_string_value(pin),
                json_string_length(pin));
  json_decref(body);
}
