/* A real turnd against the fake provider (tests/fake_provider) over loopback:
 * what a provider's errors become. A key the provider (or a proxy) echoes in its
 * error message reaches neither the turn's notice, nor the session's history,
 * nor any file turnd stores; a key longer than a kilobyte (a JWT) is sent whole;
 * retry-after is read in both its forms, a wait too long to sit through
 * failing the call rather than being forgotten; and a turn's model calls keep
 * one connection, unless the server leaves an answer unfinished. */
#define _GNU_SOURCE /* memmem, nftw */
#include "harness.h"

#include <ftw.h>
#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

/* A leak of this many bytes of a key, or more, fails a test: turnd may leave
 * fewer at the end of a cut message (see model_http.c). */
#define KEY_WINDOW 8
/* The fake's retry-date is this far ahead (tests/fake_provider/scenario.c). */
#define RETRY_DATE_S 4

/* ------------------------------------------------------ the fake provider */

static pid_t fake_pid; /* the one running, for the teardown; 0: none */

/* Starts the fake provider on a port of its choosing, accepting only key and
 * logging its requests to log (NULL: not), and writes its URL into base_url. */
static void fake_start_logged(const char *key, const char *log, char *base_url,
                              size_t cap) {
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    setenv("FAKE_PROVIDER_KEY", key, 1);
    const char *argv[] = {FAKE_PROVIDER_PATH,           "--listen", "127.0.0.1:0",
                          log != NULL ? "--log" : NULL, log,        NULL};
    execv(FAKE_PROVIDER_PATH, (char *const *)argv);
    _exit(127);
  }
  close(fds[1]);
  fake_pid = pid;
  char line[128];
  size_t len = 0;
  char c;
  while (len + 1 < sizeof line && read(fds[0], &c, 1) == 1 && c != '\n')
    line[len++] = c;
  line[len] = '\0';
  close(fds[0]);
  unsigned port;
  if (sscanf(line, "listening on http://127.0.0.1:%u", &port) != 1)
    fail_msg("the fake provider did not start: \"%s\"", line);
  snprintf(base_url, cap, "http://127.0.0.1:%u", port);
}

static void fake_start(const char *key, char *base_url, size_t cap) {
  fake_start_logged(key, NULL, base_url, cap);
}

static void fake_stop(void) {
  if (fake_pid <= 0) return;
  kill(fake_pid, SIGTERM);
  waitpid(fake_pid, NULL, 0);
  fake_pid = 0;
}

/* The turnd of the test running: the teardown removes its data folder even
 * when a failed assertion jumped past the test's own stop. */
static struct turnd_proc turnd;

/* The folder of the fake's request log, when a test keeps one (start_logged):
 * the teardown removes it even when a failed assertion jumped past the test's
 * own end. */
static char fake_log_dir[] = "/tmp/turnd-fake-log-XXXXXX";
static char fake_log[sizeof fake_log_dir + 16];

static void fake_log_remove(void) {
  if (fake_log[0] == '\0') return;
  unlink(fake_log);
  rmdir(fake_log_dir);
  fake_log[0] = '\0';
}

static int teardown(void **state) {
  fake_stop();
  fake_log_remove();
  harness_stop(&turnd, SIGKILL);
  return harness_kill_all(state);
}

/* turnd with `--model KIND:fake-model`, pointed at the fake through the
 * environment with key, as an owner points it at a real provider. */
