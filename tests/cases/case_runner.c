/* case_runner: runs tests/cases/NNNN.case files, one daemon scenario each (the
 * grammar is tests/cases/README.md). A file is read twice: once with stand-in
 * ids, so a malformed line fails before turnd starts, then for real against a
 * turnd on port 0 in a temporary data folder, which the case keeps however often
 * turnd is restarted or killed. turnd starts at the first line that needs it, so
 * [admin] and [pair] lines before it prepare its data folder. Every wait is for
 * an event (an answer, a line of a type, an exit) under one generous safety
 * timeout. */
#include "case.h"
#include "case_auth.h"
#include "case_expect.h"
#include "case_net.h"
#include "case_outcome.h"
#include "case_proc.h"
#include "case_request.h"
#include "case_subst.h"
#include "turn/turn.h"

#include <jansson.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_NAMES 64
#define MAX_ARGS  24

/* Everything a case holds, global so that case_fail can stop turnd and remove
 * the temporary files from wherever the case fails. */
static struct {
  const char *file;          /* the .case file, for messages */
  bool dry;                  /* the first reading: syntax only, no turnd */
  char names[MAX_NAMES][32]; /* stream names declared so far (first reading) */
  size_t n_names;            /* ... */
  char *model;               /* the [model] lines joined; owned */
  size_t model_len;          /* ... */
  char *args[MAX_ARGS];      /* [turnd] arguments; owned */
  size_t n_args;             /* ... */
  char root[64];             /* the case's temporary folder; "" when none */
  char data_dir[96];         /* root/data: turnd's data folder, kept across starts */
  char model_arg[128];       /* script:root/model.json; "" without [model] */
  char provider[16];         /* [provider]: "anthropic" or "openai"; "" without */
  struct case_proc fake;     /* the fake provider, once started */
  struct case_proc turnd;    /* the daemon, once started */
  bool started;              /* turnd runs and has not been stopped */
  bool began;                /* turnd was started once (first reading: would be) */
  unsigned n_starts;         /* [start] lines run, for their folders' names */
  struct case_net net;       /* every request; set up for the second reading */
  struct case_stream *last;  /* the latest request: the default subject */
  bool acted;                /* a directive besides [turnd] and [model] was read */
  bool stopped;              /* a [stop] line ran */
} R;

static void remove_root(void) {
  if (R.root[0] != '\0') case_remove_tree(R.root);
  R.root[0] = '\0';
}

/* What case_show_lines asked to print with the next failure. */
static struct {
  const char *label;
  char *const *lines;
  size_t n;
} shown[2];

static void print_lines(const char *label, char *const *lines, size_t n) {
  fprintf(stderr, "%s (%zu line%s):\n", label, n, n == 1 ? "" : "s");
  for (size_t i = 0; i < n; i++) {
    size_t len = strlen(lines[i]);
    fprintf(stderr, "  %3zu  %.*s%s\n", i + 1, len > 1000 ? 1000 : (int)len, lines[i],
            len > 1000 ? "..." : "");
  }
}

void case_show_lines(const char *label, char *const *lines, size_t n) {
  size_t k = shown[0].label == NULL ? 0 : 1;
  shown[k].label = label;
  shown[k].lines = lines;
  shown[k].n = n;
}

/* The end of what turnd wrote to stderr in this case, which often says why. */
static void print_stderr(void) {
  char path[96], text[2048];
  snprintf(path, sizeof path, "%s/turnd.err", R.root);
  FILE *f = R.root[0] != '\0' ? fopen(path, "r") : NULL;
  if (f == NULL) return;
  long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : 0;
  long from = size > (long)sizeof text - 1 ? size - (long)sizeof text + 1 : 0;
  size_t got = fseek(f, from, SEEK_SET) == 0 ? fread(text, 1, sizeof text - 1, f) : 0;
  fclose(f);
  text[got] = '\0';
  if (got > 0)
    fprintf(stderr, "turnd's stderr%s:\n%s", from > 0 ? " (its end)" : "", text);
}

