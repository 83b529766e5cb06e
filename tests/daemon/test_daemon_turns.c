/* Turns over real HTTP: the demo turn with an approval, re-attaching after a
 * dropped connection, two readers, cancel, busy, approvals answered, refused,
 * twice or never, script models, and every bad request. Every stream turnd sends
 * must pass libturn's parser and order checker. */
#include "harness.h"
#include "turn/turn.h"

#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

/* ------------------------------------------------------------- helpers */

struct check {
  turn_order *order;
  int problems;
};

static int on_event(void *ctx, const turn_event *ev, const turn_error *err) {
  struct check *c = ctx;
  if (err != NULL || turn_order_step(c->order, ev, NULL) != TURN_OK) c->problems++;
  return 0;
}

/* The lines of one whole turn are valid and in order. */
static void assert_valid_turn(char **lines, size_t n) {
  struct check c = {turn_order_new(NULL), 0};
  turn_reader *r = turn_reader_new(1 << 20, NULL);
  assert_non_null(c.order);
  assert_non_null(r);
  for (size_t i = 0; i < n; i++) {
    turn_reader_feed(r, lines[i], strlen(lines[i]), on_event, &c);
    turn_reader_feed(r, "\n", 1, on_event, &c);
  }
  turn_reader_finish(r, on_event, &c);
  if (turn_order_finish(c.order, NULL) != TURN_OK) c.problems++;
  turn_reader_free(r);
  turn_order_free(c.order);
  assert_int_equal(c.problems, 0);
}

static bool is_type(const char *line, const char *type) {
  char t[32];
  harness_line_field(line, "type", t, sizeof t);
  return strcmp(t, type) == 0;
}

static const char *last(const struct http_stream *s) {
  assert_true(s->n > 0);
  return s->lines[s->n - 1];
}

static void expect_status(const char *method, const char *u, const char *body,
                          long status, const char *code) {
  struct http_answer a;
  assert_int_equal(http_do(method, u, body, &a), 0);
  if (a.status != status)
    fail_msg("%s %s: %ld, want %ld: %s", method, u, a.status, status, a.body);
  if (code != NULL) {
    json_t *j = harness_json(a.body);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(j, "error"), "code")), code);
    json_decref(j);
  }
  http_answer_free(&a);
}

/* Approving the demo's lamp needs the owner's PIN by default; these tests are
 * about approvals and streams, the step-up has its own cases (tests/cases). */
static const char *const no_step_up[] = {"--step-up-effects", "none", NULL};

/* ---------------------------------------------------------------- tests */

/* The demo turn: it streams to the approval, the reader drops, the owner
 * approves, and a re-attach with after= gets the rest, nothing lost or repeated. */
