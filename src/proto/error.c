/* Error codes: names and messages come from the one TURN_ERRORS table in turn.h,
 * so a code, its stable name and its message cannot drift apart. */
#include "error.h"

#include <stdio.h>

const char *turn_errname(int code) {
  switch (code) {
#define NAME_CASE(name, value, msg) \
  case value:                       \
    return #name;
    TURN_ERRORS(NAME_CASE)
#undef NAME_CASE
  }
  return "E_UNKNOWN";
}

const char *turn_strerror(int code) {
  switch (code) {
#define MSG_CASE(name, value, msg) \
  case value:                      \
    return msg;
    TURN_ERRORS(MSG_CASE)
#undef MSG_CASE
  }
  return "unknown error";
}

bool turn_is_fatal(int code) {
  return code <= TURN_E_NOMEM;
}

size_t turn_error_format(const turn_error *err, char *out, size_t cap) {
  char where[32] = "";
  if (err->line > 0)
    snprintf(where, sizeof where, "line %llu: ", (unsigned long long)err->line);
  int n;
  if (err->field != NULL)
    n = snprintf(out, cap, "%s%s (field \"%s\", %s)", where, turn_strerror(err->code),
                 err->field, turn_errname(err->code));
  else
    n = snprintf(out, cap, "%s%s (%s)", where, turn_strerror(err->code),
                 turn_errname(err->code));
  return n < 0 ? 0 : (size_t)n;
}

int turn__set_error(turn_error *err, int code, const char *field, size_t offset) {
  if (err != NULL) {
    err->code = code;
    err->field = field;
    err->offset = offset;
    err->line = 0;
  }
  return code;
}
