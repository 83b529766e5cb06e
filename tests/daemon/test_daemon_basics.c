/* turnd over real HTTP: start-up on port 0, the capabilities route, JSON errors
 * for unknown routes and wrong methods, garbage on the socket, the command line
 * contract, a clean stop on SIGTERM and SIGINT, and its threads' policies. */
/* syscall */
#define _GNU_SOURCE

#include "harness.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <jansson.h>
#include <netinet/in.h>
#include <linux/sched.h>
#include <linux/sched/types.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

static void test_daemon_starts_on_port_zero_and_says_where(void **state) {
  (void)state;
  struct turnd_proc t;
  assert_int_equal(harness_start(&t, NULL), 0);
  assert_true(t.port > 0);
  char want[128];
  snprintf(want, sizeof want, "listening on http://127.0.0.1:%u", t.port);
  assert_string_equal(t.listen_line, want);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

static void test_daemon_capabilities(void **state) {
  (void)state;
  struct turnd_proc t;
  assert_int_equal(harness_start(&t, NULL), 0);
  char u[256];
  harness_url(u, sizeof u, &t, "/api/capabilities");
  struct http_answer a;
  assert_int_equal(http_do("GET", u, NULL, &a), 0);
  assert_int_equal(a.status, 200);
  assert_string_equal(a.content_type, "application/json");
  json_t *j = harness_json(a.body);
  assert_string_equal(json_string_value(json_object_get(j, "backend")), "hub");
  assert_int_equal(json_integer_value(json_object_get(j, "protocol")), 1);
  assert_true(json_is_array(json_object_get(j, "pages")));
  assert_true(json_is_string(json_object_get(j, "language")));
  json_decref(j);
  http_answer_free(&a);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

static void test_daemon_unknown_routes_and_methods(void **state) {
  (void)state;
  struct turnd_proc t;
  assert_int_equal(harness_start(&t, NULL), 0);
  static const char *const missing[] = {"/",
                                        "/api",
                                        "/api/",
                                        "/api/nope",
                                        "/api/capabilities/x",
                                        "/api//capabilities",
                                        "/api/capabilities/",
                                        "/%2e%2e/etc/passwd"};
  char u[256];
  struct http_answer a;
  for (size_t i = 0; i < sizeof missing / sizeof missing[0]; i++) {
    harness_url(u, sizeof u, &t, "%s", missing[i]);
    assert_int_equal(http_do("GET", u, NULL, &a), 0);
    harness_expect_error(&a, 404, "not_found");
    http_answer_free(&a);
  }
  harness_url(u, sizeof u, &t, "/api/capabilities");
  static const char *const wrong[] = {"POST", "PUT", "DELETE", "PATCH"};
  for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
    assert_int_equal(http_do(wrong[i], u, "{}", &a), 0);
    harness_expect_error(&a, 405, "method_not_allowed");
    assert_string_equal(a.allow, "GET");
    http_answer_free(&a);
  }
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* Bytes that are not HTTP, and a connection dropped mid-request, leave turnd
 * answering the next client. */
static void test_daemon_survives_garbage_on_the_socket(void **state) {
  (void)state;
  struct turnd_proc t;
  assert_int_equal(harness_start(&t, NULL), 0);
  static const char *const junk[] = {"GARBAGE\r\n\r\n",
                                     "GET /api/capabilities HTTP/1.1\r\n",
                                     "\x00\xff\xfe\r\n\r\n", "GET / HTTP/9.9\r\n\r\n"};
  for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
    int fd = harness_connect(&t, 0);
    assert_true(fd >= 0);
    size_t len = i == 2 ? 7 : strlen(junk[i]);
    assert_int_equal(write(fd, junk[i], len), (ssize_t)len);
    close(fd);
  }
  char u[256];
  harness_url(u, sizeof u, &t, "/api/capabilities");
  struct http_answer a;
  assert_int_equal(http_do("GET", u, NULL, &a), 0);
  assert_int_equal(a.status, 200);
  http_answer_free(&a);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

static void test_daemon_stops_cleanly_on_sigint(void **state) {
  (void)state;
  struct turnd_proc t;
  assert_int_equal(harness_start(&t, NULL), 0);
  assert_int_equal(harness_stop(&t, SIGINT), 0);
}

/* The command line is a contract: a bad one stops turnd with status 2 before it
 * listens. --no-auth is refused on any address but loopback: there is no way to
 * turn auth off on a public address. */
static void test_daemon_command_line(void **state) {
  (void)state;
  static const char *const bad[][5] = {
      {"--listen", "0.0.0.0:0", "--no-auth", NULL},
      {"--no-auth", "--listen", "[::]:0", NULL},
      {"--listen", "192.168.1.10:8080", "--no-auth", NULL},
      {"--listen", "localhost.example.com:0", "--no-auth", NULL},
      {"--step-up-effects", "a b", NULL},
      {"--step-up-effects", ",", NULL},
      {"--lock-after", "-1", NULL},
      {"--listen", "127.0.0.1", NULL},
      {"--listen", "127.0.0.1:70000", NULL},
      {"--retain", "-1", NULL},
      {"--retain", "ten", NULL},
      {"--approval-timeout", "0", NULL},
      {"--model", "gpt", NULL},
      {"--tools", "", NULL},
      {"--nope", "1", NULL},
      {"--data", NULL},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(harness_run(bad[i]), 2);
  static const char *const help[] = {"--help", NULL};
  assert_int_equal(harness_run(help), 0);
}

/* A --tools list with an empty item, or demo twice, stops turnd at start-up
 * (status 1, like a bad tools file) instead of starting it without the tools
 * the owner meant to give. */
static void test_daemon_tools_list_with_holes(void **state) {
  (void)state;
  char dir[] = "/tmp/turnd-tools-XXXXXX";
  assert_non_null(mkdtemp(dir));
  static const char *const lists[] = {",", "demo,", ",demo", "demo,,demo", "demo,demo"};
  for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
    const char *args[] = {"--listen", "127.0.0.1:0", "--data", dir,
                          "--tools",  lists[i],      NULL};
    if (harness_run(args) != 1) fail_msg("--tools \"%s\" was not refused", lists[i]);
  }
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

/* Review finding: admin commands that opened a new data folder at the same
 * moment raced to create auth.db's tables, and most of them failed. Eight
 * pairings at once on a new folder must all succeed. */
static void test_daemon_admin_commands_at_once_on_a_new_folder(void **state) {
  (void)state;
  char dir[] = "/tmp/turnd-admin-XXXXXX";
  assert_non_null(mkdtemp(dir));
  pid_t kids[8];
  for (int i = 0; i < 8; i++) {
    kids[i] = fork();
    assert_true(kids[i] >= 0);
    if (kids[i] == 0) {
      char name[16], token[80];
      snprintf(name, sizeof name, "device-%d", i);
      const char *args[] = {"pair", "--data", dir, "--name", name, NULL};
      _exit(harness_run_line(args, NULL, token, sizeof token) == 0 &&
                    strncmp(token, "turnd_", 6) == 0
                ? 0
                : 1);
    }
  }
  for (int i = 0; i < 8; i++) {
    int status;
    assert_int_equal(waitpid(kids[i], &status, 0), kids[i]);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  char cmd[256];
  snprintf(cmd, sizeof cmd, "%s devices --data %s", TURND_PATH, dir);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  char line[256];
  int lines = 0;
  while (fgets(line, sizeof line, p) != NULL)
    lines++;
  assert_int_equal(pclose(p), 0);
  assert_int_equal(lines, 1 + 8); /* the header, then each device */
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

/* --data is made when missing, parents included. */
static void test_daemon_makes_its_data_folder(void **state) {
  (void)state;
  char parent[] = "/tmp/turnd-data-XXXXXX";
  assert_non_null(mkdtemp(parent));
  char dir[256];
  snprintf(dir, sizeof dir, "%s/a/b", parent);
  const char *extra[] = {"--data", dir, NULL};
  struct turnd_proc t;
  assert_int_equal(harness_start(&t, extra), 0); /* the later --data wins */
  struct stat st;
  assert_int_equal(stat(dir, &st), 0);
  assert_true(S_ISDIR(st.st_mode));
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
  char sub[300];
  snprintf(sub, sizeof sub, "%s/a/b", parent);
  rmdir(sub);
  snprintf(sub, sizeof sub, "%s/a", parent);
  rmdir(sub);
  rmdir(parent);
}

/* Thread tid of pid's scheduling attributes (the kernel's), and its name into
 * name[0..cap); false if it could not be read (it ended). */
static bool thread_sched(pid_t pid, const char *tid, struct sched_attr *a, char *name,
                         size_t cap) {
  char path[320];
  snprintf(path, sizeof path, "/proc/%d/task/%s/comm", (int)pid, tid);
  FILE *f = fopen(path, "r");
  if (f == NULL) return false;
  if (fgets(name, (int)cap, f) == NULL) name[0] = '\0';
  fclose(f);
  name[strcspn(name, "\n")] = '\0';
  memset(a, 0, sizeof *a);
  return syscall(SYS_sched_getattr, (pid_t)strtol(tid, NULL, 10), a, sizeof *a, 0) == 0;
}

/* Whether turnd, started from here, may change its threads' policies as it
 * means to: it does so only from the normal policy, which it inherits from this
 * process (whose attributes go to *own), and a sandbox may refuse the change (a
 * child tries it). */
static bool sched_changes_allowed(struct sched_attr *own) {
  memset(own, 0, sizeof *own);
  if (syscall(SYS_sched_getattr, 0, own, sizeof *own, 0) != 0 ||
      own->sched_policy != SCHED_NORMAL)
    return false;
  pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) {
    struct sched_attr batch = *own;
    batch.size = sizeof batch;
    batch.sched_policy = SCHED_BATCH;
    _exit(syscall(SYS_sched_setattr, 0, &batch, 0) == 0 ? 0 : 1);
  }
  int status = 0;
  return waitpid(child, &status, 0) == child && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

/* The store's writer and checkpointer and the request builder never preempt the
 * event loop on waking (SCHED_BATCH), while the loop keeps the normal policy
 * with the shortest slice, where the kernel has slices to tell; each
 * background thread is named for top -H and perf. */
static void test_daemon_threads_leave_the_cpu_to_the_loop(void **state) {
  (void)state;
  struct sched_attr own;
  if (!sched_changes_allowed(&own)) skip();
  struct turnd_proc t;
  assert_int_equal(harness_start(&t, NULL), 0);
  const char *want[] = {"turnd-writer", "turnd-ckpt", "turnd-builder"};
  enum { WANT = sizeof want / sizeof want[0] };
  bool seen[WANT] = {false};
  struct sched_attr loop = {0};
  /* A thread sets itself up first thing, which may be just after "listening",
   * as may the loop. */
  for (int tries = 0; tries < 500; tries++) {
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)t.pid);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.') continue;
      char name[32];
      struct sched_attr a;
      if (!thread_sched(t.pid, e->d_name, &a, name, sizeof name)) continue;
      if (strtol(e->d_name, NULL, 10) == (long)t.pid) loop = a;
      for (size_t i = 0; i < WANT; i++)
        if (strcmp(name, want[i]) == 0 && a.sched_policy == SCHED_BATCH) seen[i] = true;
    }
    closedir(d);
    if (seen[0] && seen[1] && seen[2] && loop.sched_flags != 0) break;
    usleep(10 * 1000);
  }
  for (size_t i = 0; i < WANT; i++) {
    if (!seen[i]) fail_msg("no thread %s under SCHED_BATCH", want[i]);
  }
  assert_int_equal(loop.sched_policy, SCHED_NORMAL);
  /* Its threads and tools start with the defaults. */
  assert_int_equal(loop.sched_flags & SCHED_FLAG_RESET_ON_FORK, SCHED_FLAG_RESET_ON_FORK);
  /* A kernel without slices (before 6.12) reports none. */
  if (own.sched_runtime != 0) assert_int_equal(loop.sched_runtime, 100000);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_daemon_starts_on_port_zero_and_says_where),
      cmocka_unit_test(test_daemon_capabilities),
      cmocka_unit_test(test_daemon_unknown_routes_and_methods),
      cmocka_unit_test(test_daemon_survives_garbage_on_the_socket),
      cmocka_unit_test(test_daemon_stops_cleanly_on_sigint),
      cmocka_unit_test(test_daemon_tools_list_with_holes),
      cmocka_unit_test(test_daemon_command_line),
      cmocka_unit_test(test_daemon_makes_its_data_folder),
      cmocka_unit_test(test_daemon_admin_commands_at_once_on_a_new_folder),
      cmocka_unit_test(test_daemon_threads_leave_the_cpu_to_the_loop),
  };
  return cmocka_run_group_tests(tests, NULL, harness_kill_all);
}
