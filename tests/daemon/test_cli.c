/* The turn client against a real turnd: it shows a turn as it streams, exits 0 on
 * end_turn, asks y/n for an approval on stdin, and when its connection drops
 * mid-turn (a proxy cuts it at a chosen point) re-attaches with after= and shows
 * exactly what an undisturbed run shows. It proves itself with a device token
 * from --token-file, TURN_TOKEN or the default file, never shows that token, gets
 * one with `turn pair`, gives the PIN for a step-up and locks and unlocks turnd.
 * XDG_CONFIG_HOME points into a temporary folder, so the owner's own token file
 * is never read or written. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "harness.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

/* A turn with everything the client shows: text, reasoning, a tier-2 tool call
 * that waits for the owner, and text after it. */
static const char lamp_script[] =
    "{\"default\": ["
    "[{\"text\": \"one\\n\"}, {\"reasoning\": \"thinking it over\"}, {\"text\": "
    "\"two\\n\"},"
    " {\"tool_use\": {\"name\": \"lamp_set\", \"input\": {\"name\": \"desk\", \"on\": "
    "true}}}],"
    "[{\"text\": \"three\\n\"}, {\"delay_ms\": 20}, {\"text\": \"four\\n\"}]]}";

/* What the client shows for lamp_script when the owner says yes. */
static const char lamp_yes[] = "one\n"
                               "(thinking) thinking it over\n"
                               "two\n"
                               "  lamp_set: ok, desk lamp is on (simulated)\n"
                               "three\n"
                               "four\n";

static const char pin[] = "2468"; /* the owner's PIN, where a test sets one */
static char config_home[64];      /* XDG_CONFIG_HOME for every client run */
static char token[256];           /* the token of the turnd running now */

/* A new pairing link (http://HOST:PORT/#pair=CODE) for the turnd on t. */
static void pair_link(const struct turnd_proc *t, char *out, size_t cap) {
  const char *args[] = {"pair-code", "--data", t->data_dir, NULL};
  assert_int_equal(harness_run_line(args, NULL, out, cap), 0);
  if (strstr(out, "/#pair=") == NULL) fail_msg("not a pairing link: %s", out);
}

static void set_pin(const struct turnd_proc *t) {
  const char *args[] = {"set-pin", "--data", t->data_dir, NULL};
  char line[256], input[64];
  snprintf(input, sizeof input, "%s\n", pin);
  assert_int_equal(harness_run_line(args, input, line, sizeof line), 0);
}

/* turnd with a script model from text and more arguments (NULL-terminated, may
 * be NULL). The device harness_start paired is the client's: its token goes in
 * TURN_TOKEN, so every client run proves itself unless a test says otherwise. */
static void start_turnd(struct turnd_proc *t, const char *script,
                        const char *const *more) {
  harness_start_script(t, script, more);
  snprintf(token, sizeof token, "%s", t->token);
  setenv("TURN_TOKEN", token, 1);
}

/* For the tests that are not about the guard: approving the lamp (a physical
 * effect, which takes the PIN by default) needs no PIN. */
static void start_with_script(struct turnd_proc *t, const char *script) {
  static const char *const no_step_up[] = {"--step-up-effects", "none", NULL};
  start_turnd(t, script, no_step_up);
}

/* The token never shows, on either stream, whatever happened. */
static void assert_no_token(const struct cli_run *r) {
  if (token[0] != '\0' &&
      (strstr(r->out, token) != NULL || strstr(r->err, token) != NULL))
    fail_msg("the token was shown:\nstdout:\n%s\nstderr:\n%s", r->out, r->err);
}

/* Runs `turn --url URL [more...] TEXT` with input on its standard input. */
static void run_cli(const char *url, const char *text, const char *input,
                    const char *const *more, struct cli_run *r) {
  const char *args[16] = {"--url", url};
  size_t n = 2;
  for (size_t i = 0; more != NULL && more[i] != NULL && n < 14; i++)
    args[n++] = more[i];
  args[n++] = text;
  args[n] = NULL;
  assert_int_equal(harness_cli(args, input, r), 0);
}

static void expect_output(const struct cli_run *r, int status, const char *out) {
  assert_no_token(r);
  if (r->status != status || strcmp(r->out, out) != 0)
    fail_msg("exit %d (want %d); stdout:\n%s\nwant:\n%s\nstderr:\n%s", r->status, status,
             r->out, out, r->err);
}

static void expect_in(const char *text, const char *want) {
  if (strstr(text, want) == NULL) fail_msg("no \"%s\" in:\n%s", want, text);
}

/* How many lines of the proxy's log start with prefix. */
static size_t count_requests(const char *log, const char *prefix) {
  size_t n = 0;
  for (const char *p = log; p != NULL && *p != '\0';) {
    if (strncmp(p, prefix, strlen(prefix)) == 0) n++;
    p = strchr(p, '\n');
    if (p != NULL) p++;
  }
  return n;
}

/* ---------------------------------------------------------------- tests */

/* A plain turn: the reply text is shown as it came, the session goes to stderr,
 * and end_turn exits 0. */
