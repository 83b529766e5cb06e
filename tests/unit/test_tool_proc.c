/* Tool programs on a real event loop (src/turnd/run/tool_proc.c), with the small
 * shell tools in tests/tool_programs/: a well-behaved one, a slow one, ones that
 * crash, write garbage, flood, never end, never read their input or linger
 * after their result. Each test asserts the exact events, and that no process
 * of the tool's group survives and no fd of the test leaks. No assertion is
 * about time: timeouts here are either the behaviour under test or a safety
 * net. */
#include "turnd/run/tool_proc.h"

#include <dirent.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define TOOLS_DIR TURN_TOOLS_DIR

/* ------------------------------------------------------------ recording */

struct recorded {
  enum tool_proc_kind kind;
  char *message; /* PROGRESS */
  bool ok;       /* DONE */
  char *summary;
  char *result_json;
};

struct recorder {
  struct recorded ev[1100];
  size_t n;
  bool done;
  struct tool_proc *proc; /* to kill from a callback */
  bool kill_on_progress;  /* tool_proc_kill from inside the first PROGRESS */
  bool break_on_progress; /* stop the loop at the first PROGRESS */
  struct event_base *base;
};

static char *dup_or_null(const char *s) {
  return s != NULL ? strdup(s) : NULL;
}

static void on_event(void *ctx, const struct tool_proc_event *ev) {
  struct recorder *r = ctx;
  if (r->done) fail_msg("an event after DONE");
  if (r->n == sizeof r->ev / sizeof r->ev[0]) fail_msg("too many events");
  struct recorded *e = &r->ev[r->n++];
  e->kind = ev->kind;
  if (ev->kind == TOOL_PROC_PROGRESS) {
    if (ev->message == NULL) fail_msg("PROGRESS without a message");
    e->message = strdup(ev->message);
    if (r->kill_on_progress) {
      r->kill_on_progress = false;
      tool_proc_kill(r->proc);
      r->proc = NULL;
    }
    if (r->break_on_progress) {
      r->break_on_progress = false;
      event_base_loopbreak(r->base);
    }
  } else {
    e->ok = ev->ok;
    e->summary = dup_or_null(ev->summary);
    e->result_json = dup_or_null(ev->result_json);
    r->done = true;
    r->proc = NULL;
  }
}

static void recorder_free(struct recorder *r) {
  for (size_t i = 0; i < r->n; i++) {
    free(r->ev[i].message);
    free(r->ev[i].summary);
    free(r->ev[i].result_json);
  }
  free(r);
}

/* ---------------------------------------------------------- processes */

