/* The owner guard from the command line: `turn lock`, `turn unlock`, and the PIN
 * exchange that unlocking and approving a step-up effect share. */
#ifndef TURN_CLI_GUARD_H
#define TURN_CLI_GUARD_H

#include "http.h"

#include <jansson.h>

#define GUARD_PIN_TRIES  3 /* wrong PINs before the client stops asking */
#define GUARD_BUSY_TRIES 5 /* posts of one PIN while turnd checks another's */

/* What guard_post_with_pin came to. */
enum guard_outcome {
  GUARD_TAKEN = 0,    /* turnd took the PIN and the request */
  GUARD_REFUSED = -1, /* the owner gave no PIN or gave up after wrong ones, or
                         turnd has no PIN to check against */
  GUARD_WAITING = -2, /* turnd could not take it now (locked, locked out after
                         wrong PINs, no answer, a failure): nothing was decided */
  GUARD_GONE = -3     /* the request was decided meanwhile (it expired, or another
                         device answered), or is no longer known */
};

/* Asks the PIN and posts body (borrowed JSON object; its "pin" member is set for
 * each try and removed after) to path, again while turnd answers pin_wrong, at
 * most GUARD_PIN_TRIES times; the same PIN again, after a second, while another
 * device's PIN is being checked (step_up_busy), at most GUARD_BUSY_TRIES times. doing
 * names the request for messages ("the approval"). Returns an enum guard_outcome; on any
 * but GUARD_TAKEN the owner has been told why. */
int guard_post_with_pin(const struct http_server *s, const char *path, json_t *body,
                        const char *doing);

/* `turn lock` and `turn unlock`: each returns the exit status, 0 or 1. */
int guard_lock(const struct http_server *s);
int guard_unlock(const struct http_server *s);

#endif