static void test_cli_streams_a_turn(void **state) {
  (void)state;
  struct turnd_proc t;
  start_with_script(&t, "{\"default\": [[{\"reasoning\": \"a greeting\"},"
                        " {\"text\": \"Hello, \"}, {\"text\": \"{{input}}!\"}]]}");
  struct cli_run r;
  run_cli(t.base_url, "world", NULL, NULL, &r);
  /* reply text without a final newline gets one before the client exits */
  expect_output(&r, 0, "(thinking) a greeting\nHello, world!\n");
  assert_non_null(strstr(r.err, "session "));
  cli_run_free(&r);
  /* Unquoted, the text's words are joined by a space each, after -- too. */
  const char *words[] = {"--url", t.base_url, "big", "wide", "world", NULL};
  assert_int_equal(harness_cli(words, NULL, &r), 0);
  expect_output(&r, 0, "(thinking) a greeting\nHello, big wide world!\n");
  cli_run_free(&r);
  const char *literal[] = {"--url", t.base_url, "--", "lock", "-h", NULL};
  assert_int_equal(harness_cli(literal, NULL, &r), 0);
  expect_output(&r, 0, "(thinking) a greeting\nHello, lock -h!\n");
  cli_run_free(&r);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* A model's reasoning in pieces stays on one line; what a terminal would act on
 * in the model's text (an escape that retitles it, a carriage return that
 * rewrites a line, a C1 control) is shown as U+FFFD, never written raw. */
