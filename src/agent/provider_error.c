/* The safe message made from an error answer's body, and whether the error
 * lasts. Nothing from a body but the provider's own message text ever reaches
 * a caller, and that only cut and with its control characters replaced, since
 * it ends up in logs and UIs. */
#include "provider.h"

#include "turn/turn.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of a provider's message we pass on; the rest is cut. */
#define MESSAGE_MAX 300

/* The message text made safe (turn_safe_text): at most MESSAGE_MAX bytes, cut
 * between characters; controls and invalid bytes become spaces; leading and
 * trailing spaces go. Owned; NULL when out of memory. Empty when nothing is
 * left. */
static char *safe_text(const char *text, size_t len) {
  char *out = malloc(MESSAGE_MAX + 1);
  if (out == NULL) return NULL;
  out[turn_safe_text(out, MESSAGE_MAX, text, len, TURN_SAFE_TRIM, NULL)] = '\0';
  return out;
}

/* The provider's message in a parsed error body: Anthropic's and OpenAI's
 * {"error":{"message":"..."}}, the {"error":"..."} of some servers, or a bare
 * {"message":"..."}. NULL when it has none. */
static const json_t *find_message(const json_t *root) {
  const json_t *err = json_object_get(root, "error");
  if (json_is_string(err)) return err;
  const json_t *msg = json_object_get(err, "message");
  if (json_is_string(msg)) return msg;
  msg = json_object_get(root, "message");
  return json_is_string(msg) ? msg : NULL;
}

char *provider_error_message(long status, const char *body, size_t len) {
  json_t *root = NULL;
  if (body != NULL) {
    json_error_t jerr;
    /* NULs are let in so a message holding one is still found; safe_text()
     * replaces them. */
    root = json_loadb(body, len, JSON_ALLOW_NUL, &jerr);
  }
  const json_t *msg = find_message(root);
  char *text =
      msg == NULL ? NULL : safe_text(json_string_value(msg), json_string_length(msg));
  json_decref(root);
  if (text != NULL && text[0] != '\0') return text;
  free(text);

  char fallback[64];
  int n = snprintf(fallback, sizeof fallback, "the provider answered with status %ld",
                   status);
  if (n < 0) return NULL;
  return strdup(fallback);
}

bool provider_error_is_lasting(const char *body, size_t len) {
  if (body == NULL) return false;
  json_t *root = json_loadb(body, len, 0, NULL);
  json_t *err = json_object_get(root, "error");
  const char *type = json_string_value(json_object_get(err, "type"));
  const char *code = json_string_value(json_object_get(err, "code"));
  bool lasting = (type != NULL && strcmp(type, "insufficient_quota") == 0) ||
                 (code != NULL && strcmp(code, "insufficient_quota") == 0);
  json_decref(root);
  return lasting;
}
