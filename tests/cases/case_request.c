/* See case_request.h. A request line is cut at its last " -> ", so a body may
 * hold any text; the options after the status are split at commas. */
#include "case_request.h"

#include "case.h"
#include "case_check.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define UNTIL_CHECKS 8

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

char *case_trim(char *s) {
  while (*s == ' ' || *s == '\t')
    s++;
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
    s[--n] = '\0';
  return s;
}

/* The names [expect] can refer to: a letter, then letters, digits, '_'. */
static bool stream_name_ok(const char *word) {
  bool valid = (word[0] >= 'A' && word[0] <= 'Z') || (word[0] >= 'a' && word[0] <= 'z');
  for (const char *c = word; valid && *c != '\0'; c++)
    valid = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
            (*c >= '0' && *c <= '9') || *c == '_';
  return valid;
}

/* One option after the status: "as NAME", "background", "drop after N lines",
 * "auth ...". */
static void parse_option(struct case_request *rq, char *opt, unsigned line_no) {
  char word[32], unit[16], err[256];
  unsigned long n;
  int used = 0;
  if (strcmp(opt, "background") == 0) {
    rq->background = true;
  } else if (sscanf(opt, "as %31s %n", word, &used) == 1 && opt[used] == '\0') {
    if (!stream_name_ok(word))
      case_fail(line_no, "\"%s\" is not a name (a letter, then letters, digits, _)",
                word);
    snprintf(rq->tmpl.name, sizeof rq->tmpl.name, "%s", word);
  } else if (sscanf(opt, "drop after %lu %15s %n", &n, unit, &used) == 2 &&
             opt[used] == '\0' && n > 0 && strcmp(unit, n == 1 ? "line" : "lines") == 0) {
    rq->tmpl.drop_after = n;
  } else if (strncmp(opt, "auth ", 5) == 0) {
    if (case_auth_spec_parse(&rq->auth, case_trim(opt + 5), err, sizeof err) != 0)
      case_fail(line_no, "%s", err);
  } else {
    case_fail(line_no,
              "unknown option \"%s\" (as NAME, background, drop after N lines, auth ...)",
              opt);
  }
}

void case_request_parse(struct case_request *rq, char *arg, unsigned line_no) {
  memset(rq, 0, sizeof *rq);
  rq->tmpl.line_no = line_no;
  char *arrow = NULL;
  for (char *a = strstr(arg, " -> "); a != NULL; a = strstr(a + 1, " -> "))
    arrow = a;
  if (arrow == NULL) case_fail(line_no, "a [request] needs \" -> STATUS\"");
  *arrow = '\0';
  char *rest = arrow + 4;
  int used = 0;
  if (sscanf(arg, " %15[A-Z] %2047s %n", rq->method, rq->path, &used) != 2 ||
      rq->path[0] != '/')
    case_fail(line_no, "a [request] starts with METHOD /PATH");
  char *body = case_trim(arg + used);
  rq->body = body[0] != '\0' ? body : NULL;
  char *end;
  rq->tmpl.want_status = strtol(rest, &end, 10);
  if (end == rest || rq->tmpl.want_status < 100 || rq->tmpl.want_status > 599)
    case_fail(line_no, "the status after -> is not an HTTP status");
  for (char *opt = case_trim(end); *opt != '\0';) {
    if (*opt != ',') case_fail(line_no, "options after the status follow a comma");
    opt++;
    char *comma = strchr(opt, ',');
    if (comma != NULL) *comma = '\0';
    parse_option(rq, case_trim(opt), line_no);
    if (comma == NULL) break;
    *comma = ',';
    opt = comma;
  }
  if (rq->background && rq->tmpl.name[0] == '\0')
    case_fail(line_no, "a background request needs a name: \"as NAME\"");
}

/* Starts a request with the token spec asks for. */
static struct case_stream *start(struct case_net *net, const struct case_stream *tmpl,
                                 const struct case_auth_spec *spec, const char *method,
                                 const char *url, const char *body) {
  char auth[400];
  bool has = case_auth_header(spec, tmpl->line_no, auth, sizeof auth);
  return case_net_start(net, tmpl, method, url, body, has ? auth : NULL);
}

