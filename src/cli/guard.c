/* See guard.h. A wrong PIN is worth another try, and a busy check the same PIN
 * again; anything else turnd says about it (locked out after five in a row,
 * locked, no PIN set) is final here, since asking again could only add to the
 * count that locks the backend. */
#include "guard.h"

#include "interrupt.h"
#include "pin.h"
#include "secret.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ANSWER_MAX (64u << 10) /* bytes: turnd's answers here are a short error */

/* Serialises body with the PIN in it; the text is wiped before it is freed. */
static long post_once(const struct http_server *s, const char *path, json_t *body,
                      const char *pin, struct http_answer *a) {
  json_object_set_new(body, "pin", json_string(pin));
  char *text = json_dumps(body, JSON_COMPACT);
  json_object_del(body, "pin");
  if (text == NULL) return 0;
  long status = http_call(s, "POST", path, text, a);
  secret_wipe(text, strlen(text));
  free(text);
  return status;
}

int guard_post_with_pin(const struct http_server *s, const char *path, json_t *body,
                        const char *doing) {
  struct http_answer a;
  http_answer_init(&a, ANSWER_MAX);
  int rc = GUARD_REFUSED;
  for (int tries = 0; tries < GUARD_PIN_TRIES && !interrupt_seen(); tries++) {
    char pin[PIN_CAP];
    if (pin_ask(pin, sizeof pin) != 0) {
      if (!interrupt_seen()) fprintf(stderr, "turn: no PIN given\n");
      break;
    }
    char code[64], message[256];
    long status = 0;
    for (int busy = 0; busy < GUARD_BUSY_TRIES; busy++) {
      if (busy > 0) sleep(1);
      status = post_once(s, path, body, pin, &a);
      http_error_part(&a, "code", code, sizeof code);
      if (status != 429 || strcmp(code, "step_up_busy") != 0) break;
    }
    secret_wipe(pin, sizeof pin);
    if (status >= 200 && status < 300) {
      rc = GUARD_TAKEN;
      break;
    }
    if (status != 403 || strcmp(code, "pin_wrong") != 0) {
      http_report_answer(s, doing, &a);
      /* Only what the owner can change (no PIN set) ends it with a no; the rest
       * leaves the request as it was. */
      bool final = (status == 409 && strcmp(code, "pin_not_set") == 0) ||
                   (status == 403 && strcmp(code, "step_up_required") == 0);
      /* Decided meanwhile (expired, or by another device): nothing waits. */
      bool gone =
          status == 404 || (status == 409 && strcmp(code, "already_decided") == 0);
      rc = gone ? GUARD_GONE : final ? GUARD_REFUSED : GUARD_WAITING;
      break;
    }
    http_error_part(&a, "message", message, sizeof message);
    size_t len = strlen(message);
    if (len > 0 && message[len - 1] == '.') message[len - 1] = '\0'; /* ours follows */
    if (tries + 1 < GUARD_PIN_TRIES)
      fprintf(stderr, "turn: %s; try again\n", message[0] ? message : "wrong PIN");
    else
      fprintf(stderr, "turn: %s; that was %d tries, giving up\n",
              message[0] ? message : "wrong PIN", GUARD_PIN_TRIES);
  }
  http_answer_fini(&a);
  return rc;
}

int guard_lock(const struct http_server *s) {
  struct http_answer a;
  http_answer_init(&a, ANSWER_MAX);
  /* "{}": a body the route may or may not read, valid either way */
  long status = http_call(s, "POST", "/api/guard/lock", "{}", &a);
  int rc = status >= 200 && status < 300 ? 0 : 1;
  if (rc == 0)
    printf("turnd is locked: nothing runs until `turn unlock` and the PIN\n");
  else
    http_report_answer(s, "locking", &a);
  http_answer_fini(&a);
  return rc;
}

/* Reads GET /api/guard into *locked and *pin_set. Returns 0, or -1 after telling
 * why: asking for a PIN is pointless if the token is refused or nothing is locked. */
static int read_state(const struct http_server *s, bool *locked, bool *pin_set) {
  struct http_answer a;
  http_answer_init(&a, ANSWER_MAX);
  long status = http_call(s, "GET", "/api/guard", NULL, &a);
  json_t *doc = status == 200 ? json_loadb(a.body.data, a.body.len, 0, NULL) : NULL;
  json_t *l = json_object_get(doc, "locked"), *p = json_object_get(doc, "pin_set");
  int rc = json_is_boolean(l) && json_is_boolean(p) ? 0 : -1;
  if (rc == 0) {
    *locked = json_is_true(l);
    *pin_set = json_is_true(p);
  } else if (status != 200) {
    http_report_answer(s, "reading the guard", &a);
  } else {
    fprintf(stderr, "turn: turnd's guard state does not read as one\n");
  }
  json_decref(doc);
  http_answer_fini(&a);
  return rc;
}

int guard_unlock(const struct http_server *s) {
  bool locked, pin_set;
  if (read_state(s, &locked, &pin_set) != 0) return 1;
  if (!locked) {
    printf("turnd is not locked\n");
    return 0;
  }
  if (!pin_set) { /* nothing could unlock it: say what would, not ask for a PIN */
    fprintf(stderr, "turn: turnd has no PIN set: `turnd set-pin` sets one\n");
    return 1;
  }
  json_t *body = json_object();
  if (body == NULL) return 1;
  int outcome = guard_post_with_pin(s, "/api/guard/unlock", body, "unlocking");
  json_decref(body);
  if (outcome != GUARD_TAKEN) return 1;
  printf("turnd is unlocked\n");
  return 0;
}
