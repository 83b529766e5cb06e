/* Test harness, turnd's API side: what the daemon tests check of turnd's answers
 * (JSON lines and bodies, the error shape, sessions, turns) and the script model
 * they start it with. Every helper fails the running test (cmocka) instead of
 * returning an error, so a test reads as its steps. */
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

void harness_url(char *out, size_t cap, const struct turnd_proc *t, const char *fmt,
                 ...) {
  size_t n = (size_t)snprintf(out, cap, "%s", t->base_url);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out + n, cap - n, fmt, ap);
  va_end(ap);
}

/* ------------------------------------------------------- the script model */

#define SCRIPT_PREFIX "script:"

void harness_script_model(const char *script, char *model, size_t cap) {
  char dir[] = "/tmp/turnd-script-XXXXXX", path[128];
  assert_non_null(mkdtemp(dir));
  assert_int_equal(harness_write_file(dir, "script.json", script, path, sizeof path), 0);
  snprintf(model, cap, SCRIPT_PREFIX "%s", path);
}

void harness_remove_script(const char *model) {
  assert_int_equal(strncmp(model, SCRIPT_PREFIX, strlen(SCRIPT_PREFIX)), 0);
  char path[160];
  snprintf(path, sizeof path, "%s", model + strlen(SCRIPT_PREFIX));
  remove(path);
  char *slash = strrchr(path, '/');
  assert_non_null(slash);
  *slash = '\0';
  remove(path);
}

void harness_start_script(struct turnd_proc *t, const char *script,
                          const char *const *more) {
  char model[160];
  harness_script_model(script, model, sizeof model);
  const char *extra[16] = {"--model", model};
  size_t n = 2;
  for (size_t i = 0; more != NULL && more[i] != NULL; i++) {
    assert_true(n < 15);
    extra[n++] = more[i];
  }
  extra[n] = NULL;
  assert_int_equal(harness_start(t, extra), 0); /* the script is read at start */
  harness_remove_script(model);
}

/* ------------------------------------------------------------------ JSON */

json_t *harness_json(const char *text) {
  json_error_t e;
  json_t *j = json_loads(text, 0, &e);
  if (j == NULL) fail_msg("not JSON: %s", text);
  return j;
}

const char *harness_str(const json_t *j, const char *key) {
  const char *v = json_string_value(json_object_get(j, key));
  return v != NULL ? v : "";
}

bool harness_line_field(const char *line, const char *key, char *out, size_t cap) {
  json_t *j = harness_json(line);
  const char *v = json_string_value(json_object_get(j, key));
  snprintf(out, cap, "%s", v != NULL ? v : "");
  json_decref(j);
  return v != NULL;
}

void harness_text_field(const char *text, const char *key, char *out, size_t cap) {
  char pattern[64];
  snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
  const char *p = strstr(text, pattern);
  if (p == NULL) fail_msg("no \"%s\" in: %s", key, text);
  p += strlen(pattern);
  size_t k = 0;
  while (p[k] != '"' && k + 1 < cap) {
    out[k] = p[k];
    k++;
  }
  out[k] = '\0';
}

void harness_expect_error_body(const char *body, size_t len, const char *code) {
  json_error_t e;
  json_t *j = json_loadb(body, len, 0, &e);
  if (j == NULL) fail_msg("body is not JSON: %.200s", body);
  json_t *err = json_object_get(j, "error");
  assert_non_null(err);
  assert_string_equal(json_string_value(json_object_get(err, "code")), code);
  assert_true(json_string_length(json_object_get(err, "message")) > 0);
  json_decref(j);
}

void harness_expect_error(const struct http_answer *a, long status, const char *code) {
  assert_int_equal(a->status, status);
  assert_string_equal(a->content_type, "application/json");
  harness_expect_error_body(a->body, a->len, code);
}

/* -------------------------------------------------------- sessions, turns */

json_t *harness_get_session(const struct turnd_proc *t, const char *session) {
  char url[256];
  harness_url(url, sizeof url, t, "/api/sessions/%s", session);
  struct http_answer a;
  assert_int_equal(http_do("GET", url, NULL, &a), 0);
  assert_int_equal(a.status, 200);
  json_t *j = json_loads(a.body, 0, NULL);
  http_answer_free(&a);
  assert_non_null(j);
  return j;
}

void harness_post_turn(const struct turnd_proc *t, const char *session, const char *text,
                       size_t max_lines, struct http_stream *s) {
  char url[128];
  harness_url(url, sizeof url, t, "/api/turns");
  json_t *b = session != NULL ? json_pack("{s:s, s:s}", "session", session, "text", text)
                              : json_pack("{s:s}", "text", text);
  char *body = json_dumps(b, JSON_COMPACT);
  json_decref(b);
  assert_non_null(body);
  assert_int_equal(http_stream("POST", url, body, max_lines, s), 0);
  free(body);
  assert_int_equal(s->status, 200);
  assert_true(s->n > 0);
}

size_t harness_turn_head(char *out, size_t cap, const struct turnd_proc *t, size_t len) {
  int n =
      snprintf(out, cap,
               "POST /api/turns HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               "%s\r\nContent-Length: %zu\r\n\r\n",
               t->auth_header, len);
  assert_true(n > 0 && (size_t)n < cap);
  return (size_t)n;
}

void harness_send_turn(int fd, const struct turnd_proc *t, const char *body, size_t len) {
  char head[256];
  size_t n = harness_turn_head(head, sizeof head, t, len);
  assert_int_equal(send(fd, head, n, MSG_NOSIGNAL), (ssize_t)n);
  assert_int_equal(send(fd, body, len, MSG_NOSIGNAL), (ssize_t)len);
}