/* Open fds of this process, to check that a run leaks none. */
static int count_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  assert_non_null(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

/* Processes in group pgid that are still alive (zombies are dead: init reaps
 * the ones that were not our children). */
static int live_in_group(pid_t pgid) {
  DIR *d = opendir("/proc");
  assert_non_null(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    if (f == NULL) continue;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    const char *rest = strrchr(buf, ')'); /* the name may hold spaces */
    char state;
    int ppid, pgrp;
    if (rest == NULL || sscanf(rest + 1, " %c %d %d", &state, &ppid, &pgrp) != 3)
      continue;
    if (pgrp == pgid && state != 'Z' && state != 'X') n++;
  }
  closedir(d);
  return n;
}

/* The group is gone and its leader reaped by tool_proc, not left a zombie.
 * SIGKILL takes effect asynchronously, so this waits (a safety net of 10 s,
 * not a timing assertion). */
static void assert_group_gone(pid_t pgid) {
  assert_true(pgid > 1);
  for (int i = 0; i < 1000 && live_in_group(pgid) > 0; i++) {
    struct timespec ms10 = {0, 10 * 1000 * 1000};
    nanosleep(&ms10, NULL);
  }
  assert_int_equal(live_in_group(pgid), 0);
  errno = 0;
  assert_int_equal(waitpid(pgid, NULL, WNOHANG), -1);
  assert_int_equal(errno, ECHILD);
}

/* The pid a tool put in its first progress line ("... pid N"). */
static pid_t pid_in(const char *message) {
  const char *at = strstr(message, "pid ");
  assert_non_null(at);
  return (pid_t)strtol(at + 4, NULL, 10);
}

/* ------------------------------------------------------------- running */

struct tool {
  struct tool_config cfg;
  char *argv[4];
  char path[512];
};

static void tool_init(struct tool *t, const char *script, const char *arg,
                      uint32_t timeout_ms) {
  memset(t, 0, sizeof *t);
  snprintf(t->path, sizeof t->path, "%s/%s", TOOLS_DIR, script);
  t->argv[0] = t->path;
  t->argv[1] = (char *)arg;
  t->cfg.name = (char *)"test";
  t->cfg.argv = t->argv;
  t->cfg.cwd = (char *)TOOLS_DIR;
  t->cfg.timeout_ms = timeout_ms;
}

#define SAFETY_MS 60000 /* a timeout that only a broken test reaches */

/* Runs the tool to its end on a fresh loop: the loop runs until nothing is left
 * on it, so a leftover event (or a reaper that never fires) would hang here.
 * Returns the events (free with recorder_free). */
static struct recorder *run_tool(const struct tool *t, const char *input) {
  int fds_before = count_fds();
  struct recorder *r = calloc(1, sizeof *r);
  assert_non_null(r);
  r->base = event_base_new();
  assert_non_null(r->base);
  r->proc = tool_proc_start(r->base, &t->cfg, input, on_event, r);
  assert_non_null(r->proc);
  assert_int_equal(r->n, 0);                         /* never from inside start */
  assert_int_equal(event_base_dispatch(r->base), 1); /* 1: nothing left to wait for */
  event_base_free(r->base);
  r->base = NULL;
  assert_int_equal(count_fds(), fds_before);
  return r;
}

static void expect_progress(const struct recorder *r, size_t i, const char *message) {
  assert_true(i < r->n);
  assert_int_equal(r->ev[i].kind, TOOL_PROC_PROGRESS);
  assert_string_equal(r->ev[i].message, message);
}

/* Event i is DONE, the last one, with these values (result NULL: none). */
static void expect_done(const struct recorder *r, size_t i, bool ok, const char *summary,
                        const char *result) {
  assert_int_equal(r->n, i + 1);
  assert_int_equal(r->ev[i].kind, TOOL_PROC_DONE);
  assert_int_equal(r->ev[i].ok, ok);
  assert_string_equal(r->ev[i].summary, summary);
  if (result == NULL)
    assert_null(r->ev[i].result_json);
  else
    assert_string_equal(r->ev[i].result_json, result);
}

static const char not_protocol[] = "the tool wrote something that is not its protocol";
static const char too_much[] = "the tool wrote too much";

/* --------------------------------------------------------------- tests */

static void test_tool_proc_good_tool(void **state) {
  (void)state;
  struct tool t;
  tool_init(&t, "good.sh", NULL, SAFETY_MS);
  struct recorder *r = run_tool(&t, "{\"city\":\"Paris\"}");
  expect_progress(r, 0, "looking up Paris");
  expect_progress(r, 1, "reading the sky");
  expect_done(r, 2, true, "sunny in Paris",
              "{\"city\":\"Paris\",\"sky\":\"clear\",\"temp\":21.1}");
  recorder_free(r);
}

static void test_tool_proc_slow_tool(void **state) {
  (void)state;
  struct tool t;
  tool_init(&t, "slow.sh", NULL, SAFETY_MS);
  struct recorder *r = run_tool(&t, "{}");
  expect_progress(r, 0, "step 1 of 2");
  expect_progress(r, 1, "step 2 of 2");
  expect_done(r, 2, true, "done slowly", NULL);
  recorder_free(r);
}

static void test_tool_proc_two_at_once(void **state) {
  (void)state;
  struct tool slow, good;
  tool_init(&slow, "slow.sh", NULL, SAFETY_MS);
  tool_init(&good, "good.sh", NULL, SAFETY_MS);
  struct recorder *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
  assert_non_null(a);
  assert_non_null(b);
  struct event_base *base = event_base_new();
  assert_non_null(tool_proc_start(base, &slow.cfg, "{}", on_event, a));
  assert_non_null(tool_proc_start(base, &good.cfg, "{\"city\": \"Oslo\"}", on_event, b));
  assert_int_equal(event_base_dispatch(base), 1);
  event_base_free(base);
  expect_done(a, 2, true, "done slowly", NULL);
  expect_progress(b, 0, "looking up Oslo");
  expect_done(b, 2, true, "sunny in Oslo",
              "{\"city\":\"Oslo\",\"sky\":\"clear\",\"temp\":21.1}");
  recorder_free(a);
  recorder_free(b);
}

static void test_tool_proc_crash_by_signal(void **state) {
  (void)state;
  struct tool t;
  tool_init(&t, "crash.sh", "segv", SAFETY_MS);
  struct recorder *r = run_tool(&t, "{}");
  expect_progress(r, 0, "about to fail");
  expect_done(r, 1, false, "the tool was killed by signal 11 before giving a result",
              NULL);
  recorder_free(r);
}

static void test_tool_proc_exit_before_result(void **state) {
  (void)state;
  struct tool t;
  tool_init(&t, "crash.sh", "exit3", SAFETY_MS);
  struct recorder *r = run_tool(&t, "{}");
  expect_progress(r, 0, "about to fail");
  expect_done(r, 1, false, "the tool exited with status 3 before giving a result", NULL);
  recorder_free(r);
  tool_init(&t, "crash.sh", "exit0", SAFETY_MS);
  r = run_tool(&t, "{}");
  expect_done(r, 1, false, "the tool exited with status 0 before giving a result", NULL);
  recorder_free(r);
}

/* A tool that closes its output and runs on can give no result: the call ends
 * after the grace to exit, not at its timeout (a minute here), and the program
 * is killed with its group. */
static void test_tool_proc_output_closed_before_result(void **state) {
  (void)state;
  struct tool t;
  tool_init(&t, "closeout.sh", NULL, SAFETY_MS);
  struct recorder *r = run_tool(&t, "{}");
  expect_progress(r, 0, "going quiet");
  expect_done(r, 1, false, "the tool closed its output without giving a result", NULL);
  recorder_free(r);
}

/* Each bad line ends the call as not the protocol; the valid result the tool
 * writes after it is never taken, and its sleep is killed with the group. */
static void test_tool_proc_invalid_output(void **state) {
  (void)state;
  static const char *const modes[] = {
      "notjson",      "progress-number",   "progress-extra",
      "result-extra", "result-no-summary", "result-ok-string",
      "array",        "duplicate",         "nul"};
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
    struct tool t;
    tool_init(&t, "invalid.sh", modes[i], SAFETY_MS);
    struct recorder *r = run_tool(&t, "{}");
    if (r->n != 1) fail_msg("%s: %zu events", modes[i], r->n);
    expect_done(r, 0, false, not_protocol, NULL);
    recorder_free(r);
  }
  struct tool t;
  tool_init(&t, "invalid.sh", "after-progress", SAFETY_MS);
  struct recorder *r = run_tool(&t, "{}");
  expect_progress(r, 0, "fine so far");
  expect_done(r, 1, false, not_protocol, NULL);
  recorder_free(r);
  /* Valid JSON all the same: the failure says what it is. */
  tool_init(&t, "invalid.sh", "big-integer", SAFETY_MS);
  r = run_tool(&t, "{}");
  expect_done(r, 0, false, "the tool wrote a number too big for turnd to read exactly",
              NULL);
  recorder_free(r);
}