_Noreturn void case_fail(unsigned line_no, const char *fmt, ...) {
  char msg[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (line_no > 0)
    fprintf(stderr, "%s:%u: %s\n", R.file, line_no, msg);
  else
    fprintf(stderr, "%s: %s\n", R.file, msg);
  for (size_t k = 0; k < 2 && shown[k].label != NULL; k++)
    print_lines(shown[k].label, shown[k].lines, shown[k].n);
  print_stderr();
  if (R.started) case_proc_stop(&R.turnd, SIGKILL, CASE_SAFETY_MS);
  R.started = false;
  if (R.fake.pid > 0) case_proc_stop(&R.fake, SIGKILL, CASE_SAFETY_MS);
  remove_root();
  exit(1);
}

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool declared(const char *name) {
  for (size_t i = 0; i < R.n_names; i++)
    if (strcmp(R.names[i], name) == 0) return true;
  return false;
}

/* Placeholders as this reading sees them: stand-ins on the first, turnd's ids
 * and port on the second; in [model] only %REPEAT and %%. */
static char *expand(const char *in, unsigned line_no, bool model) {
  struct case_subst ctx = {.dry = R.dry,
                           .model = model,
                           .running = R.began,
                           .net = &R.net,
                           .port = R.turnd.port,
                           .declared = declared};
  return case_subst(in, line_no, &ctx);
}

/* ------------------------------------------------------------ [request] */

static void run_request(char *arg, unsigned line_no) {
  struct case_request rq;
  case_request_parse(&rq, arg, line_no);
  const char *name = rq.tmpl.name;
  if (R.dry) {
    if (name[0] != '\0' && declared(name)) case_fail(line_no, "%s is named twice", name);
    if (name[0] != '\0' && R.n_names < MAX_NAMES)
      snprintf(R.names[R.n_names++], sizeof R.names[0], "%s", name);
  }
  struct case_stream *s = case_request_run(&rq, R.dry ? NULL : &R.net, R.turnd.base_url);
  if (s != NULL) R.last = s;
}

/* -------------------------------------------------------------- [await] */

/* [await] NAME TYPE[#K] | NAME done: until the stream has its K-th line of that
 * type, or its answer has ended. */
static void run_await(const char *arg, unsigned line_no) {
  char name[32], what[64];
  int used = 0;
  if (sscanf(arg, " %31s %63s %n", name, what, &used) != 2 || arg[used] != '\0')
    case_fail(line_no, "[await] takes NAME TYPE[#K] or NAME done");
  unsigned long k = 1;
  char *hash = strchr(what, '#');
  if (hash != NULL) {
    char *end;
    k = strtoul(hash + 1, &end, 10);
    if (*end != '\0' || k == 0) case_fail(line_no, "TYPE#K takes K from 1");
    *hash = '\0';
  }
  bool done = strcmp(what, "done") == 0 && hash == NULL;
  int type = done ? -1 : turn_event_type_from_name(turn_str_c(what));
  if (!done && type < 0) case_fail(line_no, "\"%s\" is not an event type", what);
  if (R.dry) {
    if (!declared(name)) case_fail(line_no, "no request is named %s", name);
    return;
  }
  struct case_stream *s = case_net_find(&R.net, name);
  if (s == NULL) case_fail(line_no, "no request is named %s", name);
  long long deadline = now_ms() + CASE_SAFETY_MS;
  for (;;) {
    size_t seen = 0;
    for (size_t i = 0; i < s->n_lines; i++)
      seen += s->types[i] == type;
    if (done ? s->done : seen >= k) return;
    if (s->done) {
      case_show_lines(name, s->lines, s->n_lines);
      case_fail(line_no, "%s ended with %zu %s line%s", name, seen, what,
                seen == 1 ? "" : "s");
    }
    if (now_ms() > deadline)
      case_fail(line_no, "waited %d s for %s", CASE_SAFETY_MS / 1000, arg);
    case_net_pump(&R.net, 100);
  }
}

/* --------------------------------------------------------------- turnd */

/* The case's folder, made once: the model script, and turnd's data folder,
 * which every start of turnd in the case shares. */
static void make_root(void) {
  snprintf(R.root, sizeof R.root, "/tmp/turnd-case-XXXXXX");
  if (mkdtemp(R.root) == NULL) {
    R.root[0] = '\0';
    case_fail(0, "cannot make a temporary folder: %s", strerror(errno));
  }
  snprintf(R.data_dir, sizeof R.data_dir, "%s/data", R.root);
  if (R.model == NULL) return;
  if (R.provider[0] != '\0') case_fail(0, "a case has [model] or [provider], not both");
  char path[96];
  snprintf(path, sizeof path, "%s/model.json", R.root);
  FILE *f = fopen(path, "w");
  if (f == NULL || fputs(R.model, f) < 0 || fclose(f) != 0)
    case_fail(0, "cannot write the model script %s", path);
  snprintf(R.model_arg, sizeof R.model_arg, "script:%s", path);
}

/* [provider] KIND: the fake provider runs for the whole case, and turnd is
 * pointed at it through the environment it inherits, as an owner would point it
 * at a real one. */

static void start_provider(void) {
  if (R.provider[0] == '\0') return;
  char log[128], out[128];
  snprintf(log, sizeof log, "%s/provider.log", R.root);
  snprintf(out, sizeof out, "%s/provider", R.root);
  const char *argv[] = {
      FAKE_PROVIDER_PATH, "--listen", "127.0.0.1:0", "--log", log, NULL};
  if (case_proc_start_program(&R.fake, argv, out) != 0)
    case_fail(0, "the fake provider did not start (it printed \"%s\")",
              R.fake.listen_line);
  bool anthropic = strcmp(R.provider, "anthropic") == 0;
  char url[96];
  snprintf(url, sizeof url, "%s%s", R.fake.base_url, anthropic ? "" : "/v1");
  if (setenv(anthropic ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL", url, 1) != 0 ||
      setenv(anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY", "test-key", 1) != 0)
    case_fail(0, "cannot set the environment");
  snprintf(R.model_arg, sizeof R.model_arg, "%s:fake-model", R.provider);
}

/* turnd's arguments after --listen and --data: the model, then [turnd]'s. */
static void turnd_args(const char **argv) {
  size_t n = 0;
  if (R.model_arg[0] != '\0') {
    argv[n++] = "--model";
    argv[n++] = R.model_arg;
  }
  for (size_t i = 0; i < R.n_args; i++)
    argv[n++] = R.args[i];
  argv[n] = NULL;
}

/* Starts turnd on the case's data folder, on a port of its own choosing: %PORT
 * and the requests' base URL follow it. What it prints is appended to
 * root/turnd.out and root/turnd.err. */
static void start_turnd(unsigned line_no) {
  const char *argv[MAX_ARGS + 3];
  turnd_args(argv);
  char log[96];
  snprintf(log, sizeof log, "%s/turnd", R.root);
  if (case_proc_start(&R.turnd, R.data_dir, argv, log) != 0)
    case_fail(line_no, "turnd did not start (it printed \"%s\")", R.turnd.listen_line);
  R.started = true;
}

/* Waits until every answer still open has ended. */
static void await_all(unsigned line_no, const char *after) {
  long long deadline = now_ms() + CASE_SAFETY_MS;
  for (size_t i = 0; i < R.net.n; i++) {
    while (!R.net.streams[i]->done) {
      if (now_ms() > deadline)
        case_fail(line_no, "the answer of line %u did not end after %s",
                  R.net.streams[i]->line_no, after);
      case_net_pump(&R.net, 100);
    }
  }
}

/* SIGTERM; every answer still open must then end (turnd ends running turns with
 * interrupt), and turnd must exit 0. */
static void stop_turnd(unsigned line_no) {
  kill(R.turnd.pid, SIGTERM);
  await_all(line_no, "SIGTERM");
  R.started = false;
  int status = case_proc_stop(&R.turnd, 0, CASE_SAFETY_MS);
  if (status != 0) case_fail(line_no, "turnd exited with status %d, want 0", status);
}

/* SIGKILL, as a crash or a power cut of the process: turnd has no say. Answers
 * still open end where the kill cut them, keeping their complete lines. */
static void kill_turnd(unsigned line_no) {
  case_net_cut_open(&R.net);
  R.started = false;
  int status = case_proc_stop(&R.turnd, SIGKILL, CASE_SAFETY_MS);
  if (status != 128 + SIGKILL)
    case_fail(line_no, "turnd ended with status %d, not by the SIGKILL", status);
  await_all(line_no, "SIGKILL");
}

/* Checks what a turnd run to its end did, after searching it for secrets. */
static void check_run(struct case_proc_run *run, const struct case_outcome *want,
                      const char *label, unsigned line_no) {
  case_auth_scan(label, run->out, strlen(run->out), line_no);
  case_auth_scan(label, run->err, strlen(run->err), line_no);
  case_outcome_check(want, run, label, line_no);
  case_proc_run_free(run);
}

/* [second] CHECK...: a second turnd, with the same arguments and data folder,
 * run to its end while the first runs; the checks are on
 * {"exit": N, "stdout": "...", "stderr": "..."}. */
static void run_second(const char *arg, unsigned line_no) {
  struct case_outcome want;
  case_outcome_parse(&want, arg, line_no);
  if (!R.dry) {
    if (!R.started) case_fail(line_no, "turnd does not run: nothing to be second to");
    const char *argv[MAX_ARGS + 3];
    turnd_args(argv);
    struct case_proc_run run;
    if (case_proc_run(&run, R.data_dir, argv, CASE_SAFETY_MS) != 0)
      case_fail(line_no, "the second turnd did not end (status %d)", run.status);
    check_run(&run, &want, "the second turnd", line_no);
  }
  case_outcome_free(&want);
}

/* [start] ARG... -> CHECK...: a turnd of its own, on a fresh data folder, with
 * the case's model and these arguments only, run to its end: how turnd takes a
 * command line, refusals included. */
static void run_start(char *arg, unsigned line_no) {
  char *arrow = strstr(arg, " -> ");
  if (arrow == NULL) case_fail(line_no, "[start] takes ARG... -> CHECK...");
  *arrow = '\0';
  struct case_outcome want;
  case_outcome_parse(&want, arrow + 4, line_no);
  const char *argv[MAX_ARGS + 3];
  size_t n = 0;
  if (R.model_arg[0] != '\0') {
    argv[n++] = "--model";
    argv[n++] = R.model_arg;
  }
  for (char *p = arg + strspn(arg, " \t"); *p != '\0'; p += strspn(p, " \t")) {
    if (n == MAX_ARGS) case_fail(line_no, "too many arguments in [start]");
    argv[n++] = p;
    p += strcspn(p, " \t");
    if (*p != '\0') *p++ = '\0';
  }
  argv[n] = NULL;
  if (!R.dry) {
    char dir[96];
    snprintf(dir, sizeof dir, "%s/start-%u", R.root, ++R.n_starts);
    struct case_proc_run run;
    if (case_proc_run(&run, dir, argv, CASE_SAFETY_MS) != 0)
      case_fail(line_no, "that turnd did not end (status %d)", run.status);
    check_run(&run, &want, "that turnd", line_no);
  }
  case_outcome_free(&want);
}

/* ------------------------------------------------------------- the case */

static void add_model(const char *arg, unsigned line_no) {
  char *text = expand(arg, line_no, true);
  size_t len = strlen(text);
  char *grown = realloc(R.model, R.model_len + len + 2);
  if (grown == NULL) case_fail(line_no, "out of memory");
  R.model = grown;
  memcpy(R.model + R.model_len, text, len);
  R.model_len += len;
  R.model[R.model_len++] = '\n';
  R.model[R.model_len] = '\0';
  free(text);
}

/* [turnd] ARG...: words split at spaces; turnd's options need no quoting. */
static void add_args(char *arg, unsigned line_no) {
  for (char *p = arg; *p != '\0';) {
    size_t n = strcspn(p, " \t");
    if (R.n_args == MAX_ARGS) case_fail(line_no, "too many [turnd] arguments");
    /* %CASES/ names a file beside the case files (a tools file, its programs). */
    const char *mark = strstr(p, "%CASES/");
    if (mark != NULL && (size_t)(mark - p) < n) {
      const char *slash = strrchr(R.file, '/');
      int dir_len = slash != NULL ? (int)(slash - R.file) : 1;
      const char *dir = slash != NULL ? R.file : ".";
      char path[4096];
      snprintf(path, sizeof path, "%.*s%.*s%.*s", (int)(mark - p), p, dir_len, dir,
               (int)(n - (size_t)(mark - p) - 6), mark + 6);
      R.args[R.n_args] = strdup(path);
    } else {
      R.args[R.n_args] = strndup(p, n);
    }
    if (R.args[R.n_args++] == NULL) case_fail(line_no, "out of memory");
    p += n;
    p += strspn(p, " \t");
  }
}

/* One line of the file. Returns whether it was a [request]. */
static bool run_line(char *line, unsigned line_no, bool seen_request) {
  if (line[0] == '#' || case_trim(line)[0] == '\0') return false;
  if (line[0] != '[') case_fail(line_no, "a line is prose (# ...) or a [directive]");
  char *close = strchr(line, ']');
  if (close == NULL) case_fail(line_no, "a directive without its ]");
  *close = '\0';
  const char *name = line + 1;
  char *arg = case_trim(close + 1);
  if (strcmp(name, "model") == 0 || strcmp(name, "turnd") == 0 ||
      strcmp(name, "provider") == 0) {
    if (R.acted) case_fail(line_no, "[%s] comes before every other directive", name);
    if (R.dry && name[0] == 'm') add_model(arg, line_no);
    if (R.dry && name[0] == 't') add_args(arg, line_no);
    if (R.dry && name[0] == 'p') {
      if (strcmp(arg, "anthropic") != 0 && strcmp(arg, "openai") != 0)
        case_fail(line_no, "[provider] is anthropic or openai");
      snprintf(R.provider, sizeof R.provider, "%s", arg);
    }
    return false;
  }
  R.acted = true;
  if (R.stopped && strcmp(name, "expect") != 0)
    case_fail(line_no, "only [expect] may follow [stop]");
  /* turnd starts for the first line that is not about its data folder only. */
  bool prepares = strcmp(name, "admin") == 0 || strcmp(name, "pair") == 0;
  if (!prepares && !R.began) {
    R.began = true;
    if (!R.dry) start_turnd(line_no);
  }
  bool restart = strcmp(name, "restart") == 0, killed = strcmp(name, "kill") == 0;
  if (strcmp(name, "stop") == 0 || restart || killed) {
    if (arg[0] != '\0') case_fail(line_no, "[%s] takes nothing", name);
    if (!R.dry && killed) kill_turnd(line_no);
    if (!R.dry && !killed) stop_turnd(line_no);
    if (!R.dry && (restart || killed)) start_turnd(line_no);
    R.stopped = !restart && !killed;
    return false;
  }
  char *text = expand(arg, line_no, false);
  bool request = strcmp(name, "request") == 0;
  if (request) {
    run_request(text, line_no);
  } else if (strcmp(name, "await") == 0) {
    run_await(text, line_no);
  } else if (strcmp(name, "until") == 0) {
    case_request_until(text, line_no, R.dry ? NULL : &R.net, R.turnd.base_url);
  } else if (strcmp(name, "second") == 0) {
    run_second(text, line_no);
  } else if (strcmp(name, "start") == 0) {
    run_start(text, line_no);
  } else if (strcmp(name, "pair") == 0) {
    case_auth_pair(text, line_no);
  } else if (strcmp(name, "admin") == 0) {
    case_auth_admin(text, line_no);
  } else if (strcmp(name, "expect") == 0) {
    struct case_expect ex;
    char err[256];
    if (case_expect_parse(&ex, text, err, sizeof err) != 0) case_fail(line_no, "%s", err);
    for (size_t i = 0; R.dry && i < ex.n_names; i++)
      if (!declared(ex.names[i]))
        case_fail(line_no, "no request is named %s", ex.names[i]);
    if (R.dry && ex.n_subject == 0 && !seen_request)
      case_fail(line_no, "[expect] before any [request]");
    if (!R.dry) case_expect_check(&ex, line_no, &R.net, R.last);
    case_expect_free(&ex);
  } else {
    case_fail(line_no, "unknown directive [%s]", name);
  }
  free(text);
  return request;
}

/* The title line: "# NNNN: why", NNNN being the file's own number. */
static void check_title(const char *first) {
  const char *base = strrchr(R.file, '/');
  base = base != NULL ? base + 1 : R.file;
  size_t digits = strspn(base, "0123456789");
  if (digits != 4 || strcmp(base + digits, ".case") != 0)
    case_fail(0, "a case file is named NNNN.case");
  if (first == NULL || strncmp(first, "# ", 2) != 0 || strncmp(first + 2, base, 4) != 0 ||
      strncmp(first + 6, ": ", 2) != 0 || first[8] == '\0')
    case_fail(1, "the first line is \"# %.4s: what this case shows\"", base);
}

/* Reads the file's lines; owned copies in *lines. */
static size_t read_lines(char ***lines) {
  FILE *f = fopen(R.file, "r");
  if (f == NULL) case_fail(0, "cannot read it: %s", strerror(errno));
  size_t n = 0, cap = 0;
  char *line = NULL;
  size_t line_cap = 0;
  ssize_t len;
  *lines = NULL;
  while ((len = getline(&line, &line_cap, f)) >= 0) {
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
      line[--len] = '\0';
    if (n == cap) {
      cap = cap == 0 ? 64 : cap * 2;
      char **grown = realloc(*lines, cap * sizeof *grown);
      if (grown == NULL) case_fail(0, "out of memory");
      *lines = grown;
    }
    (*lines)[n] = strdup(line);
    if ((*lines)[n++] == NULL) case_fail(0, "out of memory");
  }
  free(line);
  fclose(f);
  return n;
}

/* Runs every line in order; copies, since running a line cuts it up. */
static void run_lines(char **lines, size_t n) {
  bool seen_request = false;
  for (size_t i = 0; i < n; i++) {
    char *copy = strdup(lines[i]);
    if (copy == NULL) case_fail(0, "out of memory");
    seen_request |= run_line(copy, (unsigned)(i + 1), seen_request);
    free(copy);
  }
  if (!seen_request) case_fail(0, "a case has at least one [request]");
}

static void run_case(void) {
  char **lines;
  size_t n = read_lines(&lines);
  check_title(n > 0 ? lines[0] : NULL);
  R.dry = true;
  case_auth_begin(true, "", "", &R.turnd);
  run_lines(lines, n);
  R.dry = false;
  R.stopped = R.acted = R.began = false;
  if (case_net_init(&R.net) != 0) case_fail(0, "libcurl did not start");
  make_root();
  case_auth_begin(false, R.root, R.data_dir, &R.turnd);
  start_provider();
  run_lines(lines, n);
  if (R.started) stop_turnd((unsigned)n);
  if (R.fake.pid > 0 && case_proc_stop(&R.fake, SIGTERM, CASE_SAFETY_MS) != 0)
    case_fail(0, "the fake provider did not stop cleanly");
  /* Everything has been said and written: no token or PIN may be in it. */
  case_auth_scan_all(&R.net);
  case_auth_end();
  case_net_fini(&R.net);
  remove_root();
  printf("ok %s\n", lines[0] + 2);
  for (size_t i = 0; i < n; i++)
    free(lines[i]);
  free(lines);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: case_runner NNNN.case\n");
    return 2;
  }
  /* A reader that turnd drops must not kill the runner. */
  signal(SIGPIPE, SIG_IGN);
  R.file = argv[1];
  run_case();
  free(R.model);
  for (size_t i = 0; i < R.n_args; i++)
    free(R.args[i]);
  return 0;
}
