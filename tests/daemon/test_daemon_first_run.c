/* What a new owner meets on the first run, over real HTTP: `turnd set-pin
 * --if-unset`, which `make run` asks at its first start, and the script model's
 * size limit the README gives. */
#include "harness.h"

#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define SCRIPT_MAX (1u << 20) /* bytes of a script:FILE, as the README says */

/* GET /api/guard's pin_set. */
static bool pin_set(const struct turnd_proc *t) {
  char url[128];
  harness_url(url, sizeof url, t, "/api/guard");
  struct http_answer a;
  assert_int_equal(http_do("GET", url, NULL, &a), 0);
  assert_int_equal(a.status, 200);
  json_t *j = json_loadb(a.body, a.len, 0, NULL);
  assert_non_null(j);
  json_t *set = json_object_get(j, "pin_set");
  assert_true(json_is_boolean(set));
  bool is_set = json_is_true(set);
  json_decref(j);
  http_answer_free(&a);
  return is_set;
}

/* `turnd set-pin --data DIR --if-unset` with input on stdin: its exit status. */
static int set_pin_if_unset(const struct turnd_proc *t, const char *input) {
  const char *args[] = {"set-pin", "--data", t->data_dir, "--if-unset", NULL};
  char line[256];
  return harness_run_line(args, input, line, sizeof line);
}

/* POST path with body on t: the status. */
static long post(const struct turnd_proc *t, const char *path, const char *body) {
  char url[128];
  harness_url(url, sizeof url, t, "%s", path);
  struct http_answer a;
  assert_int_equal(http_do("POST", url, body, &a), 0);
  long status = a.status;
  http_answer_free(&a);
  return status;
}

/* --if-unset: an empty line sets no PIN (the owner chooses later) and is no
 * failure; a PIN sets it; once one is set it is kept, whatever the input. */
static void test_set_pin_if_unset_asks_only_once(void **state) {
  (void)state;
  struct turnd_proc t;
  assert_int_equal(harness_start(&t, NULL), 0);
  assert_int_equal(set_pin_if_unset(&t, "\n"), 0);
  assert_false(pin_set(&t));
  assert_int_equal(set_pin_if_unset(&t, "hazel-4711\n"), 0);
  assert_true(pin_set(&t));
  assert_int_equal(set_pin_if_unset(&t, "other-0815\n"), 0);
  assert_int_equal(post(&t, "/api/guard/lock", "{}"), 204);
  assert_int_equal(post(&t, "/api/guard/unlock", "{\"pin\": \"other-0815\"}"), 403);
  assert_int_equal(post(&t, "/api/guard/unlock", "{\"pin\": \"hazel-4711\"}"), 204);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* A valid script of exactly len bytes (white space after the JSON) in dir. */
static void write_script(const char *dir, size_t len, char *path, size_t cap) {
  static const char json[] = "{\"default\": [[{\"text\": \"hi\"}]]}";
  char *text = malloc(len + 1);
  assert_non_null(text);
  memset(text, ' ', len);
  memcpy(text, json, strlen(json));
  text[len - 1] = '\n';
  text[len] = '\0';
  assert_int_equal(harness_write_file(dir, "script.json", text, path, cap), 0);
  free(text);
}

/* Regression: a script of exactly 1 MiB was refused as "over 1 MiB". It is
 * taken; one byte more is refused at start-up. */
static void test_script_up_to_1_mib_is_taken(void **state) {
  (void)state;
  char dir[] = "/tmp/turnd-script-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[128], model[160];
  write_script(dir, SCRIPT_MAX, path, sizeof path);
  snprintf(model, sizeof model, "script:%s", path);
  const char *extra[] = {"--model", model, NULL};
  struct turnd_proc t;
  assert_int_equal(harness_start(&t, extra), 0);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);

  write_script(dir, SCRIPT_MAX + 1, path, sizeof path);
  char data[sizeof dir + 8];
  snprintf(data, sizeof data, "%s/data", dir);
  const char *args[] = {"--listen", "127.0.0.1:0", "--data", data,
                        "--model",  model,         NULL};
  assert_int_equal(harness_run(args), 1);
  remove(path);
  rmdir(data);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_set_pin_if_unset_asks_only_once),
      cmocka_unit_test(test_script_up_to_1_mib_is_taken),
  };
  return cmocka_run_group_tests(tests, NULL, harness_kill_all);
}