static void test_tool_proc_flood_of_garbage(void **state) {
  (void)state;
  struct tool t;
  tool_init(&t, "flood.sh", "yes", SAFETY_MS); /* "y" is not the protocol */
  struct recorder *r = run_tool(&t, "{}");
  expect_done(r, 0, false, not_protocol, NULL);
  recorder_free(r);
}

static void test_tool_proc_flood_of_progress(void **state) {
  (void)state;
  struct tool t;
  tool_init(&t, "flood.sh", "progress", SAFETY_MS);
  struct recorder *r = run_tool(&t, "{}");
  for (size_t i = 0; i < TOOL_PROC_PROGRESS_MAX; i++)
    expect_progress(r, i, "tick");
  expect_done(r, TOOL_PROC_PROGRESS_MAX, false, too_much, NULL);
  recorder_free(r);
}

static void test_tool_proc_flood_one_long_line(void **state) {
  (void)state;
  struct tool t;
  tool_init(&t, "flood.sh", "long", SAFETY_MS);
  struct recorder *r = run_tool(&t, "{}");
  expect_done(r, 0, false, too_much, NULL);
  recorder_free(r);
}

/* The limit is on the output in all, not on a line: a result may fill it. */
static void test_tool_proc_big_result_line(void **state) {
  (void)state;
  struct tool t;
  tool_init(&t, "flood.sh", "bigresult", SAFETY_MS);
  struct recorder *r = run_tool(&t, "{}");
  enum { BIG = 900000 };
  char *want = malloc(BIG + 3);
  assert_non_null(want);
  want[0] = '"';
  memset(want + 1, 'x', BIG);
  want[BIG + 1] = '"';
  want[BIG + 2] = '\0';
  expect_done(r, 0, true, "big", want);
  free(want);
  recorder_free(r);
}