static void start_turnd(struct turnd_proc *t, const char *kind, const char *fake_url,
                        const char *key) {
  bool anthropic = strcmp(kind, "anthropic") == 0;
  char url[96], model[64];
  snprintf(url, sizeof url, "%s%s", fake_url, anthropic ? "" : "/v1");
  snprintf(model, sizeof model, "%s:fake-model", kind);
  assert_int_equal(setenv(anthropic ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL", url, 1),
                   0);
  assert_int_equal(setenv(anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY", key, 1), 0);
  const char *extra[] = {"--model", model, "--coalesce-ms", "0", NULL};
  assert_int_equal(harness_start(t, extra), 0);
}

/* ---------------------------------------------------------------- turns */

/* A whole turn: lines[i] parsed, the last an end. */
struct turn {
  json_t **ev;
  size_t n;
};

static void run_turn(const struct turnd_proc *t, const char *text, struct turn *out) {
  struct http_stream s;
  harness_post_turn(t, NULL, text, 0, &s);
  out->n = s.n;
  out->ev = calloc(s.n, sizeof *out->ev);
  assert_non_null(out->ev);
  for (size_t i = 0; i < s.n; i++)
    out->ev[i] = harness_json(s.lines[i]);
  http_stream_free(&s);
  assert_true(out->n > 0);
  assert_string_equal(harness_str(out->ev[out->n - 1], "type"), "end");
}

static void turn_free(struct turn *tu) {
  for (size_t i = 0; i < tu->n; i++)
    json_decref(tu->ev[i]);
  free(tu->ev);
}

static size_t count(const struct turn *tu, const char *type) {
  size_t n = 0;
  for (size_t i = 0; i < tu->n; i++)
    n += strcmp(harness_str(tu->ev[i], "type"), type) == 0;
  return n;
}

/* The turn's one event of type. */
static json_t *the(const struct turn *tu, const char *type) {
  if (count(tu, type) != 1) fail_msg("not one %s event but %zu", type, count(tu, type));
  for (size_t i = 0; i < tu->n; i++)
    if (strcmp(harness_str(tu->ev[i], "type"), type) == 0) return tu->ev[i];
  return NULL;
}

static const char *stop_reason(const struct turn *tu) {
  return harness_str(tu->ev[tu->n - 1], "stop_reason");
}

/* The text deltas joined. */
static void text_of(const struct turn *tu, char *out, size_t cap) {
  size_t len = 0;
  out[0] = '\0';
  for (size_t i = 0; i < tu->n; i++)
    if (strcmp(harness_str(tu->ev[i], "type"), "text") == 0)
      len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, "%s",
                              harness_str(tu->ev[i], "delta"));
}

/* The session's history as turnd serves it (owned). */
static char *history_of(const struct turnd_proc *t, const struct turn *tu) {
  char u[160];
  harness_url(u, sizeof u, t, "/api/sessions/%s", harness_str(tu->ev[0], "session"));
  struct http_answer a;
  assert_int_equal(http_do("GET", u, NULL, &a), 0);
  assert_int_equal(a.status, 200);
  char *body = a.body;
  a.body = NULL;
  http_answer_free(&a);
  return body;
}

/* ------------------------------------------------------------ the key */

/* No KEY_WINDOW bytes of key in a row are in bytes[0..len); where names them. */
static void assert_no_key(const char *bytes, size_t len, const char *key,
                          const char *where) {
  size_t key_len = strlen(key);
  for (size_t i = 0; i + KEY_WINDOW <= key_len; i++)
    if (memmem(bytes, len, key + i, KEY_WINDOW) != NULL)
      fail_msg("%s holds bytes %zu..%zu of the key", where, i, i + KEY_WINDOW);
}

static const char *scanned_key; /* nftw passes no context */

static int scan_file(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)ftw;
  if (flag != FTW_F) return 0;
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  char *bytes = NULL;
  size_t len = 0, cap = 0, got;
  do {
    if (cap - len < 65536) {
      cap = cap * 2 + 65536;
      bytes = realloc(bytes, cap);
      assert_non_null(bytes);
    }
    got = fread(bytes + len, 1, cap - len, f);
    len += got;
  } while (got > 0);
  fclose(f);
  assert_no_key(bytes, len, scanned_key, path);
  free(bytes);
  return 0;
}

/* Stops turnd and searches every file it stored for the key. */
static void assert_key_not_stored(struct turnd_proc *t, const char *key) {
  assert_int_equal(harness_halt(t, SIGTERM), 0);
  scanned_key = key;
  assert_int_equal(nftw(t->data_dir, scan_file, 16, FTW_PHYS), 0);
  harness_stop(t, SIGTERM);
}

/* The notice of a failed turn: the provider's message, every copy of the key in
 * it replaced by [key]. */
static void assert_redacted_notice(const struct turnd_proc *t, const char *text,
                                   const char *key, const char *message) {
  struct turn tu;
  run_turn(t, text, &tu);
  assert_string_equal(stop_reason(&tu), "error");
  assert_int_equal(count(&tu, "throttled"), 0);
  const char *notice = harness_str(the(&tu, "notice"), "text");
  if (strstr(notice, message) == NULL)
    fail_msg("the notice \"%s\" does not say \"%s\"", notice, message);
  assert_no_key(notice, strlen(notice), key, "the notice");
  char *history = history_of(t, &tu);
  assert_no_key(history, strlen(history), key, "the history");
  if (strstr(history, message) == NULL) /* message needs no JSON escapes */
    fail_msg("the history does not say \"%s\": %s", message, history);
  free(history);
  turn_free(&tu);
}

/* A 401 whose message echoes the key, one that breaks the key's copies with a
 * line break (which the message's clean-up turns into spaces), and an error
 * event amid the stream that echoes it (after some text, so the turn keeps that
 * text). */
static void key_echoes_are_redacted(const char *kind) {
  static const char key[] = "sk-fake-0123456789-SECRET-abcdefghij";
  static const char said[] =
      "Incorrect API key provided: [key]. The key [key] is not valid.";
  char fake_url[64];
  fake_start(key, fake_url, sizeof fake_url);
  start_turnd(&turnd, kind, fake_url, key);
  assert_redacted_notice(&turnd, "keyleak please", key, said);
  assert_redacted_notice(&turnd, "keywrap please", key, said);
  assert_redacted_notice(&turnd, "streamleak please", key, said);
  assert_key_not_stored(&turnd, key);
  fake_stop();
}

static void test_provider_key_echo_anthropic(void **state) {
  (void)state;
  key_echoes_are_redacted("anthropic");
}

static void test_provider_key_echo_openai(void **state) {
  (void)state;
  key_echoes_are_redacted("openai");
}

/* A key of 1500 bytes, as long JWT bearer tokens are: it is sent whole, so the
 * fake accepts it. Echoed, it is longer than the provider's message may be
 * (300 bytes), so the message is cut inside the key: what is left of it is
 * redacted too. */
static void test_provider_long_key(void **state) {
  (void)state;
  char key[1501];
  int len = snprintf(key, sizeof key, "sk-fake-");
  for (int i = 0; len + 6 < (int)sizeof key; i++)
    len += snprintf(key + len, sizeof key - (size_t)len, "k%04d-", i);
  char fake_url[64];
  fake_start(key, fake_url, sizeof fake_url);
  start_turnd(&turnd, "anthropic", fake_url, key);

  struct turn tu;
  run_turn(&turnd, "hello there", &tu);
  assert_string_equal(stop_reason(&tu), "end_turn");
  char text[256];
  text_of(&tu, text, sizeof text);
  assert_string_equal(text, "Hello from the fake model.");
  turn_free(&tu);

  assert_redacted_notice(&turnd, "keyleak with a long key", key,
                         "Incorrect API key provided: [key]");
  assert_key_not_stored(&turnd, key);
  fake_stop();
}

/* A short key, as a local server takes for a placeholder, is taken out where it
 * stands as a word, and left inside other words: a key of "e" must not turn the
 * message into "Incorr[key]ct API k[key]y ...". */
static void test_provider_short_key(void **state) {
  (void)state;
  char fake_url[64];
  fake_start("e", fake_url, sizeof fake_url);
  start_turnd(&turnd, "openai", fake_url, "e");
  assert_redacted_notice(
      &turnd, "keyleak with a short key", "e",
      "Incorrect API key provided: [key]. The key [key] is not valid.");
  fake_stop();
}

/* A key read from a file saved with CR LF, or an env file's trailing space,
 * is sent without them: the fake takes it, so the turn streams. */
static void test_provider_key_with_line_end(void **state) {
  (void)state;
  char fake_url[64];
  fake_start("test-key", fake_url, sizeof fake_url);
  start_turnd(&turnd, "openai", fake_url, "test-key\r\n");
  struct turn tu;
  run_turn(&turnd, "hello there", &tu);
  assert_string_equal(stop_reason(&tu), "end_turn");
  turn_free(&tu);
  assert_int_equal(harness_stop(&turnd, SIGTERM), 0);
  fake_stop();
}

/* Settings that would fail every turn stop turnd at start-up (status 1): a key
 * with a space or line end inside (it would break the request's headers), a
 * system prompt that is not UTF-8 (it cannot go in the JSON body) or that is
 * a folder. */
static void test_provider_bad_settings_stop_start_up(void **state) {
  (void)state;
  char dir[] = "/tmp/turnd-settings-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char prompt[64];
  snprintf(prompt, sizeof prompt, "%s/prompt.txt", dir);
  FILE *f = fopen(prompt, "wb");
  assert_non_null(f);
  fputs("Tu es tr\xe8s utile.\n", f); /* Latin-1, not UTF-8 */
  assert_int_equal(fclose(f), 0);
  assert_int_equal(setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9", 1), 0);
  const char *with_key[] = {"--listen", "127.0.0.1:0", "--data", dir,
                            "--model",  "anthropic:m", NULL};
  static const char *const bad_keys[] = {"test key", "test\nkey", "  \r\n"};
  for (size_t i = 0; i < sizeof bad_keys / sizeof bad_keys[0]; i++) {
    assert_int_equal(setenv("ANTHROPIC_API_KEY", bad_keys[i], 1), 0);
    if (harness_run(with_key) != 1) fail_msg("key %zu was not refused", i);
  }
  assert_int_equal(setenv("ANTHROPIC_API_KEY", "test-key", 1), 0);
  const char *with_prompt[] = {"--listen",    "127.0.0.1:0", "--data", dir, "--model",
                               "anthropic:m", "--system",    prompt,   NULL};
  assert_int_equal(harness_run(with_prompt), 1);
  with_prompt[7] = dir;
  assert_int_equal(harness_run(with_prompt), 1);
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

/* ----------------------------------------------------------- retry-after */

/* retry-after's HTTP-date is read: a date ahead is the wait until it, one in
 * the past no wait; a wait of more than a day fails the call at once, saying so,
 * instead of being retried after a short backoff. */
static void test_provider_retry_after_forms(void **state) {
  (void)state;
  char fake_url[64];
  fake_start("test-key", fake_url, sizeof fake_url);
  start_turnd(&turnd, "anthropic", fake_url, "test-key");

  struct turn tu;
  run_turn(&turnd, "retry-date, then hello", &tu);
  double delay =
      json_number_value(json_object_get(the(&tu, "throttled"), "delay_seconds"));
  /* What is left of the date when turnd reads it: a second or two may have gone. */
  if (delay < RETRY_DATE_S - 2 || delay > RETRY_DATE_S)
    fail_msg("retry-date: delay_seconds %g, want %d to %d", delay, RETRY_DATE_S - 2,
             RETRY_DATE_S);
  assert_string_equal(stop_reason(&tu), "end_turn");
  turn_free(&tu);

  run_turn(&turnd, "retry-past, then hello", &tu);
  delay = json_number_value(json_object_get(the(&tu, "throttled"), "delay_seconds"));
  assert_true(delay == 0);
  assert_string_equal(stop_reason(&tu), "end_turn");
  turn_free(&tu);

  run_turn(&turnd, "retry-huge, then hello", &tu);
  assert_int_equal(count(&tu, "throttled"), 0);
  assert_string_equal(stop_reason(&tu), "error");
  const char *notice = harness_str(the(&tu, "notice"), "text");
  if (strstr(notice, "100000 s") == NULL || strstr(notice, "rate limit") == NULL)
    fail_msg("the notice \"%s\" does not say the wait and the provider's message",
             notice);
  turn_free(&tu);

  assert_int_equal(harness_stop(&turnd, SIGTERM), 0);
  fake_stop();
}

/* ----------------------------------------------------- the connection */

/* The fake, logging its requests to fake_log in a new folder, and turnd of
 * kind pointed at it. */
static void start_logged(const char *kind) {
  memcpy(fake_log_dir + sizeof fake_log_dir - 7, "XXXXXX", 6);
  assert_non_null(mkdtemp(fake_log_dir));
  snprintf(fake_log, sizeof fake_log, "%s/requests", fake_log_dir);
  char fake_url[64];
  fake_start_logged("test-key", fake_log, fake_url, sizeof fake_url);
  start_turnd(&turnd, kind, fake_url, "test-key");
}

/* The client ports of the fake's log, in order, into ports[0..cap): how many
 * requests it logged. Each was answered 200. */
static size_t logged_ports(unsigned *ports, size_t cap) {
  FILE *f = fopen(fake_log, "r");
  assert_non_null(f);
  char line[256];
  size_t n = 0;
  bool refused = false;
  while (fgets(line, sizeof line, f) != NULL) {
    const char *at = strstr(line, " status=200 port=");
    refused |= at == NULL;
    if (at != NULL && n < cap)
      ports[n++] = (unsigned)strtoul(at + strlen(" status=200 port="), NULL, 10);
  }
  fclose(f);
  if (refused) fail_msg("the fake refused a request");
  return n;
}

/* The model calls of a turn with a tool, and of the turn after it, go over one
 * HTTP/1.1 connection: turnd reads each answer to its end, so libcurl keeps the
 * connection. The fake logs each request with its client's port. */
static void calls_share_a_connection(const char *kind) {
  start_logged(kind);

  struct turn tu;
  run_turn(&turnd, "ask the tool", &tu);
  assert_int_equal(count(&tu, "tool_result"), 1);
  assert_string_equal(stop_reason(&tu), "end_turn");
  turn_free(&tu);
  run_turn(&turnd, "hello again", &tu);
  assert_string_equal(stop_reason(&tu), "end_turn");
  turn_free(&tu);
  assert_int_equal(harness_stop(&turnd, SIGTERM), 0);
  fake_stop();

  unsigned ports[4];
  assert_int_equal(logged_ports(ports, 4), 3);
  for (size_t i = 1; i < 3; i++)
    if (ports[i] != ports[0])
      fail_msg("call %zu came from port %u, the first from %u", i + 1, ports[i],
               ports[0]);
  fake_log_remove();
}

/* Whether a TCP connection from local port port on loopback is established
 * (/proc/net/tcp: state 01). */
static bool established_from(unsigned port) {
  FILE *f = fopen("/proc/net/tcp", "r");
  assert_non_null(f);
  char line[256];
  bool found = false;
  while (!found && fgets(line, sizeof line, f) != NULL) {
    unsigned local_port, state;
    if (sscanf(line, " %*u: %*8x:%x %*8x:%*x %x", &local_port, &state) == 2)
      found = local_port == port && state == 0x01;
  }
  fclose(f);
  return found;
}

/* A server that never ends its answer after the stream's last event: the turn
 * ends at that event all the same, and turnd cuts the connection soon after
 * (it is not kept for the next call, which gets a new one). */
static void lingering_answers_are_cut(const char *kind) {
  start_logged(kind);

  struct turn tu;
  run_turn(&turnd, "linger", &tu);
  assert_string_equal(stop_reason(&tu), "end_turn");
  char text[64];
  text_of(&tu, text, sizeof text);
  assert_string_equal(text, "Hello from the fake model.");
  turn_free(&tu);
  unsigned ports[3];
  assert_int_equal(logged_ports(ports, 3), 1);
  unsigned lingered = ports[0];
  /* turnd gives the answer's end a second; this waits up to ten. */
  for (int tries = 0; tries < 1000 && established_from(lingered); tries++)
    usleep(10 * 1000);
  if (established_from(lingered)) fail_msg("the lingering connection is still open");
  run_turn(&turnd, "hello again", &tu);
  assert_string_equal(stop_reason(&tu), "end_turn");
  turn_free(&tu);
  assert_int_equal(logged_ports(ports, 3), 2);
  assert_true(ports[1] != lingered);
  assert_int_equal(harness_stop(&turnd, SIGTERM), 0);
  fake_stop();
  fake_log_remove();
}

static void test_provider_lingering_answer_anthropic(void **state) {
  (void)state;
  lingering_answers_are_cut("anthropic");
}

static void test_provider_lingering_answer_openai(void **state) {
  (void)state;
  lingering_answers_are_cut("openai");
}

static void test_provider_calls_share_a_connection_anthropic(void **state) {
  (void)state;
  calls_share_a_connection("anthropic");
}

static void test_provider_calls_share_a_connection_openai(void **state) {
  (void)state;
  calls_share_a_connection("openai");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_provider_key_echo_anthropic, teardown),
      cmocka_unit_test_teardown(test_provider_key_echo_openai, teardown),
      cmocka_unit_test_teardown(test_provider_long_key, teardown),
      cmocka_unit_test_teardown(test_provider_short_key, teardown),
      cmocka_unit_test_teardown(test_provider_key_with_line_end, teardown),
      cmocka_unit_test_teardown(test_provider_bad_settings_stop_start_up, teardown),
      cmocka_unit_test_teardown(test_provider_retry_after_forms, teardown),
      cmocka_unit_test_teardown(test_provider_calls_share_a_connection_anthropic,
                                teardown),
      cmocka_unit_test_teardown(test_provider_calls_share_a_connection_openai, teardown),
      cmocka_unit_test_teardown(test_provider_lingering_answer_anthropic, teardown),
      cmocka_unit_test_teardown(test_provider_lingering_answer_openai, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
