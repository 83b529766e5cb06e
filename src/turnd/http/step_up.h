/* Answers that wait for a PIN check: an unlock, or the approval of a call whose
 * effect needs the owner's step-up. The check runs off the loop (auth/auth.h); the
 * answer goes out when it is over, unless the client left meanwhile (what the
 * right PIN asked for is done all the same: the owner proved presence). */
#ifndef TURND_STEP_UP_H
#define TURND_STEP_UP_H

#include <stddef.h>

struct turnd;
struct evhttp_request;

enum step_up_goal {
  STEP_UP_UNLOCK, /* POST /api/guard/unlock */
  STEP_UP_APPROVE /* POST /api/approvals/<request>, approved */
};

/* Checks pin[0..len) for goal (request: the approval's id, else NULL; both
 * copied) and answers req: 204 when it passed, else the error that says why. */
void step_up_begin(struct turnd *d, struct evhttp_request *req, enum step_up_goal goal,
                   const char *request, const char *pin, size_t len);

#endif