/* 900 lines of 1200 bytes: the 873 that end within 1 MiB are handed out (each
 * message cut to TOOL_PROC_TEXT_MAX), then the call fails. */
static void test_tool_proc_flood_over_total(void **state) {
  (void)state;
  struct tool t;
  tool_init(&t, "flood.sh", "total", SAFETY_MS);
  struct recorder *r = run_tool(&t, "{}");
  size_t lines = TOOL_PROC_OUTPUT_MAX / 1200;
  assert_int_equal(lines, 873);
  char x[TOOL_PROC_TEXT_MAX + 1];
  memset(x, 'x', TOOL_PROC_TEXT_MAX);
  x[TOOL_PROC_TEXT_MAX] = '\0';
  for (size_t i = 0; i < lines; i++)
    expect_progress(r, i, x);
  expect_done(r, lines, false, too_much, NULL);
  recorder_free(r);
}

static void test_tool_proc_unsafe_text_is_replaced(void **state) {
  (void)state;
  struct tool t;
  tool_init(&t, "texts.sh", "controls", SAFETY_MS);
  struct recorder *r = run_tool(&t, "{}");
  expect_done(r, 0, true, "a b c d e f g h", NULL);
  recorder_free(r);
}

/* 999 bytes, then a 2-byte "é" that would pass 1000: the cut comes before it. */
static void test_tool_proc_long_text_is_cut_on_a_code_point(void **state) {
  (void)state;
  struct tool t;
  tool_init(&t, "texts.sh", "long", SAFETY_MS);
  struct recorder *r = run_tool(&t, "{}");
  char a[1000];
  memset(a, 'a', 999);
  a[999] = '\0';
  expect_progress(r, 0, a);
  expect_done(r, 1, false, a, NULL);
  recorder_free(r);
}

static void test_tool_proc_crlf_and_blank_lines(void **state) {
  (void)state;
  struct tool t;
  tool_init(&t, "texts.sh", "crlf", SAFETY_MS);
  struct recorder *r = run_tool(&t, "{}");
  expect_progress(r, 0, "p");
  expect_done(r, 1, true, "crlf", "null");
  recorder_free(r);
}

static void test_tool_proc_last_line_without_newline(void **state) {
  (void)state;
  struct tool t;
  tool_init(&t, "texts.sh", "no-newline", SAFETY_MS);
  struct recorder *r = run_tool(&t, "{}");
  expect_done(r, 0, false, "no newline", "[1,2.5,\"x\"]");
  recorder_free(r);
}

