/* A request waiting for its PIN check; see step_up.h. */
#include "step_up.h"

#include "auth/auth.h"
#include "conn_watch.h"
#include "daemon.h"
#include "http_error.h"
#include "http_reply.h"
#include "run/run.h"

#include <event2/http.h>
#include <stdlib.h>
#include <string.h>

struct step_up_wait {
  struct turnd *d;
  struct evhttp_request *req;     /* answered (which frees it) in finish() */
  struct evhttp_connection *conn; /* req's, NULL once closed; its close callback
                                     is ours meanwhile */
  enum step_up_goal goal;
  char request[64]; /* STEP_UP_APPROVE: the approval */
};

/* The client left. libevent 2.1 leaves an unanswered request to its owner (see
 * run.c): answering it in finish() is what frees it. */
static void on_close(struct evhttp_connection *conn, void *arg) {
  (void)conn;
  struct step_up_wait *w = arg;
  w->conn = NULL;
}

/* Answers 204, or the error e when ok is false, and frees w. To a client that
 * left, the answer goes nowhere, but sending it frees the request. */
static void finish(struct step_up_wait *w, bool ok, enum http_error e, unsigned retry_s) {
  if (w->conn != NULL) conn_watch_set_closecb(w->conn, NULL, NULL);
  if (ok) {
    evhttp_send_reply(w->req, 204, "No Content", NULL);
  } else {
    if (retry_s > 0) http_reply_retry_after(w->req, retry_s);
    http_error_send(w->req, e);
  }
  free(w);
}

static void on_checked(void *ctx, enum guard_pin result) {
  struct step_up_wait *w = ctx;
  bool passed = result == GUARD_PIN_OK;
  if (result != GUARD_PIN_OK && result != GUARD_PIN_WRONG) {
    finish(w, false, HTTP_E_INTERNAL, 0);
  } else if (w->goal == STEP_UP_APPROVE && passed && w->d->guard_view.locked) {
    /* Locked while the PIN was checked: nothing is approved; the call waits. */
    finish(w, false, HTTP_E_LOCKED, 0);
  } else if (w->goal == STEP_UP_APPROVE) {
    /* The agent emits the guard event and, when it passed, approves. */
    struct run *r = run_of_request(w->d, w->request);
    if (r == NULL || run_step_up(r, w->request, passed) != 0)
      finish(w, false, HTTP_E_DECIDED, 0); /* it ended or expired meanwhile */
    else
      finish(w, passed, HTTP_E_PIN_WRONG, 0);
  } else if (!passed) {
    finish(w, false, HTTP_E_PIN_WRONG, 0);
  } else {
    finish(w, guard_unlock(w->d) == 0, HTTP_E_INTERNAL, 0);
  }
}

void step_up_begin(struct turnd *d, struct evhttp_request *req, enum step_up_goal goal,
                   const char *request, const char *pin, size_t len) {
  struct step_up_wait *w = calloc(1, sizeof *w);
  if (w == NULL || (request != NULL && strlen(request) >= sizeof w->request)) {
    free(w);
    http_error_send(req, HTTP_E_INTERNAL);
    return;
  }
  w->d = d;
  w->req = req;
  w->goal = goal;
  if (request != NULL) memcpy(w->request, request, strlen(request) + 1);
  unsigned retry_s = 0;
  enum guard_pin started = guard_check_pin(d, pin, len, on_checked, w, &retry_s);
  if (started != GUARD_PIN_OK) {
    finish(w, false,
           started == GUARD_PIN_LOCKED_OUT ? HTTP_E_STEP_UP_LOCKED_OUT
           : started == GUARD_PIN_BUSY     ? HTTP_E_STEP_UP_BUSY
           : started == GUARD_PIN_NOT_SET  ? HTTP_E_PIN_NOT_SET
                                           : HTTP_E_INTERNAL,
           retry_s);
    return;
  }
  w->conn = evhttp_request_get_connection(req);
  conn_watch_set_closecb(w->conn, on_close, w);
}
