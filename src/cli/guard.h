/* The owner guard from the command line: `turn lock`, `turn unlock`, and the PIN
 * exchange that unlocking and approving a step-up effect share. */
#ifndef TURN_CLI_GUARD_H
#define TURN_CLI_GUARD_H

#include "http.h"

#include <jansson.h>

#define GUARD_PIN_TRIES 3 /* wrong PINs before the client stops asking */

/* What guard_post_with_pin came to. */
enum guard_outcome {
  GUARD_TAKEN = 0,    /* turnd took the PIN and the request */
  GUARD_REFUSED = -1, /* no PIN given, too many wrong ones, locked out, no answer */
  GUARD_LOCKED = -2   /* turnd is locked (423): it decides nothing until unlocked */
};

/* Asks the PIN and posts body (borrowed JSON object; its "pin" member is set for
 * each try and removed after) to path, again while turnd answers pin_wrong, at
 * most GUARD_PIN_TRIES times. doing names the request for messages ("the
 * approval"). Returns an enum guard_outcome; on any but GUARD_TAKEN the owner
 * has been told why. */
int guard_post_with_pin(const struct http_server *s, const char *path, json_t *body,
                        const char *doing);

/* `turn lock` and `turn unlock`: each returns the exit status, 0 or 1. */
int guard_lock(const struct http_server *s);
int guard_unlock(const struct http_server *s);

#endif
