/* turnd's HTTP errors: one table makes the status, the stable code name clients
 * compare, and the message, sent as {"error": {"code": ..., "message": ...}}. */
#ifndef TURND_HTTP_ERROR_H
#define TURND_HTTP_ERROR_H

#include <jansson.h>

struct evhttp_request;

#define HTTP_ERRORS(X)                                                                  \
  X(BAD_JSON, 400, "bad_json", "the request body is not valid JSON")                    \
  X(BAD_REQUEST, 400, "bad_request", "the request is missing a field or has a bad one") \
  X(UNAUTHORIZED, 401, "unauthorized", "a paired device's token is required")           \
  X(PAIR_CODE_INVALID, 403, "pair_code_invalid",                                        \
    "the pairing code is wrong, used or expired")                                       \
  X(STEP_UP_REQUIRED, 403, "step_up_required",                                          \
    "approving this needs the owner's PIN: send it in \"pin\" with the decision")       \
  X(PIN_WRONG, 403, "pin_wrong", "the PIN is wrong")                                    \
  X(NOT_LOOPBACK, 403, "not_loopback",                                                  \
    "without auth, only this machine's own programs and pages are served")              \
  X(NOT_FOUND, 404, "not_found", "no such route")                                       \
  X(UNKNOWN_SESSION, 404, "unknown_session", "no session has that id")                  \
  X(UNKNOWN_TURN, 404, "unknown_turn", "no turn has that id")                           \
  X(UNKNOWN_REQUEST, 404, "unknown_request", "no approval request has that id")         \
  X(METHOD, 405, "method_not_allowed", "this route does not take that method")          \
  X(AFTER_PAST_END, 409, "after_past_end",                                              \
    "the turn ended before that seq: re-attach with after at most its last_seq")        \
  X(DECIDED, 409, "already_decided", "the approval was already decided or has expired") \
  X(DEVICE_NAME_TAKEN, 409, "device_name_taken", "a paired device has that name")       \
  X(PIN_NOT_SET, 409, "pin_not_set",                                                    \
    "no PIN is set: the owner sets one with `turnd set-pin --data DIR`")                \
  X(TOO_LARGE, 413, "body_too_large", "the request body is over the limit")             \
  X(LOCKED, 423, "locked", "the backend is locked: unlock it first")                    \
  X(TOO_MANY_ATTEMPTS, 429, "too_many_attempts", "too many wrong pairing codes: wait")  \
  X(STEP_UP_LOCKED_OUT, 429, "step_up_locked_out", "too many wrong PINs: wait")         \
  X(STEP_UP_BUSY, 429, "step_up_busy", "a PIN is being checked: try again")             \
  X(INTERNAL, 500, "internal", "turnd failed to answer")                                \
  X(STOPPING, 503, "stopping", "turnd is stopping: try again once it is back")          \
  X(TOO_MANY_CONNECTIONS, 503, "too_many_connections",                                  \
    "turnd has as many connections open as it takes: try again in a moment")

enum http_error {
#define HTTP_ERROR_ENUM(name, status, code, msg) HTTP_E_##name,
  HTTP_ERRORS(HTTP_ERROR_ENUM)
#undef HTTP_ERROR_ENUM
};

/* A code whose message depends on the route: the code (and so the status) is
 * the one clients compare, the message says what to do next where it happens. */
#define HTTP_ERROR_VARIANTS(X)                                                          \
  X(PIN_NOT_SET_APPROVE, PIN_NOT_SET,                                                   \
    "approving this needs the owner's PIN, and none is set: set one with `turnd "       \
    "set-pin --data DIR` (turnd may go on running), then approve again with it in "     \
    "\"pin\"")                                                                          \
  X(PIN_NOT_SET_LOCK, PIN_NOT_SET,                                                      \
    "locking needs a PIN to unlock with, and none is set: set one with `turnd set-pin " \
    "--data DIR` first")

enum http_error_variant {
#define HTTP_ERROR_VARIANT_ENUM(name, error, msg) HTTP_EV_##name,
  HTTP_ERROR_VARIANTS(HTTP_ERROR_VARIANT_ENUM)
#undef HTTP_ERROR_VARIANT_ENUM
};

/* Answers req with the error's status and JSON body. The message is the table's:
 * nothing of the request is echoed back. */
void http_error_send(struct evhttp_request *req, enum http_error e);
/* The same with a message of turnd's own that says which field is wrong and
 * how (a constant: never text from the request). */
void http_error_send_why(struct evhttp_request *req, enum http_error e, const char *why);
/* The table's error with one more field in "error", key: value (takes value,
 * which is turnd's own: never from the request). */
void http_error_send_with(struct evhttp_request *req, enum http_error e, const char *key,
                          json_t *value);
/* The same with the message of a variant, for its route. */
void http_error_send_variant(struct evhttp_request *req, enum http_error_variant v);
/* The error's status, and its JSON body as compact text (returns owned: free();
 * NULL when out of memory), for answers written without evhttp (server.c). */
int http_error_status(enum http_error e);
char *http_error_body(enum http_error e);

#endif
