/* The route table: method and path pattern to handler. A '*' in a pattern is one
 * path segment, handed to the handler in order. */
#ifndef TURND_ROUTES_H
#define TURND_ROUTES_H

struct evhttp_request;
struct server;

#define ROUTE_MAX_PARAMS 2

/* Handlers, one per route, in http_<group>.c. */
void route_capabilities(struct server *s, struct evhttp_request *req,
                        const char *const *params);
void route_turn_create(struct server *s, struct evhttp_request *req,
                       const char *const *params);
void route_turn_follow(struct server *s, struct evhttp_request *req,
                       const char *const *params);
void route_turn_cancel(struct server *s, struct evhttp_request *req,
                       const char *const *params);
void route_approval_decide(struct server *s, struct evhttp_request *req,
                           const char *const *params);
void route_sessions_list(struct server *s, struct evhttp_request *req,
                         const char *const *params);
void route_session_get(struct server *s, struct evhttp_request *req,
                       const char *const *params);
void route_pair(struct server *s, struct evhttp_request *req, const char *const *params);
void route_guard_get(struct server *s, struct evhttp_request *req,
                     const char *const *params);
void route_guard_lock(struct server *s, struct evhttp_request *req,
                      const char *const *params);
void route_guard_unlock(struct server *s, struct evhttp_request *req,
                        const char *const *params);

#endif