/* The environment, folder, fds, stderr, group, session and signals of tool_proc.h. The
 * test ignores SIGPIPE, as turnd does, and holds fd 100 open without
 * close-on-exec; neither may reach the tool. */
static void test_tool_proc_clean_child(void **state) {
  (void)state;
  int fd = open("/dev/null", O_RDONLY);
  assert_true(fd >= 0);
  assert_int_equal(dup2(fd, 100), 100);
  close(fd);
  void (*old)(int) = signal(SIGPIPE, SIG_IGN);
  setenv("TURN_TEST_SECRET", "not for tools", 1);
  struct tool t;
  tool_init(&t, "env.sh", NULL, SAFETY_MS);
  t.cfg.cwd = (char *)"/tmp";
  struct recorder *r = run_tool(&t, "{}");
  signal(SIGPIPE, old);
  unsetenv("TURN_TEST_SECRET");
  close(100);
  assert_int_equal(r->n, 1);
  assert_true(r->ev[0].ok);
  /* VARS: PATH, HOME and LANG, and PWD, which the shell sets for itself. */
  static const char want[] =
      "PATH=/usr/local/bin:/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 VARS=4 PWD=/tmp "
      "FD100=closed STDERR=/dev/null GROUP=own SESSION=own SIGIGN=";
  const char *got = r->ev[0].summary;
  if (strncmp(got, want, sizeof want - 1) != 0) fail_msg("got \"%s\"", got);
  /* No standard signal ignored (SIGPIPE is 13). posix_spawn leaves glibc's two
   * internal real-time signals (32, 33) ignored; no program sees them. */
  unsigned long long ignored = strtoull(got + sizeof want - 1, NULL, 16);
  assert_int_equal(ignored & 0x7fffffffull, 0);
  recorder_free(r);
}

/* Whether process pid is alive: not gone, not a zombie. */
static bool pid_alive(pid_t pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (f == NULL) return false;
  size_t len = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[len] = '\0';
  const char *rest = strrchr(buf, ')');
  char state;
  return rest != NULL && sscanf(rest + 1, " %c", &state) == 1 && state != 'Z' &&
         state != 'X';
}

/* The host process of test_tool_proc_dies_with_turnd: runs forever.sh on a loop
 * of its own, as turnd would, and writes the tool's pid to report. */
static _Noreturn void host_run(int report) {
  struct tool t;
  tool_init(&t, "forever.sh", NULL, SAFETY_MS);
  struct recorder *r = calloc(1, sizeof *r);
  if (r == NULL || (r->base = event_base_new()) == NULL) _exit(2);
  r->break_on_progress = true;
  r->proc = tool_proc_start(r->base, &t.cfg, "{}", on_event, r);
  if (r->proc == NULL || event_base_dispatch(r->base) != 0 || r->n != 1) _exit(2);
  pid_t pid = pid_in(r->ev[0].message);
  if (write(report, &pid, sizeof pid) != (ssize_t)sizeof pid) _exit(2);
  event_base_dispatch(r->base); /* forever.sh never ends: until killed */
  _exit(2);
}

/* turnd killed with SIGKILL runs no code, yet the tool it was running dies with
 * it: the tool asked for that between fork and exec. (What the tool started
 * itself, here forever.sh's background sleep, is not its to ask for; the test
 * ends that.) */