static void test_turns_demo_with_approval_and_reattach(void **state) {
  (void)state;
  struct turnd_proc t;
  assert_int_equal(harness_start(&t, no_step_up), 0);
  char u[512];
  harness_url(u, sizeof u, &t, "/api/turns");
  struct http_stream first;
  /* The demo's approval is its 10th line. */
  assert_int_equal(http_stream("POST", u, "{\"text\": \"lights please\"}", 10, &first),
                   0);
  assert_int_equal(first.status, 200);
  assert_string_equal(first.content_type, "application/x-ndjson");
  assert_int_equal(first.n, 10);
  assert_true(is_type(first.lines[0], "turn"));
  assert_true(is_type(last(&first), "approval"));
  assert_non_null(strstr(first.lines[1], "lights please")); /* {{input}} */
  char turn[64], request[96];
  harness_line_field(first.lines[0], "turn", turn, sizeof turn);
  harness_line_field(last(&first), "request", request, sizeof request);

  harness_url(u, sizeof u, &t, "/api/approvals/%s", request);
  expect_status("POST", u, "{\"decision\": \"approved\"}", 204, NULL);
  expect_status("POST", u, "{\"decision\": \"rejected\"}", 409, "already_decided");

  harness_url(u, sizeof u, &t, "/api/turns/%s?after=9", turn);
  struct http_stream rest;
  assert_int_equal(http_stream("GET", u, NULL, 0, &rest), 0);
  assert_int_equal(rest.status, 200);
  assert_true(rest.n > 3);
  assert_true(is_type(rest.lines[0], "approval_decided"));
  assert_non_null(strstr(last(&rest), "\"stop_reason\":\"end_turn\""));

  char *all[64];
  size_t n = 0;
  for (size_t i = 0; i < first.n; i++)
    all[n++] = first.lines[i];
  for (size_t i = 0; i < rest.n && n < 64; i++)
    all[n++] = rest.lines[i];
  assert_valid_turn(all, n);
  bool widget = false, approved = false;
  for (size_t i = 0; i < n; i++) {
    widget |= is_type(all[i], "widget");
    approved |= strstr(all[i], "\"approval\":\"approved\"") != NULL;
  }
  assert_true(widget);
  assert_true(approved);
  /* The whole turn from the start, once more, is the same bytes. */
  harness_url(u, sizeof u, &t, "/api/turns/%s", turn);
  struct http_stream again;
  assert_int_equal(http_stream("GET", u, NULL, 0, &again), 0);
  assert_int_equal(again.n, n);
  for (size_t i = 0; i < n; i++)
    assert_string_equal(again.lines[i], all[i]);
  http_stream_free(&again);
  http_stream_free(&first);
  http_stream_free(&rest);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

static const char slow_script[] =
    "{\"default\": [[{\"text\": \"one\"}, {\"delay_ms\": 300}, {\"text\": \"two\"},"
    " {\"delay_ms\": 300}, {\"text\": \"{{input}}\"}]]}";

/* Waits far longer than any test step: a turn running it ends only when told. */
static const char long_script[] =
    "{\"default\": [[{\"text\": \"one\"}, {\"delay_ms\": 60000}, {\"text\": \"two\"}]]}";

/* Two readers at once see the same stream; a third re-attaches mid-way. */
static void test_turns_two_readers_and_a_late_one(void **state) {
  (void)state;
  struct turnd_proc t;
  harness_start_script(&t, slow_script, NULL);
  char u[512];
  harness_url(u, sizeof u, &t, "/api/turns");
  struct http_stream head;
  assert_int_equal(http_stream("POST", u, "{\"text\": \"three\"}", 2, &head), 0);
  char turn[64];
  harness_line_field(head.lines[0], "turn", turn, sizeof turn);
  harness_url(u, sizeof u, &t, "/api/turns/%s", turn);
  struct http_stream a, b;
  assert_int_equal(http_stream("GET", u, NULL, 0, &a), 0);
  harness_url(u, sizeof u, &t, "/api/turns/%s?after=1", turn);
  assert_int_equal(http_stream("GET", u, NULL, 0, &b), 0);
  assert_int_equal(a.n, 5);
  assert_int_equal(b.n, 3);
  for (size_t i = 0; i < b.n; i++)
    assert_string_equal(b.lines[i], a.lines[i + 2]);
  assert_non_null(strstr(a.lines[3], "three"));
  assert_valid_turn(a.lines, a.n);
  http_stream_free(&head);
  http_stream_free(&a);
  http_stream_free(&b);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* Cancel during a wait: end with cancelled; cancel again: 204, nothing changes. */
static void test_turns_cancel(void **state) {
  (void)state;
  struct turnd_proc t;
  harness_start_script(&t, long_script, NULL);
  char u[512];
  harness_url(u, sizeof u, &t, "/api/turns");
  struct http_stream head;
  assert_int_equal(http_stream("POST", u, "{\"text\": \"x\"}", 2, &head), 0);
  char turn[64];
  harness_line_field(head.lines[0], "turn", turn, sizeof turn);
  harness_url(u, sizeof u, &t, "/api/turns/%s/cancel", turn);
  expect_status("POST", u, NULL, 204, NULL);
  expect_status("POST", u, NULL, 204, NULL);
  harness_url(u, sizeof u, &t, "/api/turns/%s", turn);
  struct http_stream all;
  assert_int_equal(http_stream("GET", u, NULL, 0, &all), 0);
  assert_non_null(strstr(last(&all), "\"stop_reason\":\"cancelled\""));
  assert_valid_turn(all.lines, all.n);
  harness_url(u, sizeof u, &t, "/api/turns/t-0000000000000000/cancel");
  expect_status("POST", u, NULL, 404, "unknown_turn");
  http_stream_free(&head);
  http_stream_free(&all);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* A second turn on a session that has one running ends at once with busy; the
 * first goes on undisturbed. */
static void test_turns_busy(void **state) {
  (void)state;
  struct turnd_proc t;
  harness_start_script(&t, long_script, NULL);
  char u[512], body[256];
  harness_url(u, sizeof u, &t, "/api/turns");
  struct http_stream first;
  assert_int_equal(http_stream("POST", u, "{\"text\": \"x\"}", 1, &first), 0);
  char session[64], turn[64];
  harness_line_field(first.lines[0], "session", session, sizeof session);
  harness_line_field(first.lines[0], "turn", turn, sizeof turn);
  snprintf(body, sizeof body, "{\"session\": \"%s\", \"text\": \"y\"}", session);
  struct http_stream second;
  assert_int_equal(http_stream("POST", u, body, 0, &second), 0);
  assert_int_equal(second.n, 2);
  assert_non_null(strstr(second.lines[1], "\"stop_reason\":\"busy\""));
  assert_valid_turn(second.lines, second.n);
  /* The first turn was not disturbed: it goes on until cancelled. */
  harness_url(u, sizeof u, &t, "/api/turns/%s/cancel", turn);
  expect_status("POST", u, NULL, 204, NULL);
  harness_url(u, sizeof u, &t, "/api/turns/%s", turn);
  struct http_stream rest;
  assert_int_equal(http_stream("GET", u, NULL, 0, &rest), 0);
  assert_int_equal(rest.n, 3); /* turn, "one", end */
  assert_non_null(strstr(last(&rest), "\"stop_reason\":\"cancelled\""));
  /* Once it ended, the session takes a new turn. */
  harness_url(u, sizeof u, &t, "/api/turns");
  struct http_stream third;
  assert_int_equal(http_stream("POST", u, body, 1, &third), 0);
  assert_true(is_type(third.lines[0], "turn"));
  http_stream_free(&first);
  http_stream_free(&second);
  http_stream_free(&rest);
  http_stream_free(&third);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* A session is active from its owner's message on: while a turn of an older
 * session runs (here still waiting for its model's first word), the list has
 * that session first, ahead of one whose turn ended since. */
static void test_turns_session_active_from_its_turns_start(void **state) {
  (void)state;
  struct turnd_proc t;
  harness_start_script(&t,
                       "{\"turns\": [{\"when\": \"quick\", \"replies\": [[{\"text\": "
                       "\"ok\"}]]}], \"default\": [[{\"delay_ms\": 60000}, {\"text\": "
                       "\"late\"}]]}",
                       NULL);
  char u[512], body[256], older[64], newer[64], turn[64];
  harness_url(u, sizeof u, &t, "/api/turns");
  struct http_stream x, y, z;
  assert_int_equal(http_stream("POST", u, "{\"text\": \"quick x\"}", 0, &x), 0);
  harness_line_field(x.lines[0], "session", older, sizeof older);
  assert_int_equal(http_stream("POST", u, "{\"text\": \"quick y\"}", 0, &y), 0);
  harness_line_field(y.lines[0], "session", newer, sizeof newer);
  /* Times have millisecond steps: the next start is surely later than y's end. */
  struct timespec ms2 = {0, 2 * 1000 * 1000};
  nanosleep(&ms2, NULL);
  snprintf(body, sizeof body, "{\"session\": \"%s\", \"text\": \"long\"}", older);
  assert_int_equal(http_stream("POST", u, body, 1, &z), 0);
  harness_line_field(z.lines[0], "turn", turn, sizeof turn);
  harness_url(u, sizeof u, &t, "/api/sessions");
  struct http_answer a;
  assert_int_equal(http_do("GET", u, NULL, &a), 0);
  json_t *doc = harness_json(a.body);
  json_t *list = json_object_get(doc, "sessions");
  const char *first = json_string_value(json_object_get(json_array_get(list, 0), "id"));
  bool ok = first != NULL && strcmp(first, older) == 0;
  if (!ok) fail_msg("first %s, want %s (%s after it): %s", first, older, newer, a.body);
  json_decref(doc);
  http_answer_free(&a);
  harness_url(u, sizeof u, &t, "/api/turns/%s/cancel", turn);
  expect_status("POST", u, NULL, 204, NULL);
  http_stream_free(&x);
  http_stream_free(&y);
  http_stream_free(&z);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* Rejected: the tool does not run. Unanswered: it times out and does not run. */
static void test_turns_approval_rejected_and_timed_out(void **state) {
  (void)state;
  static const char script[] = "{\"default\": [[{\"tool_use\": {\"name\": \"lamp_set\", "
                               "\"input\": {\"name\": \"desk\","
                               " \"on\": true}}}], [{\"text\": \"ok\"}]]}";
  /* The owner has the default 300 s to say no: no race with the clock. */
  struct turnd_proc t;
  harness_start_script(&t, script, no_step_up);
  char u[512];
  harness_url(u, sizeof u, &t, "/api/turns");
  struct http_stream head;
  assert_int_equal(http_stream("POST", u, "{\"text\": \"x\"}", 4, &head), 0);
  char turn[64], request[96];
  harness_line_field(head.lines[0], "turn", turn, sizeof turn);
  harness_line_field(head.lines[3], "request", request, sizeof request);
  harness_url(u, sizeof u, &t, "/api/approvals/%s", request);
  expect_status("POST", u, "{\"decision\": \"maybe\"}", 400, "bad_request");
  expect_status("POST", u, "{\"decision\": \"rejected\"}", 204, NULL);
  harness_url(u, sizeof u, &t, "/api/turns/%s", turn);
  struct http_stream all;
  assert_int_equal(http_stream("GET", u, NULL, 0, &all), 0);
  assert_valid_turn(all.lines, all.n);
  assert_non_null(strstr(all.lines[5], "\"status\":\"rejected\""));
  assert_non_null(strstr(all.lines[5], "\"approval\":\"rejected\""));
  http_stream_free(&head);
  http_stream_free(&all);

  /* Nobody answers: after --approval-timeout the decision is timeout. */
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
  const char *more[] = {"--approval-timeout", "1", "--step-up-effects", "none", NULL};
  harness_start_script(&t, script, more);
  harness_url(u, sizeof u, &t, "/api/turns");
  assert_int_equal(http_stream("POST", u, "{\"text\": \"x\"}", 0, &all), 0);
  assert_valid_turn(all.lines, all.n);
  assert_non_null(strstr(all.lines[4], "\"decision\":\"timeout\""));
  assert_non_null(strstr(all.lines[5], "\"approval\":\"timeout\""));
  harness_line_field(all.lines[3], "request", request, sizeof request);
  harness_url(u, sizeof u, &t, "/api/approvals/%s", request);
  expect_status("POST", u, "{\"decision\": \"approved\"}", 409, "already_decided");
  harness_url(u, sizeof u, &t, "/api/approvals/t-0000000000000000.a1");
  expect_status("POST", u, "{\"decision\": \"approved\"}", 404, "unknown_request");
  http_stream_free(&all);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* The script's steps: throttling, progress, a failing tool, an unknown tool, a
 * widget, max_tokens, and a model failure. */
static void test_turns_script_steps(void **state) {
  (void)state;
  static const char script[] =
      "{\"turns\": ["
      " {\"when\": \"fail\", \"replies\": [[{\"text\": \"a\"}, {\"fail\": \"upstream "
      "500\"}]]},"
      " {\"when\": \"long\", \"replies\": [[{\"text\": \"cut\"}, {\"stop\": "
      "\"max_tokens\"}]]}],"
      " \"default\": [[{\"throttle\": 0.2}, {\"reasoning\": \"r\"},"
      "  {\"tool_use\": {\"name\": \"count_slowly\", \"input\": {\"to\": 3, "
      "\"interval_ms\": 50}}},"
      "  {\"tool_use\": {\"name\": \"fail_tool\", \"input\": {}}},"
      "  {\"tool_use\": {\"name\": \"nonesuch\", \"input\": {\"a\": [1, 2]}}},"
      "  {\"tool_use\": {\"name\": \"render_ui\", \"input\": {\"title\": \"T\", "
      "\"html\": "
      "\"<b>secret html</b>\"}}}],"
      " [{\"text\": \"done\"}]]}";
  struct turnd_proc t;
  harness_start_script(&t, script, NULL);
  char u[512];
  harness_url(u, sizeof u, &t, "/api/turns");
  struct http_stream s;
  assert_int_equal(http_stream("POST", u, "{\"text\": \"go\"}", 0, &s), 0);
  assert_valid_turn(s.lines, s.n);
  int progress = 0, errors = 0, widgets = 0;
  for (size_t i = 0; i < s.n; i++) {
    progress += is_type(s.lines[i], "tool_progress");
    errors += strstr(s.lines[i], "\"status\":\"error\"") != NULL;
    widgets += is_type(s.lines[i], "widget");
    if (is_type(s.lines[i], "tool_input")) assert_null(strstr(s.lines[i], "secret html"));
  }
  assert_true(is_type(s.lines[1], "throttled"));
  assert_int_equal(progress, 3);
  assert_int_equal(errors, 2);
  assert_int_equal(widgets, 1);
  assert_non_null(strstr(last(&s), "\"stop_reason\":\"end_turn\""));
  http_stream_free(&s);

  assert_int_equal(http_stream("POST", u, "{\"text\": \"please fail\"}", 0, &s), 0);
  assert_valid_turn(s.lines, s.n);
  assert_true(is_type(s.lines[s.n - 2], "notice"));
  assert_non_null(strstr(last(&s), "\"stop_reason\":\"error\""));
  http_stream_free(&s);

  assert_int_equal(http_stream("POST", u, "{\"text\": \"a long one\"}", 0, &s), 0);
  assert_non_null(strstr(last(&s), "\"stop_reason\":\"max_tokens\""));
  http_stream_free(&s);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* Every bad request gets its typed error and starts nothing. */
static void test_turns_bad_requests(void **state) {
  (void)state;
  struct turnd_proc t;
  assert_int_equal(harness_start(&t, NULL), 0);
  char u[512];
  harness_url(u, sizeof u, &t, "/api/turns");
  expect_status("POST", u, "{\"text\": ", 400, "bad_json");
  expect_status("POST", u, "[\"text\"]", 400, "bad_json");
  expect_status("POST", u, "{}", 400, "bad_request");
  expect_status("POST", u, "{\"text\": \"   \\n\"}", 400, "bad_request");
  expect_status("POST", u, "{\"text\": 5}", 400, "bad_request");
  expect_status("POST", u, "{\"text\": \"a\\u0000b\"}", 400, "bad_json");
  expect_status("POST", u, "{\"text\": \"hi\", \"session\": \"nope\"}", 404,
                "unknown_session");
  expect_status("POST", u, "{\"text\": \"hi\", \"session\": 7}", 400, "bad_request");
  size_t big = 70 * 1024;
  char *body = malloc(big + 32);
  assert_non_null(body);
  memcpy(body, "{\"text\": \"", 10);
  memset(body + 10, 'a', big);
  memcpy(body + 10 + big, "\"}", 3);
  expect_status("POST", u, body, 413, "body_too_large");
  free(body);
  harness_url(u, sizeof u, &t, "/api/turns/t-0000000000000000");
  expect_status("GET", u, NULL, 404, "unknown_turn");
  harness_url(u, sizeof u, &t, "/api/turns");
  struct http_stream s;
  assert_int_equal(http_stream("POST", u, "{\"text\": \"hi\"}", 1, &s), 0);
  char turn[64];
  harness_line_field(s.lines[0], "turn", turn, sizeof turn);
  http_stream_free(&s);
  static const char *const afters[] = {"?after=-1",
                                       "?after=x",
                                       "?after=",
                                       "?after=1e3",
                                       "?after=1%00x",
                                       "?after=%31",
                                       "?after=99999999999999999999"};
  for (size_t i = 0; i < sizeof afters / sizeof afters[0]; i++) {
    harness_url(u, sizeof u, &t, "/api/turns/%s%s", turn, afters[i]);
    expect_status("GET", u, NULL, 400, "bad_request");
  }
  harness_url(u, sizeof u, &t, "/api/approvals/x");
  expect_status("POST", u, "nope", 400, "bad_json");
  expect_status("GET", u, NULL, 405, "method_not_allowed");
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* SIGTERM while a turn runs: its reader gets the end, as interrupted, after the
 * call whose approval waited is closed. The reader
 * is a plain socket, so the test knows it is attached when the approval arrives.
 * A turn posted while turnd stops is refused (its request's head is sent
 * before the signal, its body once the running turn's end shows the signal was
 * taken): it would start calls the exit cuts off, and never get its end. */
static void test_turns_interrupted_by_sigterm(void **state) {
  (void)state;
  struct turnd_proc t;
  assert_int_equal(harness_start(&t, no_step_up), 0);
  int fd = harness_connect(&t, 0), late = harness_connect(&t, 0);
  assert_true(fd >= 0 && late >= 0);
  static const char body[] = "{\"text\": \"x\"}";
  char req[256];
  size_t n = harness_turn_head(req, sizeof req, &t, sizeof body - 1);
  harness_send_turn(fd, &t, body, sizeof body - 1);
  assert_int_equal(write(late, req, n), (ssize_t)n);
  static char buf[1 << 16];
  size_t len = harness_read_until(fd, buf, 0, sizeof buf, "\"type\":\"approval\"");
  assert_non_null(strstr(buf, "\"type\":\"approval\""));
  kill(t.pid, SIGTERM);
  len = harness_read_until(fd, buf, len, sizeof buf, "\"stop_reason\":\"interrupt\"");
  assert_int_equal(write(late, body, sizeof body - 1), (ssize_t)(sizeof body - 1));
  len = harness_read_until(fd, buf, len, sizeof buf, NULL);
  close(fd);
  /* The waiting approval is closed before the end: decided, and the call's
   * result says why it never ran. */
  if (strstr(buf, "{\"v\":1,\"seq\":10,\"type\":\"approval_decided\"") == NULL ||
      strstr(buf, "\"status\":\"rejected\",\"summary\":\"not run: turnd stopped while "
                  "its approval waited\",\"approval\":\"rejected\"}") == NULL ||
      strstr(buf,
             "{\"v\":1,\"seq\":12,\"type\":\"end\",\"stop_reason\":\"interrupt\"}") ==
          NULL)
    fail_msg("no interrupted end in: %s", buf);
  static char refused[4096];
  harness_read_until(late, refused, 0, sizeof refused, "\"code\":\"stopping\"");
  close(late);
  if (strncmp(refused, "HTTP/1.1 503 ", 13) != 0 ||
      strstr(refused, "\"code\":\"stopping\"") == NULL)
    fail_msg("a turn posted while turnd stops got: %s", refused);
  assert_int_equal(harness_stop(&t, 0), 0); /* stopping already: only wait */
}

/* The body of a chunked HTTP answer held whole in raw[0..len): the chunks' data
 * joined into out (cap bytes). Returns its length. */
static size_t dechunk(const char *raw, size_t len, char *out, size_t cap) {
  const char *p = strstr(raw, "\r\n\r\n");
  assert_non_null(p);
  p += 4;
  const char *end = raw + len;
  size_t n = 0;
  while (p < end) {
    char *after;
    unsigned long size = strtoul(p, &after, 16);
    assert_true(after[0] == '\r' && after[1] == '\n');
    p = after + 2;
    if (size == 0) break;
    assert_true((size_t)(end - p) >= size + 2 && n + size < cap);
    memcpy(out + n, p, size);
    n += size;
    p += size + 2;
  }
  out[n] = '\0';
  return n;
}

/* A reader that stops reading holds turnd to one slice of its stream at a time:
 * the turn goes on, a fast reader gets all of it meanwhile, and when the slow
 * one reads again it gets every line, none lost or repeated. */
static void test_turns_stuck_reader_costs_one_slice(void **state) {
  (void)state;
  /* 200 events of about 60 KB each, 5 ms apart: some 12 MB in all. */
  size_t cap = 200 * 64 + 64;
  char *script = malloc(cap);
  assert_non_null(script);
  size_t n = (size_t)snprintf(script, cap, "{\"default\": [[");
  for (int i = 0; i < 200; i++)
    n += (size_t)snprintf(script + n, cap - n,
                          "%s{\"text\": \"{{input}}{{input}}\"}, {\"delay_ms\": 5}",
                          i == 0 ? "" : ", ");
  snprintf(script + n, cap - n, "]]}");
  struct turnd_proc t;
  harness_start_script(&t, script, NULL);
  free(script);

  int fd = harness_connect(&t, 4096); /* a small window: it fills at once */
  assert_true(fd >= 0);
  static char body[31 * 1024];
  size_t blen = (size_t)snprintf(body, sizeof body, "{\"text\": \"");
  memset(body + blen, 'y', 30000);
  blen += 30000;
  blen += (size_t)snprintf(body + blen, sizeof body - blen, "\"}");
  harness_send_turn(fd, &t, body, blen);
  /* Only the start, for the turn's id; then this reader stops reading. */
  size_t raw_cap = 16u << 20;
  char *raw = malloc(raw_cap);
  assert_non_null(raw);
  size_t len = harness_read_until(fd, raw, 0, 4096, "\"session\"");
  char id[64];
  harness_text_field(raw, "turn", id, sizeof id);

  char u[512];
  harness_url(u, sizeof u, &t, "/api/turns/%s", id);
  struct http_stream all;
  assert_int_equal(http_stream("GET", u, NULL, 0, &all), 0);
  assert_int_equal(all.n, 202);
  assert_non_null(strstr(last(&all), "\"stop_reason\":\"end_turn\""));

  /* Now the slow reader reads: to the last chunk, every line. */
  struct timeval patience = {30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
  while (len < 5 || memcmp(raw + len - 5, "0\r\n\r\n", 5) != 0) {
    assert_true(len + 1 < raw_cap);
    ssize_t got = read(fd, raw + len, raw_cap - 1 - len);
    assert_true(got > 0); /* neither closed nor timed out */
    len += (size_t)got;
  }
  raw[len] = '\0';
  close(fd);
  char *text = malloc(raw_cap);
  assert_non_null(text);
  size_t tlen = dechunk(raw, len, text, raw_cap);
  assert_int_equal(tlen, strlen(text));
  size_t lines = 0;
  char *line = text;
  for (char *nl = strchr(line, '\n'); nl != NULL; nl = strchr(line, '\n')) {
    *nl = '\0';
    assert_true(lines < all.n);
    assert_string_equal(line, all.lines[lines]);
    lines++;
    line = nl + 1;
  }
  assert_int_equal(lines, all.n);
  free(text);
  free(raw);
  http_stream_free(&all);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* Review finding: an HTTP/1.0 reader waiting past the last event crashed turnd
 * when the turn ended (ending its answer freed the connection, whose close
 * callback then touched the freed request). */
static void test_turns_http10_reader_past_the_end(void **state) {
  (void)state;
  struct turnd_proc t;
  harness_start_script(&t, long_script, NULL);
  char u[512];
  harness_url(u, sizeof u, &t, "/api/turns");
  struct http_stream head;
  assert_int_equal(http_stream("POST", u, "{\"text\": \"x\"}", 1, &head), 0);
  char turn[64];
  harness_line_field(head.lines[0], "turn", turn, sizeof turn);
  http_stream_free(&head);
  int fd = harness_connect(&t, 0);
  assert_true(fd >= 0);
  char req[256];
  int n = snprintf(req, sizeof req, "GET /api/turns/%s?after=100 HTTP/1.0\r\n%s\r\n\r\n",
                   turn, t.auth_header);
  assert_int_equal(write(fd, req, (size_t)n), n);
  static char buf[4096];
  harness_read_until(fd, buf, 0, sizeof buf,
                     "\r\n\r\n"); /* the status line: it is attached */
  harness_url(u, sizeof u, &t, "/api/turns/%s/cancel", turn);
  expect_status("POST", u, NULL, 204, NULL);
  harness_read_until(fd, buf, 0, sizeof buf, NULL); /* its answer ends */
  close(fd);
  harness_url(u, sizeof u, &t, "/api/capabilities");
  expect_status("GET", u, NULL, 200, NULL);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* Approvals: a late decision does not beat the timeout, and a request id the
 * turn never asked is unknown, not "decided". A render_ui call without its html
 * shows no widget. */
static void test_turns_approval_ids_and_late_answers(void **state) {
  (void)state;
  static const char script[] =
      "{\"default\": [[{\"tool_use\": {\"name\": \"render_ui\", \"input\": {\"title\": "
      "\"T\"}}}, {\"tool_use\": {\"name\": \"lamp_set\", \"input\": {}}}],"
      " [{\"text\": \"ok\"}]]}";
  const char *more[] = {"--approval-timeout", "1", NULL};
  struct turnd_proc t;
  harness_start_script(&t, script, more);
  char u[512];
  harness_url(u, sizeof u, &t, "/api/turns");
  struct http_stream all;
  assert_int_equal(http_stream("POST", u, "{\"text\": \"x\"}", 0, &all), 0);
  assert_valid_turn(all.lines, all.n);
  for (size_t i = 0; i < all.n; i++)
    assert_false(is_type(all.lines[i], "widget"));
  assert_non_null(strstr(all.lines[5], "\"status\":\"error\""));
  char turn[64], request[96];
  harness_line_field(all.lines[0], "turn", turn, sizeof turn);
  harness_line_field(all.lines[6], "request", request, sizeof request);
  assert_non_null(strstr(request, ".a1"));
  harness_url(u, sizeof u, &t, "/api/approvals/%s", request);
  expect_status("POST", u, "{\"decision\": \"approved\"}", 409, "already_decided");
  harness_url(u, sizeof u, &t, "/api/approvals/%s.a2", turn);
  expect_status("POST", u, "{\"decision\": \"approved\"}", 404, "unknown_request");
  http_stream_free(&all);
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

/* The turn client: it streams the demo turn, asks y/n for the approval on its
 * standard input and posts the answer; the tool runs only after a yes. */
static void test_turns_cli_asks_and_answers(void **state) {
  (void)state;
  struct turnd_proc t;
  assert_int_equal(harness_start(&t, no_step_up), 0);
  static const char *const answers[] = {"y", "n"};
  static const char *const want[] = {"lamp_set: ok, desk lamp is on (simulated)",
                                     "lamp_set: rejected, the owner said no"};
  for (size_t i = 0; i < 2; i++) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "echo %s | TURN_TOKEN=%s %s --url %s 'lights please' 2>&1",
             answers[i], t.token, TURN_CLI_PATH, t.base_url);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    static char out[1 << 16];
    size_t len = fread(out, 1, sizeof out - 1, p);
    out[len] = '\0';
    assert_int_equal(pclose(p), 0);
    if (strstr(out, want[i]) == NULL) fail_msg("no \"%s\" in:\n%s", want[i], out);
    assert_non_null(strstr(out, "? run lamp_set (physical)"));
    assert_non_null(strstr(out, "- showed the lamps"));
  }
  assert_int_equal(harness_stop(&t, SIGTERM), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_turns_demo_with_approval_and_reattach),
      cmocka_unit_test(test_turns_two_readers_and_a_late_one),
      cmocka_unit_test(test_turns_cancel),
      cmocka_unit_test(test_turns_busy),
      cmocka_unit_test(test_turns_session_active_from_its_turns_start),
      cmocka_unit_test(test_turns_approval_rejected_and_timed_out),
      cmocka_unit_test(test_turns_script_steps),
      cmocka_unit_test(test_turns_bad_requests),
      cmocka_unit_test(test_turns_interrupted_by_sigterm),
      cmocka_unit_test(test_turns_stuck_reader_costs_one_slice),
      cmocka_unit_test(test_turns_http10_reader_past_the_end),
      cmocka_unit_test(test_turns_approval_ids_and_late_answers),
      cmocka_unit_test(test_turns_cli_asks_and_answers),
  };
  return cmocka_run_group_tests(tests, NULL, harness_kill_all);
}