/* Reads every answer until s has ended. */
static void wait_done(struct case_net *net, const struct case_stream *s) {
  long long deadline = now_ms() + CASE_SAFETY_MS;
  case_net_pump(net, 0);
  while (!s->done) {
    if (now_ms() > deadline)
      case_fail(s->line_no, "no whole answer in %d s", CASE_SAFETY_MS / 1000);
    case_net_pump(net, 100);
  }
}

struct case_stream *case_request_run(const struct case_request *rq, struct case_net *net,
                                     const char *base_url) {
  if (net == NULL) {
    case_auth_sent(rq->method, rq->path, rq->body, NULL, rq->tmpl.line_no);
    return NULL;
  }
  char url[2200];
  snprintf(url, sizeof url, "%s%s", base_url, rq->path);
  struct case_stream *s = start(net, &rq->tmpl, &rq->auth, rq->method, url, rq->body);
  case_auth_sent(rq->method, rq->path, rq->body, s, rq->tmpl.line_no);
  if (rq->background)
    case_net_pump(net, 0);
  else
    wait_done(net, s);
  return s;
}

/* ---------------------------------------------------------------- [until] */

/* Whether s's body passes every check; why says what did not. */
static bool body_holds(const struct case_stream *s, const struct case_check *checks,
                       size_t n, char *why, size_t cap) {
  json_error_t je;
  json_t *body = s->raw != NULL ? json_loads(s->raw, 0, &je) : NULL;
  bool holds = body != NULL;
  if (body == NULL) snprintf(why, cap, "the answer is not a JSON body");
  for (size_t i = 0; holds && i < n; i++)
    holds = case_check_holds(&checks[i], body, why, cap);
  json_decref(body);
  return holds;
}

/* A poll with a token counts as the owner's activity, as any request does: were
 * the polls closer than --lock-after, the backend would never lock by itself.
 * So the pause doubles from 50 ms, and soon outlasts any setting a case uses;
 * the safety timeout still bounds the whole wait. */
void case_request_until(const char *arg, unsigned line_no, struct case_net *net,
                        const char *base_url) {
  char path[2048], err[256];
  int used = 0;
  if (sscanf(arg, " GET %2047s %n", path, &used) != 1 || path[0] != '/')
    case_fail(line_no, "[until] takes GET /PATH CHECK...");
  struct case_check checks[UNTIL_CHECKS];
  size_t n = 0;
  for (const char *p = arg + used; *p != '\0'; p += strspn(p, " \t")) {
    if (n == UNTIL_CHECKS) case_fail(line_no, "too many checks in [until]");
    int rc = case_check_parse(&checks[n++], &p, err, sizeof err);
    if (rc == 0 && *p != '\0' && *p != ' ' && *p != '\t') {
      snprintf(err, sizeof err, "unexpected \"%c\" after a check", *p);
      rc = -1;
    }
    if (rc != 0) case_fail(line_no, "%s", err);
  }
  if (n == 0) case_fail(line_no, "[until] takes checks on the body: locked=true");
  char url[2200];
  snprintf(url, sizeof url, "%s%s", base_url, path);
  long long deadline = now_ms() + CASE_SAFETY_MS;
  for (int pause_ms = 50; net != NULL; pause_ms *= 2) {
    struct case_stream tmpl = {.line_no = line_no, .want_status = 200};
    struct case_auth_spec spec = {.kind = CASE_AUTH_CASE};
    struct case_stream *s = start(net, &tmpl, &spec, "GET", url, NULL);
    wait_done(net, s);
    case_auth_scan_stream(s);
    char why[512];
    bool holds = body_holds(s, checks, n, why, sizeof why);
    if (!holds && now_ms() >= deadline) {
      case_show_lines("the last answer", s->lines, s->n_lines);
      case_fail(line_no, "waited %d s: %s", CASE_SAFETY_MS / 1000, why);
    }
    case_net_forget(net, s);
    if (holds) break;
    long long until = now_ms() + pause_ms < deadline ? now_ms() + pause_ms : deadline;
    for (long long left; (left = until - now_ms()) > 0;)
      case_net_pump(net, (int)left);
  }
  for (size_t i = 0; i < n; i++)
    case_check_free(&checks[i]);
}