static void test_tool_proc_dies_with_turnd(void **state) {
  (void)state;
  int report[2];
  assert_int_equal(pipe(report), 0);
  pid_t host = fork();
  assert_true(host >= 0);
  if (host == 0) {
    close(report[0]);
    host_run(report[1]);
  }
  close(report[1]);
  pid_t tool = 0;
  ssize_t n = read(report[0], &tool, sizeof tool);
  close(report[0]);
  if (n != (ssize_t)sizeof tool) kill(host, SIGKILL);
  assert_int_equal(n, sizeof tool);
  bool was_alive = pid_alive(tool);
  assert_int_equal(kill(host, SIGKILL), 0);
  assert_int_equal(waitpid(host, NULL, 0), host);
  /* A safety net of 10 s, not a timing assertion: the kill is asynchronous. */
  for (int i = 0; i < 1000 && pid_alive(tool); i++) {
    struct timespec ms10 = {0, 10 * 1000 * 1000};
    nanosleep(&ms10, NULL);
  }
  bool gone = !pid_alive(tool);
  kill(-tool, SIGKILL); /* the group's leftovers */
  assert_true(was_alive);
  assert_true(gone);
}

/* The owner kills the call from outside a callback: no more events, and the
 * group (the tool and both its sleeps) is killed and reaped on the loop. */
static void test_tool_proc_kill_from_owner(void **state) {
  (void)state;
  int fds_before = count_fds();
  struct tool t;
  tool_init(&t, "forever.sh", NULL, SAFETY_MS);
  struct recorder *r = calloc(1, sizeof *r);
  assert_non_null(r);
  r->base = event_base_new();
  r->break_on_progress = true;
  r->proc = tool_proc_start(r->base, &t.cfg, "{}", on_event, r);
  assert_non_null(r->proc);
  assert_int_equal(event_base_dispatch(r->base), 0); /* broken at the progress */
  assert_int_equal(r->n, 1);
  pid_t pgid = pid_in(r->ev[0].message);
  assert_true(live_in_group(pgid) >= 2); /* the shell and its sleeps */
  tool_proc_kill(r->proc);
  assert_int_equal(event_base_dispatch(r->base), 1); /* the reaper was the last */
  event_base_free(r->base);
  assert_int_equal(r->n, 1);
  assert_group_gone(pgid);
  assert_int_equal(count_fds(), fds_before);
  recorder_free(r);
}

/* The owner kills the call from inside its PROGRESS callback (a cancel that
 * the progress itself set off): the freeing waits until the callback returns. */
static void test_tool_proc_kill_from_callback(void **state) {
  (void)state;
  struct tool t;
  tool_init(&t, "forever.sh", NULL, SAFETY_MS);
  int fds_before = count_fds();
  struct recorder *r = calloc(1, sizeof *r);
  assert_non_null(r);
  r->base = event_base_new();
  r->kill_on_progress = true;
  r->proc = tool_proc_start(r->base, &t.cfg, "{}", on_event, r);
  assert_non_null(r->proc);
  assert_int_equal(event_base_dispatch(r->base), 1);
  event_base_free(r->base);
  assert_int_equal(r->n, 1);
  assert_group_gone(pid_in(r->ev[0].message));
  assert_int_equal(count_fds(), fds_before);
  recorder_free(r);
}

/* Killed before the loop ever ran: the program may not even have been seen. */
static void test_tool_proc_kill_at_once(void **state) {
  (void)state;
  struct tool t;
  tool_init(&t, "forever.sh", NULL, SAFETY_MS);
  int fds_before = count_fds();
  struct event_base *base = event_base_new();
  struct recorder *r = calloc(1, sizeof *r);
  assert_non_null(r);
  struct tool_proc *p = tool_proc_start(base, &t.cfg, "{}", on_event, r);
  assert_non_null(p);
  tool_proc_kill(p);
  assert_int_equal(event_base_dispatch(base), 1);
  event_base_free(base);
  assert_int_equal(r->n, 0);
  assert_int_equal(count_fds(), fds_before);
  recorder_free(r);
}

static void test_tool_proc_timeout(void **state) {
  (void)state;
  struct tool t;
  tool_init(&t, "forever.sh", NULL, 200); /* the behaviour under test */
  struct recorder *r = run_tool(&t, "{}");
  assert_int_equal(r->ev[0].kind, TOOL_PROC_PROGRESS);
  expect_done(r, 1, false, "the tool did not finish within 0.2 s", NULL);
  assert_group_gone(pid_in(r->ev[0].message));
  recorder_free(r);
}