static void test_cli_shows_model_text_safely(void **state) {
  (void)state;
  struct turnd_proc t;
  start_with_script(&t,
                    "{\"default\": [[{\"reasoning\": \"first, \"},"
                    " {\"reasoning\": \"then\"}, {\"text\": \"a\\u001b]0;T\\u0007b\"},"
                    " {\"text\": \"\\rc\\u009bd\\te\\n\"}]]}");
  struct cli_run r;
  run_cli(t.base_url, "x", NULL, NULL, &r);
#define FFFD "\xEF\xBF\xBD"
  expect_output(&r, 0,
                "(thinking) first, then\na" FFFD "]0;T" FFFD "b" FFFD "c" FFFD "d\te\n");
#undef FFFD
  cli_run_free(&r);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* The approval, answered on standard input: yes runs the tool, no (and no answer
 * at all) does not. Either way the turn goes on to its end. */
static void test_cli_answers_an_approval(void **state) {
  (void)state;
  struct turnd_proc t;
  start_with_script(&t, lamp_script);
  struct cli_run r;
  run_cli(t.base_url, "lights", "y\n", NULL, &r);
  expect_output(&r, 0, lamp_yes);
  /* The question is on stderr: with stdout sent to a file, it still shows. */
  expect_in(r.err,
            "? run lamp_set (physical) with {\"name\":\"desk\",\"on\":true} [y/n] ");
  cli_run_free(&r);
  /* Only "y" or "yes" is a yes: a line that merely starts with y is not. */
  run_cli(t.base_url, "lights", "yep, and the next one too\n", NULL, &r);
  expect_in(r.out, "lamp_set: rejected, the owner said no");
  cli_run_free(&r);
  static const char no[] = "one\n"
                           "(thinking) thinking it over\n"
                           "two\n"
                           "  lamp_set: rejected, the owner said no\n"
                           "three\n"
                           "four\n";
  run_cli(t.base_url, "lights", "n\n", NULL, &r);
  expect_output(&r, 0, no);
  cli_run_free(&r);
  run_cli(t.base_url, "lights", "", NULL, &r); /* end of input: no */
  expect_output(&r, 0, no);
  cli_run_free(&r);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* Runs `turn --url URL lights` on t, gives it input on a stdin it keeps open,
 * and sends SIGINT once prompt shows on its stderr. Checks that it exits 130,
 * having said it cancelled the turn, and that the turn ended cancelled with
 * its call never decided. */
static void expect_interrupt_cancels(const struct turnd_proc *t, const char *input,
                                     const char *prompt) {
  int in[2], err[2];
  assert_int_equal(pipe(in), 0);
  assert_int_equal(pipe(err), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int quiet = open("/dev/null", O_WRONLY);
    dup2(in[0], STDIN_FILENO);
    dup2(quiet, STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    close(in[0]), close(in[1]), close(err[0]), close(err[1]), close(quiet);
    execl(TURN_CLI_PATH, TURN_CLI_PATH, "--url", t->base_url, "lights", (char *)NULL);
    _exit(127);
  }
  close(in[0]); /* in[1] stays open: what is asked next gets no answer, nor an end */
  close(err[1]);
  assert_int_equal(write(in[1], input, strlen(input)), (ssize_t)strlen(input));
  char said[4096];
  size_t len = harness_read_until(err[0], said, 0, sizeof said, prompt);
  expect_in(said, prompt);
  assert_int_equal(kill(pid, SIGINT), 0);
  harness_read_until(err[0], said, len, sizeof said, NULL);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  close(in[1]);
  close(err[0]);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 130)
    fail_msg("status %d; stderr:\n%s", status, said);
  assert_null(strstr(said, "answering no")); /* a ^C is no answer */
  const char *cancelled = strstr(said, "(turn t-");
  if (cancelled == NULL) fail_msg("no cancel said:\n%s", said);
  char turn_id[64];
  assert_int_equal(sscanf(cancelled, "(turn %63s cancelled)", turn_id), 1);
  char url[256];
  snprintf(url, sizeof url, "%s/api/turns/%s", t->base_url, turn_id);
  struct http_stream s;
  assert_int_equal(http_stream("GET", url, NULL, 0, &s), 0);
  assert_int_equal(s.status, 200);
  assert_true(s.n > 0);
  expect_in(s.lines[s.n - 1], "\"stop_reason\":\"cancelled\"");
  /* The owner gave no answer: the cancel closed the approval, not a no. */
  expect_in(s.raw, "\"summary\":\"not run: the turn was cancelled while its approval "
                   "waited\"");
  http_stream_free(&s);
}

/* ^C at the approval's question, or at the PIN's after a yes: the client asks
 * turnd to cancel the turn, rather than leave it waiting for an answer nobody
 * will give (or answer no for the owner), says so and exits 130. */
static void test_cli_interrupt_cancels_the_turn(void **state) {
  (void)state;
  struct turnd_proc t;
  start_with_script(&t, lamp_script);
  expect_interrupt_cancels(&t, "", "[y/n] ");
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
  start_turnd(&t, lamp_script, NULL); /* approving the lamp takes the PIN */
  set_pin(&t);
  expect_interrupt_cancels(&t, "y\n", "PIN: ");
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* Exit codes: 3 for a turn that ends otherwise than end_turn, 2 for a bad
 * command line, 1 when turnd cannot be reached (and libcurl's reason said). */
static void test_cli_exit_codes(void **state) {
  (void)state;
  struct turnd_proc t;
  start_with_script(&t,
                    "{\"default\": [[{\"text\": \"cut\"}, {\"stop\": \"max_tokens\"}]]}");
  struct cli_run r;
  run_cli(t.base_url, "x", NULL, NULL, &r);
  expect_output(&r, 3, "cut\n");
  assert_non_null(strstr(r.err, "(the turn ended: max_tokens)"));
  cli_run_free(&r);
  char slash[128]; /* the address as turnd's pairing link writes it */
  snprintf(slash, sizeof slash, "%s/", t.base_url);
  run_cli(slash, "x", NULL, NULL, &r);
  expect_output(&r, 3, "cut\n");
  cli_run_free(&r);
  run_cli("127.0.0.1:8080", "x", NULL, NULL, &r);
  assert_int_equal(r.status, 2);
  expect_in(r.err, "--url must start with http:// or https://");
  cli_run_free(&r);
  /* An address with no room left for the routes: refused, not cut. */
  char long_url[1000];
  int n = snprintf(long_url, sizeof long_url, "http://127.0.0.1:1/");
  memset(long_url + n, 'a', sizeof long_url - (size_t)n - 1);
  long_url[sizeof long_url - 1] = '\0';
  run_cli(long_url, "x", NULL, NULL, &r);
  assert_int_equal(r.status, 2);
  expect_in(r.err, "the address is too long");
  cli_run_free(&r);
  static const char *const no_text[] = {"--url", "http://127.0.0.1:1", NULL};
  assert_int_equal(harness_cli(no_text, NULL, &r), 0);
  assert_int_equal(r.status, 2);
  cli_run_free(&r);
  char gone[64];
  snprintf(gone, sizeof gone, "%s", t.base_url);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
  run_cli(gone, "x", NULL, NULL, &r);
  assert_int_equal(r.status, 1);
  assert_string_equal(r.out, "");
  /* why, as libcurl words it (its wording changes between versions): nothing
   * listens there any more */
  expect_in(r.err, "no answer from turnd at ");
  expect_in(r.err, curl_easy_strerror(CURLE_COULDNT_CONNECT));
  cli_run_free(&r);
  static const char *const gone_sessions[] = {"--url", "http://127.0.0.1:1", "sessions",
                                              NULL};
  assert_int_equal(harness_cli(gone_sessions, NULL, &r), 0);
  assert_int_equal(r.status, 1);
  expect_in(r.err, curl_easy_strerror(CURLE_COULDNT_CONNECT));
  cli_run_free(&r);
}

/* An error answer is reported as what it is. Pins a bug: the client fed the
 * body of a non-200 answer ({"error": ...}) to its NDJSON reader and reported
 * "the server sent a line that does not parse" before the HTTP status. */
static void test_cli_reports_an_error_answer(void **state) {
  (void)state;
  struct turnd_proc t;
  start_with_script(&t, lamp_script);
  struct cli_run r;
  static const char *const unknown[] = {"--session", "20990101-000000-0000", NULL};
  run_cli(t.base_url, "x", NULL, unknown, &r);
  assert_int_equal(r.status, 1);
  assert_string_equal(r.out, "");
  assert_non_null(strstr(r.err, "404"));
  if (strstr(r.err, "does not parse") != NULL)
    fail_msg("an error answer read as a stream:\n%s", r.err);
  cli_run_free(&r);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* The connection drops where cut_after (and, with HARNESS_CUT_TO_EOL, the rest of
 * its line) ends; the client must show exactly what it shows undisturbed, having
 * re-attached `reattach` times (a GET with after=). */
static void run_with_a_drop(const char *cut_after, int flags, const char *want_after,
                            size_t reattach) {
  struct turnd_proc t;
  start_with_script(&t, lamp_script);
  struct cli_run undisturbed;
  run_cli(t.base_url, "lights", "y\n", NULL, &undisturbed);
  expect_output(&undisturbed, 0, lamp_yes);
  struct harness_proxy p;
  assert_int_equal(harness_proxy_start(&p, &t, cut_after, flags), 0);
  struct cli_run r;
  run_cli(p.base_url, "lights", "y\n", NULL, &r);
  harness_proxy_stop(&p);
  expect_output(&r, undisturbed.status, undisturbed.out);
  assert_int_equal(count_requests(p.requests, "POST /api/turns "), 1);
  assert_int_equal(count_requests(p.requests, "GET /api/turns/"), reattach);
  if (want_after != NULL && strstr(p.requests, want_after) == NULL)
    fail_msg("no re-attach with %s in:\n%s", want_after, p.requests);
  assert_null(strstr(r.err, "lost"));
  harness_proxy_free(&p);
  cli_run_free(&r);
  cli_run_free(&undisturbed);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* Dropped right after the line of seq 3 (the text "two"): it re-attaches with
 * after=3, then gets the approval and answers it. */
static void test_cli_reattaches_after_a_drop_at_a_line_end(void **state) {
  (void)state;
  run_with_a_drop("\"delta\":\"two", HARNESS_CUT_TO_EOL, "?after=3 HTTP/1.1", 1);
}

/* Dropped right after the approval (seq 6), which the owner answers before the
 * client notices the drop: the rest comes from after=6, asked nothing twice. */
static void test_cli_reattaches_after_a_drop_after_the_approval(void **state) {
  (void)state;
  run_with_a_drop("\"type\":\"approval\"", HARNESS_CUT_TO_EOL, "?after=6 HTTP/1.1", 1);
}

/* Dropped after the end: nothing to re-attach for. */
static void test_cli_does_not_reattach_after_the_end(void **state) {
  (void)state;
  run_with_a_drop("\"type\":\"end\"", HARNESS_CUT_TO_EOL, NULL, 0);
}

/* Dropped in the middle of a line (seq 5, tool_input): the partial line is not
 * an event; it comes whole after the re-attach from after=4. Pins a bug: the
 * client read the partial line at the end of the broken transfer as a line that
 * does not parse, and gave up instead of re-attaching. */
static void test_cli_reattaches_after_a_drop_mid_line(void **state) {
  (void)state;
  run_with_a_drop("\"type\":\"tool_input\"", 0, "?after=4 HTTP/1.1", 1);
}

/* Every connection drops after one line: the client re-attaches once per event
 * (11 times for this turn) and still shows it all. Pins a bug: the client
 * counted re-attaches over the whole turn and gave up after 5, although each one
 * had brought new events. */
static void test_cli_keeps_reattaching_while_it_makes_progress(void **state) {
  (void)state;
  run_with_a_drop("\"seq\":", HARNESS_CUT_TO_EOL | HARNESS_CUT_EVERY,
                  "?after=10 HTTP/1.1", 11);
}

/* ------------------------------------------------------ tokens and the guard */

/* A short turn for the tests that are about something else. */
static const char hi_script[] = "{\"default\": [[{\"text\": \"hi\"}]]}";

/* Runs the client with exactly args and input; the token never shows. */
static void cli(const char *const *args, const char *input, struct cli_run *r) {
  assert_int_equal(harness_cli(args, input, r), 0);
  assert_no_token(r);
}

/* text to path with mode 0600, as an owner would keep a token. */
static void write_secret(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
  assert_int_equal(chmod(path, 0600), 0);
}

static void read_line(const char *path, char *out, size_t cap) {
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  assert_non_null(fgets(out, (int)cap, f));
  fclose(f);
  out[strcspn(out, "\n")] = '\0';
}

static void expect_mode(const char *path, unsigned mode) {
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  if ((st.st_mode & 0777) != mode)
    fail_msg("%s has mode %o, want %o", path, st.st_mode & 0777, mode);
}

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

/* Empties the client's config folder (the default token file's home). */
static void clear_config(void) {
  nftw(config_home, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  assert_int_equal(mkdir(config_home, 0700), 0);
}

/* The default file holds text. */
static void write_default_token(const char *text) {
  char path[128];
  snprintf(path, sizeof path, "%s/turn", config_home);
  mkdir(path, 0700);
  snprintf(path, sizeof path, "%s/turn/token", config_home);
  write_secret(path, text);
}

/* The token comes from --token-file, else TURN_TOKEN, else the default file;
 * the first source that has one wins even when a later one is right. Blanks
 * after the token in a file are not part of it. */
static void test_cli_finds_the_token(void **state) {
  (void)state;
  struct turnd_proc t;
  start_with_script(&t, hi_script);
  struct cli_run r;
  run_cli(t.base_url, "x", NULL, NULL, &r); /* TURN_TOKEN, set by the start */
  expect_output(&r, 0, "hi\n");
  cli_run_free(&r);

  char dir[64] = "/tmp/turn-cli-XXXXXX", file[96], text[300];
  assert_non_null(mkdtemp(dir));
  snprintf(file, sizeof file, "%s/token", dir);
  snprintf(text, sizeof text, "%s \t\r\n", token);
  write_secret(file, text);
  setenv("TURN_TOKEN", "turnd_not-the-token", 1);
  const char *const with_file[] = {"--token-file", file, NULL};
  run_cli(t.base_url, "x", NULL, with_file, &r);
  expect_output(&r, 0, "hi\n");
  cli_run_free(&r);

  write_default_token(text); /* right, but TURN_TOKEN comes first */
  run_cli(t.base_url, "x", NULL, NULL, &r);
  expect_output(&r, 1, "");
  expect_in(r.err, "turnd refused the token (HTTP 401)");
  expect_in(r.err, "turn pair URL CODE");
  assert_null(strstr(r.err, "turnd_not-the-token"));
  cli_run_free(&r);

  unsetenv("TURN_TOKEN");
  run_cli(t.base_url, "x", NULL, NULL, &r); /* the default file */
  expect_output(&r, 0, "hi\n");
  cli_run_free(&r);

  remove(file);
  rmdir(dir);
  clear_config();
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* Without any token every command gets turnd's 401, and the client says how to
 * pair rather than only the status. */
static void test_cli_without_a_token_says_how_to_pair(void **state) {
  (void)state;
  struct turnd_proc t;
  start_with_script(&t, hi_script);
  unsetenv("TURN_TOKEN");
  const char *const turn[] = {"--url", t.base_url, "x", NULL};
  const char *const sessions[] = {"--url", t.base_url, "sessions", NULL};
  const char *const history[] = {"--url", t.base_url, "history", "20990101-000000-0000",
                                 NULL};
  const char *const lock[] = {"--url", t.base_url, "lock", NULL};
  const char *const unlock[] = {"--url", t.base_url, "unlock", NULL};
  const char *const *const commands[] = {turn, sessions, history, lock, unlock};
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
    struct cli_run r;
    cli(commands[i], "2468\n", &r);
    if (r.status != 1 || strstr(r.err, "(HTTP 401) and none was found") == NULL ||
        strstr(r.err, "`turn pair URL CODE`") == NULL ||
        strstr(r.err, "TURN_TOKEN or") == NULL || strstr(r.out, "PIN") != NULL)
      fail_msg("%s: exit %d\nstdout:\n%s\nstderr:\n%s", commands[i][2], r.status, r.out,
               r.err);
    cli_run_free(&r);
  }
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* A token file that cannot be read, or holds more than one token's line, stops
 * the client before any request, and what the file holds is not shown. */
static void test_cli_refuses_a_bad_token_file(void **state) {
  (void)state;
  char dir[64] = "/tmp/turn-cli-XXXXXX", file[96];
  assert_non_null(mkdtemp(dir));
  snprintf(file, sizeof file, "%s/token", dir);
  struct cli_run r;
  const char *const missing[] = {"--url", "http://127.0.0.1:1", "--token-file", file, "x",
                                 NULL};
  cli(missing, NULL, &r);
  assert_int_equal(r.status, 1);
  expect_in(r.err, "cannot read the token file");
  cli_run_free(&r);
  write_secret(file, "turnd_secret-part\nsecond line\n");
  cli(missing, NULL, &r);
  assert_int_equal(r.status, 1);
  expect_in(r.err, "does not hold a token");
  assert_null(strstr(r.err, "secret-part"));
  assert_null(strstr(r.err, "no answer")); /* no request was made */
  cli_run_free(&r);
  remove(file);
  rmdir(dir);
}

/* `turn pair` with the link turnd prints, into a --token-file whose folders do
 * not exist yet, and with URL and CODE into the default file: each stores a
 * token that works, mode 0600 in a 0700 folder, and says where but not what. A
 * spent code and a taken name are refused with turnd's reasons. */
static void test_cli_pairs_with_a_code(void **state) {
  (void)state;
  struct turnd_proc t;
  start_with_script(&t, hi_script);
  unsetenv("TURN_TOKEN");
  char dir[64] = "/tmp/turn-cli-XXXXXX", folder[96], file[128], link[256], stored[300];
  assert_non_null(mkdtemp(dir));
  snprintf(folder, sizeof folder, "%s/deep/er", dir);
  snprintf(file, sizeof file, "%s/token", folder);
  pair_link(&t, link, sizeof link);
  struct cli_run r;
  const char *const by_link[] = {"pair",   link, "--token-file", file, "--name",
                                 "laptop", NULL};
  cli(by_link, NULL, &r);
  if (r.status != 0) fail_msg("exit %d\n%s%s", r.status, r.out, r.err);
  expect_in(r.out, file);
  read_line(file, stored, sizeof stored);
  assert_true(strncmp(stored, "turnd_", 6) == 0);
  assert_null(strstr(r.out, stored));
  assert_null(strstr(r.err, stored));
  expect_mode(file, 0600);
  expect_mode(folder, 0700);
  cli_run_free(&r);
  const char *const with_file[] = {"--token-file", file, NULL};
  run_cli(t.base_url, "x", NULL, with_file, &r);
  expect_output(&r, 0, "hi\n");
  cli_run_free(&r);

  char other[128];
  snprintf(other, sizeof other, "%s/other", dir);
  const char *const again[] = {"pair", link, "--token-file", other, NULL};
  cli(again, NULL, &r); /* a code works once */
  assert_int_equal(r.status, 1);
  expect_in(r.err, "HTTP 403 pair_code_invalid: ");
  assert_int_equal(access(other, F_OK), -1);
  cli_run_free(&r);

  pair_link(&t, link, sizeof link);
  char *hash = strstr(link, "/#pair=");
  *hash = '\0';
  const char *const taken[] = {"pair", link, hash + 7, "--name", "laptop", NULL};
  cli(taken, NULL, &r);
  assert_int_equal(r.status, 1);
  expect_in(r.err, "HTTP 409 device_name_taken: ");
  expect_in(r.err, "--name NAME");
  cli_run_free(&r);

  pair_link(&t, link, sizeof link);
  hash = strstr(link, "/#pair=");
  *hash = '\0';
  const char *const by_code[] = {"pair", link, hash + 7, NULL};
  cli(by_code, NULL, &r);
  if (r.status != 0) fail_msg("exit %d\n%s%s", r.status, r.out, r.err);
  char path[128];
  snprintf(path, sizeof path, "%s/turn/token", config_home);
  expect_in(r.out, path);
  expect_mode(path, 0600);
  snprintf(path, sizeof path, "%s/turn", config_home);
  expect_mode(path, 0700);
  cli_run_free(&r);
  run_cli(t.base_url, "x", NULL, NULL, &r);
  expect_output(&r, 0, "hi\n");
  cli_run_free(&r);
  /* The address is noted beside the default file: no --url needed now, also
   * when the note ends in a slash and CR LF, as an editor may leave it. */
  const char *const no_url[] = {"x", NULL};
  cli(no_url, NULL, &r);
  expect_output(&r, 0, "hi\n");
  cli_run_free(&r);
  char note[128], noted[160];
  snprintf(note, sizeof note, "%s/turn/url", config_home);
  snprintf(noted, sizeof noted, "%s/\r\n", t.base_url);
  write_secret(note, noted);
  cli(no_url, NULL, &r);
  expect_output(&r, 0, "hi\n");
  cli_run_free(&r);
  /* The note goes with the default file's token only: another token is for
   * another turnd, and is not sent to this one. */
  setenv("TURN_TOKEN", token, 1);
  cli(no_url, NULL, &r);
  unsetenv("TURN_TOKEN");
  assert_int_not_equal(r.status, 0);
  assert_null(strstr(r.err, t.base_url));
  cli_run_free(&r);

  nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  clear_config();
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* Five wrong codes in a minute and turnd stops listening for a while: the client
 * shows its 429 with the wait. */
static void test_cli_pair_shows_too_many_attempts(void **state) {
  (void)state;
  struct turnd_proc t;
  start_with_script(&t, hi_script);
  char dir[64] = "/tmp/turn-cli-XXXXXX", file[96];
  assert_non_null(mkdtemp(dir));
  snprintf(file, sizeof file, "%s/token", dir);
  const char *const wrong[] = {"pair",         t.base_url, "0000-0000",
                               "--token-file", file,       NULL};
  struct cli_run r;
  for (int i = 0; i < 5; i++) {
    cli(wrong, NULL, &r);
    assert_int_equal(r.status, 1);
    expect_in(r.err, "HTTP 403 pair_code_invalid");
    cli_run_free(&r);
  }
  cli(wrong, NULL, &r);
  assert_int_equal(r.status, 1);
  expect_in(r.err, "HTTP 429 too_many_attempts: ");
  expect_in(r.err, "(try again in ");
  cli_run_free(&r);
  assert_int_equal(access(file, F_OK), -1);
  rmdir(dir);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* lamp_script's head and tail around the approval, which needs the PIN. */
#define LAMP_HEAD                 \
  "one\n"                         \
  "(thinking) thinking it over\n" \
  "two\n"
#define LAMP_TAIL "three\nfour\n"

/* With a PIN set, approving the lamp (a physical effect) takes the PIN: asked
 * after the y, again after a wrong one, at most three times; after that the
 * client answers no so the turn goes on. A no needs no PIN. */
static void test_cli_gives_the_pin_for_a_step_up(void **state) {
  (void)state;
  struct turnd_proc t;
  start_turnd(&t, lamp_script, NULL);
  set_pin(&t);
  struct cli_run r;
  run_cli(t.base_url, "lights", "y\n2468\n", NULL, &r);
  expect_output(&r, 0,
                LAMP_HEAD "(guard) step_up: Approving this needs your PIN.\n"
                          "(guard) passed\n"
                          "  lamp_set: ok, desk lamp is on (simulated)\n" LAMP_TAIL);
  expect_in(r.err, "[y/n] \nPIN: \n"); /* the prompts, on stderr */
  cli_run_free(&r);

  run_cli(t.base_url, "lights", "y\n1111\n2468\n", NULL, &r);
  expect_output(&r, 0,
                LAMP_HEAD "(guard) step_up: Approving this needs your PIN.\n"
                          "(guard) failed: Wrong PIN.\n"
                          "(guard) passed\n"
                          "  lamp_set: ok, desk lamp is on (simulated)\n" LAMP_TAIL);
  expect_in(r.err, "; try again\n");
  cli_run_free(&r);

  run_cli(t.base_url, "lights", "y\n1111\n2222\n3333\n", NULL, &r);
  expect_output(&r, 0,
                LAMP_HEAD "(guard) step_up: Approving this needs your PIN.\n"
                          "(guard) failed: Wrong PIN.\n"
                          "(guard) failed: Wrong PIN.\n"
                          "(guard) failed: Wrong PIN.\n"
                          "  lamp_set: rejected, the owner said no\n" LAMP_TAIL);
  expect_in(r.err, "giving up");
  expect_in(r.err, "answering no");
  cli_run_free(&r);

  run_cli(t.base_url, "lights", "n\n", NULL, &r);
  expect_output(&r, 0,
                LAMP_HEAD "(guard) step_up: Approving this needs your PIN.\n"
                          "  lamp_set: rejected, the owner said no\n" LAMP_TAIL);
  cli_run_free(&r);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* The stream's ask while turnd has no PIN. */
#define NO_PIN_ASK                                                                 \
  "(guard) step_up: Approving this needs your PIN. None is set yet: set one with " \
  "`turnd set-pin`, then approve with it.\n"

/* Runs `turn --url URL lights` on t with a PIN set beside turnd in the middle:
 * gives it first, waits for prompt on its stderr, sets the PIN, gives then. Its
 * exit status, stdout and stderr go to r. */
static void run_setting_the_pin_meanwhile(const struct turnd_proc *t, const char *first,
                                          const char *prompt, const char *then,
                                          struct cli_run *r) {
  int in[2], out[2], err[2];
  assert_int_equal(pipe(in), 0);
  assert_int_equal(pipe(out), 0);
  assert_int_equal(pipe(err), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(in[0], STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    close(in[0]), close(in[1]), close(out[0]), close(out[1]), close(err[0]),
        close(err[1]);
    execl(TURN_CLI_PATH, TURN_CLI_PATH, "--url", t->base_url, "lights", (char *)NULL);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  assert_int_equal(write(in[1], first, strlen(first)), (ssize_t)strlen(first));
  static char said[8192], shown[8192];
  size_t len = harness_read_until(err[0], said, 0, sizeof said, prompt);
  expect_in(said, prompt);
  set_pin(t);
  assert_int_equal(write(in[1], then, strlen(then)), (ssize_t)strlen(then));
  close(in[1]);
  harness_read_until(err[0], said, len, sizeof said, NULL);
  harness_read_until(out[0], shown, 0, sizeof shown, NULL);
  close(out[0]);
  close(err[0]);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  r->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r->out = strdup(shown);
  r->out_len = strlen(shown);
  r->err = strdup(said);
  r->err_len = strlen(said);
}

/* Regression: with no PIN set, a yes to the lamp was asked for a PIN that did
 * not exist, and then answered no. Now the client says turnd has none yet and
 * how to set one, and asks again: the owner sets one beside the running turnd
 * and approves with it. A no there is a no; a yes while there is still none
 * ends in a no, so the turn goes on. */
static void test_cli_approves_once_a_pin_is_set(void **state) {
  (void)state;
  struct turnd_proc t;
  start_turnd(&t, lamp_script, NULL);
  struct cli_run r;
  run_cli(t.base_url, "lights", "y\nn\n", NULL, &r);
  expect_output(
      &r, 0, LAMP_HEAD NO_PIN_ASK "  lamp_set: rejected, the owner said no\n" LAMP_TAIL);
  expect_in(r.err, "turnd has none yet");
  expect_in(r.err, "`turnd set-pin --data DIR`");
  expect_in(r.err, "? approve with the PIN [y/n] \n");
  assert_null(strstr(r.err, "failed")); /* no PIN yet is no failure */
  cli_run_free(&r);

  run_cli(t.base_url, "lights", "y\ny\n2468\n", NULL, &r);
  expect_output(
      &r, 0, LAMP_HEAD NO_PIN_ASK "  lamp_set: rejected, the owner said no\n" LAMP_TAIL);
  expect_in(r.err, "HTTP 409 pin_not_set: approving this needs the owner's PIN");
  expect_in(r.err, "answering no");
  cli_run_free(&r);

  run_setting_the_pin_meanwhile(&t, "y\n", "? approve with the PIN [y/n] ", "y\n2468\n",
                                &r);
  expect_output(&r, 0,
                LAMP_HEAD NO_PIN_ASK
                "(guard) passed\n"
                "  lamp_set: ok, desk lamp is on (simulated)\n" LAMP_TAIL);
  expect_in(r.err, "PIN: ");
  cli_run_free(&r);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* Five wrong PINs in a row lock turnd and stop it checking PINs for a while:
 * the approval that comes after is refused as locked (423), a no too, so the
 * call waits until it expires (soon, here); unlock is told to wait (429). The
 * client shows both as turnd's answers and says what becomes of the call. */
static void test_cli_shows_a_lockout(void **state) {
  (void)state;
  struct turnd_proc t;
  static const char *const expiring[] = {"--approval-timeout", "5", NULL};
  start_turnd(&t, lamp_script, expiring);
  set_pin(&t);
  struct cli_run r;
  run_cli(t.base_url, "lights", "y\n1111\n2222\n3333\n", NULL, &r);
  assert_int_equal(r.status, 0);
  expect_in(r.err, "that was 3 tries, giving up");
  cli_run_free(&r);
  run_cli(t.base_url, "lights", "y\n4444\n5555\n6666\n", NULL, &r); /* the 5th locks */
  assert_int_equal(r.status, 0);
  expect_in(r.err, "; try again\n");
  expect_in(r.err, "the approval failed: turnd answered HTTP 423 locked: ");
  expect_in(r.err, "The call waits until it is answered");
  assert_null(strstr(r.err, "giving up"));    /* no third PIN: it could not help */
  assert_null(strstr(r.err, "answering no")); /* turnd would refuse it as well */
  cli_run_free(&r);
  const char *const unlock[] = {"--url", t.base_url, "unlock", NULL};
  cli(unlock, "2468\n", &r); /* the right PIN, but no PIN is checked now */
  assert_int_equal(r.status, 1);
  expect_in(r.err, "unlocking failed: turnd answered HTTP 429 step_up_locked_out: ");
  expect_in(r.err, "(try again in ");
  cli_run_free(&r);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* `turn lock` and `turn unlock`: locking needs a PIN set; a locked turnd refuses
 * a turn (exit 3, the guard's line); unlock asks the PIN again after a wrong one
 * and gives up without one. */
static void test_cli_locks_and_unlocks(void **state) {
  (void)state;
  struct turnd_proc t;
  start_with_script(&t, hi_script);
  const char *const lock[] = {"--url", t.base_url, "lock", NULL};
  const char *const unlock[] = {"--url", t.base_url, "unlock", NULL};
  struct cli_run r;
  cli(lock, NULL, &r);
  assert_int_equal(r.status, 1);
  expect_in(r.err, "HTTP 409 pin_not_set: ");
  cli_run_free(&r);

  set_pin(&t);
  cli(unlock, NULL, &r);
  expect_output(&r, 0, "turnd is not locked\n");
  cli_run_free(&r);
  cli(lock, NULL, &r);
  expect_output(&r, 0, "turnd is locked: nothing runs until `turn unlock` and the PIN\n");
  cli_run_free(&r);
  run_cli(t.base_url, "x", NULL, NULL, &r);
  expect_output(&r, 3, "(guard) refused: The backend is locked.\n");
  expect_in(r.err, "(the turn ended: locked; `turn unlock` unlocks turnd)");
  cli_run_free(&r);

  cli(unlock, "", &r); /* no PIN at all */
  expect_output(&r, 1, "");
  expect_in(r.err, "PIN: ");
  expect_in(r.err, "no PIN given");
  cli_run_free(&r);
  cli(unlock, "1111\n2468\n", &r);
  expect_output(&r, 0, "turnd is unlocked\n");
  expect_in(r.err, "; try again\n");
  cli_run_free(&r);
  run_cli(t.base_url, "x", NULL, NULL, &r);
  expect_output(&r, 0, "hi\n");
  cli_run_free(&r);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

static int teardown(void **state) {
  harness_proxy_kill_all(state);
  return harness_kill_all(state);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cli_streams_a_turn),
      cmocka_unit_test(test_cli_shows_model_text_safely),
      cmocka_unit_test(test_cli_answers_an_approval),
      cmocka_unit_test(test_cli_interrupt_cancels_the_turn),
      cmocka_unit_test(test_cli_exit_codes),
      cmocka_unit_test(test_cli_reports_an_error_answer),
      cmocka_unit_test(test_cli_reattaches_after_a_drop_at_a_line_end),
      cmocka_unit_test(test_cli_reattaches_after_a_drop_after_the_approval),
      cmocka_unit_test(test_cli_does_not_reattach_after_the_end),
      cmocka_unit_test(test_cli_reattaches_after_a_drop_mid_line),
      cmocka_unit_test(test_cli_keeps_reattaching_while_it_makes_progress),
      cmocka_unit_test(test_cli_finds_the_token),
      cmocka_unit_test(test_cli_without_a_token_says_how_to_pair),
      cmocka_unit_test(test_cli_refuses_a_bad_token_file),
      cmocka_unit_test(test_cli_pairs_with_a_code),
      cmocka_unit_test(test_cli_pair_shows_too_many_attempts),
      cmocka_unit_test(test_cli_gives_the_pin_for_a_step_up),
      cmocka_unit_test(test_cli_approves_once_a_pin_is_set),
      cmocka_unit_test(test_cli_shows_a_lockout),
      cmocka_unit_test(test_cli_locks_and_unlocks),
  };
  /* The client's default token file lives here, never in the owner's home. */
  snprintf(config_home, sizeof config_home, "/tmp/turn-cli-config-XXXXXX");
  if (mkdtemp(config_home) == NULL) return 1;
  setenv("XDG_CONFIG_HOME", config_home, 1);
  unsetenv("TURN_TOKEN");
  int failed = cmocka_run_group_tests(tests, NULL, teardown);
  nftw(config_home, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  return failed;
}
