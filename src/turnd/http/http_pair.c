/* POST /api/pair {"code": "XXXX-XXXX", "name"?: "..."}: the one route open
 * without a token. A right code, once, gives a new device's token: the only
 * time turnd ever says it. */
#include "agent/history.h"
#include "auth/auth.h"
#include "clock.h"
#include "daemon.h"
#include "http_body.h"
#include "http_error.h"
#include "http_reply.h"
#include "random_hex.h"
#include "routes.h"
#include "server.h"

#include <event2/http.h>
#include <stdio.h>
#include <string.h>

void route_pair(struct server *s, struct evhttp_request *req, const char *const *params) {
  (void)params;
  json_t *body = http_body_json(req);
  if (body == NULL) return;
  const char *code = json_string_value(json_object_get(body, "code"));
  json_t *name_v = json_object_get(body, "name");
  char name[80];
  if (name_v == NULL) {
    char hex[7];
    if (turnd_random_hex(hex, 3) != 0) hex[0] = '\0';
    snprintf(name, sizeof name, "device-%s", hex);
  } else if (json_is_string(name_v) && json_string_length(name_v) < sizeof name &&
             strlen(json_string_value(name_v)) == json_string_length(name_v)) {
    memcpy(name, json_string_value(name_v), json_string_length(name_v) + 1);
  } else {
    name[0] = '\0';
  }
  if (code == NULL || !auth_db_name_ok(name)) {
    json_decref(body);
    http_error_send_why(req, HTTP_E_BAD_REQUEST,
                        code == NULL ? "code must be the pairing code, a string"
                                     : "name must be 1 to 64 bytes without control "
                                       "characters");
    return;
  }
  char token[CREDENTIAL_TOKEN_LEN + 1];
  unsigned retry_s = 0;
  enum auth_pair_result r = auth_pair(s->d, code, name, token, &retry_s);
  json_decref(body);
  switch (r) {
  case AUTH_PAIR_OK: {
    char created[40];
    history_iso8601(turnd_now_ms(), created);
    http_reply_json(req, 200,
                    json_pack("{s:s,s:{s:s,s:s}}", "token", token, "device", "name", name,
                              "created_at", created));
    credential_wipe(token, sizeof token);
    return;
  }
  case AUTH_PAIR_BAD_CODE:
    http_error_send(req, HTTP_E_PAIR_CODE_INVALID);
    return;
  case AUTH_PAIR_LIMITED:
    http_reply_retry_after(req, retry_s);
    http_error_send(req, HTTP_E_TOO_MANY_ATTEMPTS);
    return;
  case AUTH_PAIR_NAME_TAKEN:
    http_error_send(req, HTTP_E_DEVICE_NAME_TAKEN);
    return;
  case AUTH_PAIR_FAILED:
    break;
  }
  http_error_send(req, HTTP_E_INTERNAL);
}