static char *big_input(void) {
  size_t n = 1u << 20;
  char *s = malloc(n + 16);
  assert_non_null(s);
  memcpy(s, "{\"data\":\"", 9);
  memset(s + 9, 'x', n);
  memcpy(s + 9 + n, "\"}", 3);
  return s;
}

/* 1 MiB of input to a tool that never reads it: the pipe fills, turnd waits
 * on it without blocking and drops the rest once the tool is gone. SIGPIPE is
 * left at its default here, so a stray one would end the test. */
static void test_tool_proc_big_input_never_read(void **state) {
  (void)state;
  char *input = big_input();
  struct tool t;
  tool_init(&t, "noread.sh", NULL, SAFETY_MS);
  struct recorder *r = run_tool(&t, input);
  assert_int_equal(r->ev[0].kind, TOOL_PROC_PROGRESS);
  expect_done(r, 1, true, "did not read", NULL);
  assert_group_gone(pid_in(r->ev[0].message));
  recorder_free(r);
  free(input);
}

/* The tool closes its stdin while turnd still has input for it: the write
 * fails with EPIPE, which must neither raise SIGPIPE (left at its default here)
 * nor fail the call. */
static void test_tool_proc_stdin_closed_early(void **state) {
  (void)state;
  char *input = big_input();
  struct tool t;
  tool_init(&t, "noread.sh", "close", SAFETY_MS);
  struct recorder *r = run_tool(&t, input);
  assert_int_equal(r->ev[0].kind, TOOL_PROC_PROGRESS);
  expect_done(r, 1, true, "did not read", NULL);
  assert_group_gone(pid_in(r->ev[0].message));
  recorder_free(r);
  free(input);
}

/* After its result the tool sleeps on: after the grace its group is killed,
 * and its result stands. */
static void test_tool_proc_lingering_after_result(void **state) {
  (void)state;
  char *input = big_input();
  struct tool t;
  tool_init(&t, "noread.sh", "linger", SAFETY_MS);
  struct recorder *r = run_tool(&t, input);
  expect_done(r, 1, true, "did not read", NULL);
  assert_group_gone(pid_in(r->ev[0].message));
  recorder_free(r);
  free(input);
}

/* A program that cannot be executed is reported as DONE from the loop. */
static void test_tool_proc_cannot_start(void **state) {
  (void)state;
  char dir[] = "/tmp/tool_proc_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char plain[600], noshebang[600];
  snprintf(plain, sizeof plain, "%s/plain", dir);
  snprintf(noshebang, sizeof noshebang, "%s/noshebang", dir);
  FILE *f = fopen(plain, "w");
  assert_non_null(f);
  fputs("#!/bin/sh\n", f);
  fclose(f); /* 0644: not executable */
  f = fopen(noshebang, "w");
  assert_non_null(f);
  fputs("echo no interpreter line\n", f);
  fclose(f);
  assert_int_equal(chmod(noshebang, 0755), 0);

  struct tool t;
  tool_init(&t, "good.sh", NULL, SAFETY_MS);
  t.argv[0] = plain;
  struct recorder *r = run_tool(&t, "{}");
  expect_done(r, 0, false, "the tool could not start: Permission denied", NULL);
  recorder_free(r);

  t.argv[0] = noshebang;
  r = run_tool(&t, "{}");
  expect_done(r, 0, false, "the tool could not start: Exec format error", NULL);
  recorder_free(r);

  char missing[600];
  snprintf(missing, sizeof missing, "%s/missing", dir);
  t.argv[0] = missing;
  r = run_tool(&t, "{}");
  expect_done(r, 0, false, "the tool could not start: No such file or directory", NULL);
  recorder_free(r);

  tool_init(&t, "good.sh", NULL, SAFETY_MS); /* the folder went away */
  t.cfg.cwd = missing;
  r = run_tool(&t, "{}");
  expect_done(r, 0, false, "the tool could not start: No such file or directory", NULL);
  recorder_free(r);

  /* Killed before its DONE was due: nothing is reported. */
  struct event_base *base = event_base_new();
  struct recorder *quiet = calloc(1, sizeof *quiet);
  assert_non_null(quiet);
  struct tool_proc *p = tool_proc_start(base, &t.cfg, "{}", on_event, quiet);
  assert_non_null(p);
  tool_proc_kill(p);
  assert_int_equal(event_base_dispatch(base), 1);
  event_base_free(base);
  assert_int_equal(quiet->n, 0);
  recorder_free(quiet);

  unlink(plain);
  unlink(noshebang);
  rmdir(dir);
}

