/* Request dispatch over the route table. Paths are matched segment by segment
 * on the decoded path, so "/api/turns/t-1/cancel" and "/api/turns/t-1" differ
 * by their segment count, not by a prefix test. */
#include "routes.h"

#include "auth/auth.h"
#include "daemon.h"
#include "http_error.h"
#include "server.h"

#include <event2/http.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct route {
  enum evhttp_cmd_type method;
  const char *pattern;
  void (*handle)(struct server *s, struct evhttp_request *req, const char *const *params);
  bool open; /* answered without a paired device's token: pairing only */
};

static const struct route routes[] = {
    {EVHTTP_REQ_GET, "/api/capabilities", route_capabilities, false},
    {EVHTTP_REQ_POST, "/api/turns", route_turn_create, false},
    {EVHTTP_REQ_GET, "/api/turns/*", route_turn_follow, false},
    {EVHTTP_REQ_POST, "/api/turns/*/cancel", route_turn_cancel, false},
    {EVHTTP_REQ_POST, "/api/approvals/*", route_approval_decide, false},
    {EVHTTP_REQ_GET, "/api/sessions", route_sessions_list, false},
    {EVHTTP_REQ_GET, "/api/sessions/*", route_session_get, false},
    {EVHTTP_REQ_POST, "/api/pair", route_pair, true},
    {EVHTTP_REQ_GET, "/api/guard", route_guard_get, false},
    {EVHTTP_REQ_POST, "/api/guard/lock", route_guard_lock, false},
    {EVHTTP_REQ_POST, "/api/guard/unlock", route_guard_unlock, false},
};

#define MAX_SEGMENTS 8

/* Splits path (modified in place) into its segments; false for too many or for an
 * empty segment ("//", a trailing '/'). */
static bool split(char *path, char **seg, size_t *n) {
  *n = 0;
  if (path[0] != '/') return false;
  char *p = path + 1;
  while (*p != '\0') {
    if (*n == MAX_SEGMENTS) return false;
    char *slash = strchr(p, '/');
    if (slash == p) return false;
    seg[(*n)++] = p;
    if (slash == NULL) break;
    *slash = '\0';
    p = slash + 1;
    if (*p == '\0') return false;
  }
  return true;
}

/* Whether the pattern's segments match, collecting the '*' ones. */
static bool match(const char *pattern, char **seg, size_t n, const char **params) {
  char copy[64];
  size_t len = strlen(pattern);
  if (len >= sizeof copy) return false;
  memcpy(copy, pattern, len + 1);
  char *pseg[MAX_SEGMENTS];
  size_t pn;
  if (!split(copy, pseg, &pn) || pn != n) return false;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (strcmp(pseg[i], "*") == 0) {
      if (k == ROUTE_MAX_PARAMS) return false;
      params[k++] = seg[i];
    } else if (strcmp(pseg[i], seg[i]) != 0) {
      return false;
    }
  }
  return true;
}

static const char *method_name(enum evhttp_cmd_type m) {
  switch (m) {
  case EVHTTP_REQ_GET:
    return "GET";
  case EVHTTP_REQ_POST:
    return "POST";
  default:
    return "?";
  }
}

/* Whether host (a Host header, or an Origin's part after its scheme) names
 * this machine's loopback: 127.0.0.1, localhost or [::1], any port. */
static bool names_loopback(const char *host) {
  size_t len = host[0] == '[' ? strcspn(host, "]") + 1 : strcspn(host, ":/");
  if (host[0] == '[' && host[len - 1] != ']') return false;
  static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strlen(names[i]) == len && strncasecmp(host, names[i], len) == 0) return true;
  return false;
}

/* With --no-auth, whoever reaches turnd is the owner, and main lets it listen
 * on loopback only. But a web page the owner opens reaches loopback too,
 * through the owner's browser: a DNS-rebinding page names its own host, and a
 * cross-site request (a text/plain POST needs no preflight) carries its own
 * origin. Those are refused; a program on this machine (curl, turn) names
 * loopback and sends no Origin. */
static bool from_this_machine(struct evhttp_request *req) {
  const struct evkeyvalq *in = evhttp_request_get_input_headers(req);
  const char *host = evhttp_find_header(in, "Host");
  const char *origin = evhttp_find_header(in, "Origin");
  if (host != NULL && !names_loopback(host)) return false;
  if (origin == NULL) return true;
  const char *rest = strstr(origin, "://");
  return rest != NULL && names_loopback(rest + 3);
}

/* Whether req may go on to a route that is not open; answers 401 when not. The
 * check comes before the route is even looked up: without a token, turnd says
 * nothing about which paths exist. */
static bool authorized(struct server *s, struct evhttp_request *req) {
  if (s->d->auth->off && !from_this_machine(req)) {
    http_error_send(req, HTTP_E_NOT_LOOPBACK);
    return false;
  }
  const char *authorization =
      evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
  if (auth_request(s->d, authorization, &s->device)) return true;
  evhttp_add_header(evhttp_request_get_output_headers(req), "WWW-Authenticate", "Bearer");
  http_error_send(req, HTTP_E_UNAUTHORIZED);
  return false;
}

/* Whether the request is for an open route (pairing). */
static bool is_open(enum evhttp_cmd_type method, char **seg, size_t n) {
  for (size_t r = 0; r < sizeof routes / sizeof routes[0]; r++) {
    const char *params[ROUTE_MAX_PARAMS];
    if (routes[r].open && routes[r].method == method &&
        match(routes[r].pattern, seg, n, params))
      return true;
  }
  return false;
}

void routes_dispatch(struct server *s, struct evhttp_request *req) {
  const char *raw = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
  char *path = raw != NULL ? evhttp_uridecode(raw, 0, NULL) : NULL;
  char *seg[MAX_SEGMENTS];
  size_t n;
  if (path == NULL || !split(path, seg, &n)) {
    free(path);
    http_error_send(req, HTTP_E_NOT_FOUND);
    return;
  }
  enum evhttp_cmd_type method = evhttp_request_get_command(req);
  s->device = 0;
  if (!is_open(method, seg, n) && !authorized(s, req)) {
    free(path);
    return;
  }
  char allow[32] = "";
  for (size_t r = 0; r < sizeof routes / sizeof routes[0]; r++) {
    const char *params[ROUTE_MAX_PARAMS] = {NULL, NULL};
    if (!match(routes[r].pattern, seg, n, params)) continue;
    if (routes[r].method == method) {
      routes[r].handle(s, req, params);
      free(path);
      return;
    }
    size_t used = strlen(allow);
    if (used + 8 < sizeof allow) {
      if (used > 0) memcpy(allow + used, ", ", 3), used += 2;
      memcpy(allow + used, method_name(routes[r].method),
             strlen(method_name(routes[r].method)) + 1);
    }
  }
  free(path);
  if (allow[0] != '\0') {
    evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", allow);
    http_error_send(req, HTTP_E_METHOD);
  } else {
    http_error_send(req, HTTP_E_NOT_FOUND);
  }
}
