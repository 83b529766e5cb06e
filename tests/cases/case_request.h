/* A case's HTTP requests: [request] lines, parsed and sent, and [until], which
 * asks turnd the same question again until its answer is the one the case waits
 * for. Each request carries a device's token unless its auth option says
 * otherwise (case_auth.h). */
#ifndef CASE_REQUEST_H
#define CASE_REQUEST_H

#include "case_auth.h"
#include "case_net.h"

#include <stdbool.h>

/* METHOD /PATH [BODY] -> STATUS[, OPTION]... */
struct case_request {
  char method[16];
  char path[2048];
  const char *body;           /* points into the line; NULL for none */
  struct case_stream tmpl;    /* its name, line_no, want_status, drop_after */
  bool background;            /* the case goes on while the answer comes */
  struct case_auth_spec auth; /* whose token it carries, if any */
};

/* Parses arg, which it cuts up (rq->body points into it). Fails the case on a
 * malformed line. */
void case_request_parse(struct case_request *rq, char *arg, unsigned line_no);

/* Sends rq to turnd at base_url and, unless it is background, waits for its
 * whole answer, reading the background ones meanwhile. Returns its stream (owned
 * by net). With net NULL (the first reading) it only tells case_auth what would
 * be sent, and returns NULL. */
struct case_stream *case_request_run(const struct case_request *rq, struct case_net *net,
                                     const char *base_url);

/* [until] GET /PATH CHECK...: until the answer's JSON body passes every check.
 * With net NULL (the first reading) it only parses. */
void case_request_until(const char *arg, unsigned line_no, struct case_net *net,
                        const char *base_url);

#endif