/* A turnd whose stdin and stdout were closed (a daemon's), their numbers free
 * again: a tool that cannot start is still reported as one that could not
 * start. The run is in a child process, which closes its own 0 and 1 and
 * sends the summary back over a pipe. */
static void test_tool_proc_cannot_start_without_stdio(void **state) {
  (void)state;
  int back[2];
  assert_int_equal(pipe(back), 0);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    close(back[0]);
    struct tool t;
    tool_init(&t, "good.sh", NULL, SAFETY_MS);
    t.argv[0] = (char *)"/nonexistent/tool";
    struct recorder *r = calloc(1, sizeof *r);
    if (r == NULL || (r->base = event_base_new()) == NULL) _exit(2);
    close(0);
    close(1);
    r->proc = tool_proc_start(r->base, &t.cfg, "{}", on_event, r);
    if (r->proc == NULL) _exit(2);
    event_base_dispatch(r->base);
    const char *said = r->n == 1 && r->ev[0].summary != NULL ? r->ev[0].summary : "?";
    ssize_t w = write(back[1], said, strlen(said));
    _exit(w < 0 ? 2 : 0);
  }
  close(back[1]);
  char said[256] = {0};
  ssize_t n = read(back[0], said, sizeof said - 1);
  close(back[0]);
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(n > 0);
  assert_string_equal(said, "the tool could not start: No such file or directory");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tool_proc_good_tool),
      cmocka_unit_test(test_tool_proc_slow_tool),
      cmocka_unit_test(test_tool_proc_two_at_once),
      cmocka_unit_test(test_tool_proc_crash_by_signal),
      cmocka_unit_test(test_tool_proc_exit_before_result),
      cmocka_unit_test(test_tool_proc_output_closed_before_result),
      cmocka_unit_test(test_tool_proc_invalid_output),
      cmocka_unit_test(test_tool_proc_flood_of_garbage),
      cmocka_unit_test(test_tool_proc_flood_of_progress),
      cmocka_unit_test(test_tool_proc_flood_one_long_line),
      cmocka_unit_test(test_tool_proc_big_result_line),
      cmocka_unit_test(test_tool_proc_flood_over_total),
      cmocka_unit_test(test_tool_proc_unsafe_text_is_replaced),
      cmocka_unit_test(test_tool_proc_long_text_is_cut_on_a_code_point),
      cmocka_unit_test(test_tool_proc_crlf_and_blank_lines),
      cmocka_unit_test(test_tool_proc_last_line_without_newline),
      cmocka_unit_test(test_tool_proc_clean_child),
      cmocka_unit_test(test_tool_proc_kill_from_owner),
      cmocka_unit_test(test_tool_proc_dies_with_turnd),
      cmocka_unit_test(test_tool_proc_kill_from_callback),
      cmocka_unit_test(test_tool_proc_kill_at_once),
      cmocka_unit_test(test_tool_proc_timeout),
      cmocka_unit_test(test_tool_proc_big_input_never_read),
      cmocka_unit_test(test_tool_proc_stdin_closed_early),
      cmocka_unit_test(test_tool_proc_lingering_after_result),
      cmocka_unit_test(test_tool_proc_cannot_start),
      cmocka_unit_test(test_tool_proc_cannot_start_without_stdio),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
