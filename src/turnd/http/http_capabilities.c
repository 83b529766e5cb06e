/* GET /api/capabilities: what this backend is. turnd runs its agent in-process
 * and pairs devices, as the protocol's hub does; its one optional page is the
 * owner guard's. */
#include "http_reply.h"
#include "routes.h"

void route_capabilities(struct server *s, struct evhttp_request *req,
                        const char *const *params) {
  (void)s;
  (void)params;
  http_reply_json(req, 200,
                  json_pack("{s:s,s:s,s:[s],s:i}", "backend", "hub", "language", "en",
                            "pages", "guard", "protocol", 1));
}
