/* A tool call as a program on the loop (see tool_proc.h). Four events drive it:
 * stdin writable, stdout readable, the pidfd readable (the program exited) and
 * one timer (the timeout, then the grace after a result, or the deferred report
 * of a failed start). The program's group is killed only while the program is
 * unreaped: until then its pid, which is also the group's id, cannot be reused,
 * so a kill can never reach a stranger's processes.
 *
 * States (enum tp_state) and inputs (enum tp_input):
 *
 *   NONE --start ok--> RUNNING --RESULT--> RESULT_READ --TIMER (grace)--+
 *    |                  |  |  |                  |                      |
 *    |                  |  |  +-FAULT/TIMER--> KILLED <-----------------+
 *    |                  |  |                     |
 *    |                  |  +------EXIT-----------+--EXIT--> EXITED (DONE, freed)
 *    |                  |               RESULT_READ --EXIT--^
 *    +--start failed--> START_FAILED --TIMER (0 s)----------^
 *   and from every state but EXITED: --KILL--> GONE (no callback, freed)
 *
 *   NONE -> RUNNING, START_FAILED   [tool_proc_start]
 *   RUNNING -> RESULT_READ          [take_line: the result line]
 *   RUNNING -> KILLED               [take_line, pump_output: bad or too much
 *                                    output; on_timer: the timeout, or the
 *                                    grace after stdout ended with no result]
 *   RESULT_READ -> KILLED           [on_timer: still running after the grace]
 *   RUNNING, RESULT_READ, KILLED -> EXITED  [on_program_exit]
 *   START_FAILED -> EXITED          [on_timer]
 *   any but EXITED -> GONE          [tool_proc_kill]
 *
 * Guarantees: RUNNING reads stdout (until it ends), may write stdin, and has the
 * timeout armed (once stdout ended with no result: the grace to exit, if that
 * comes sooner).
 * RESULT_READ, KILLED, START_FAILED and EXITED have the outcome decided (ok,
 * summary, result_json) and stdin and stdout closed. RESULT_READ has the grace
 * timer armed while the program is unreaped (or, if it could not be armed, the
 * group killed at once); KILLED has sent SIGKILL to the group. START_FAILED and
 * EXITED have no program (pid -1). GONE has no owner: only destroy() may touch
 * it. */
/* pipe2, pidfd_open, close_range */
#define _GNU_SOURCE

#include "tool_proc.h"

#include "agent/json_short.h"
#include "turn/turn.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <limits.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK  (16u << 10)
#define READ_BUDGET 4 /* chunks per readable event: one busy tool cannot starve */

enum tp_state {
  TP_NONE, /* 0: so a missing table entry means "refused" */
  TP_RUNNING,
  TP_RESULT_READ,
  TP_KILLED,
  TP_START_FAILED,
  TP_EXITED,
  TP_GONE,
  TP_NSTATES
};

enum tp_input {
  TP_IN_RESULT, /* a valid result line */
  TP_IN_FAULT,  /* output that breaks the protocol or its limits */
  TP_IN_TIMER,  /* the state's timer fired */
  TP_IN_EXIT,   /* the program exited and was reaped */
  TP_IN_KILL,   /* the owner is going */
  TP_NINPUTS
};

static const unsigned char tp_next[TP_NSTATES][TP_NINPUTS] = {
    [TP_RUNNING] = {[TP_IN_RESULT] = TP_RESULT_READ,
                    [TP_IN_FAULT] = TP_KILLED,
                    [TP_IN_TIMER] = TP_KILLED,
                    [TP_IN_EXIT] = TP_EXITED,
                    [TP_IN_KILL] = TP_GONE},
    [TP_RESULT_READ] =
        {[TP_IN_TIMER] = TP_KILLED, [TP_IN_EXIT] = TP_EXITED, [TP_IN_KILL] = TP_GONE},
    [TP_KILLED] = {[TP_IN_EXIT] = TP_EXITED, [TP_IN_KILL] = TP_GONE},
    [TP_START_FAILED] = {[TP_IN_TIMER] = TP_EXITED, [TP_IN_KILL] = TP_GONE},
};

struct tool_proc {
  struct event_base *base;        /* borrowed; outlives us */
  const struct tool_config *tool; /* borrowed until DONE or tool_proc_kill */
  tool_proc_cb *cb;
  void *ctx;
  enum tp_state state;   /* changed only by set_state() */
  int in_cb;             /* > 0 while cb runs: tool_proc_kill leaves destroy() to us */
  pid_t pid;             /* the program and its group's id; -1 once reaped or never */
  bool killed;           /* its group got SIGKILL */
  int pidfd;             /* readable once the program exited; -1 when closed */
  int in_fd;             /* our end of its stdin (non-blocking); -1 once closed */
  int out_fd;            /* our end of its stdout (non-blocking); -1 once closed */
  struct event *exit_ev; /* on pidfd; owned */
  struct event *in_ev;   /* on in_fd; owned, NULL once stdin is closed */
  struct event *out_ev;  /* on out_fd; owned, NULL once stdout is closed */
  struct event *timer;   /* owned; see the states above */
  char *input;           /* input_json + "\n" (owned) ... */
  size_t input_len;      /* ... its length ... */
  size_t input_off;      /* ... and how much of it was written */
  char *line;            /* the stdout line being read: line[0..line_len), ... */
  size_t line_len;       /* ... line_len <= out_total ... */
  size_t line_cap;       /* ... in line_cap bytes, grown as a long line needs */
  size_t out_total;      /* stdout bytes taken, <= TOOL_PROC_OUTPUT_MAX */
  unsigned progress_n;   /* progress lines taken */
  bool output_ended;     /* RUNNING: stdout ended before any result */
  bool decided;          /* ok, summary and result_json hold the outcome */
  bool ok;
  char summary[TOOL_PROC_TEXT_MAX + 1]; /* safe text (see safe_text) */
  char *result_json;                    /* owned, or NULL */
  char *env[4];                         /* PATH, HOME, LANG, NULL; env[1] owned */
};

/* --------------------------------------------------------- safe text */

/* Copies s[0..len) into dst[0..TOOL_PROC_TEXT_MAX] made safe to show
 * (turn_safe_text): control characters, line and paragraph separators (they
 * end a line in JavaScript), bidirectional formatting (it can reorder the text
 * around it) and bytes that start no character each become a space; cut before
 * the character that would pass TOOL_PROC_TEXT_MAX bytes. */
static void safe_text(char dst[TOOL_PROC_TEXT_MAX + 1], const char *s, size_t len) {
  dst[turn_safe_text(dst, TOOL_PROC_TEXT_MAX, s, len, TURN_SAFE_BIDI, NULL)] = '\0';
}

/* --------------------------------------------------- the state machine */

/* Build with -DTOOL_PROC_TRACE to see every transition on stderr. */
#ifdef TOOL_PROC_TRACE
static const char *const tp_state_name[TP_NSTATES] = {
    "NONE", "RUNNING", "RESULT_READ", "KILLED", "START_FAILED", "EXITED", "GONE"};
#endif

static void set_state(struct tool_proc *p, enum tp_state next) {
#ifdef TOOL_PROC_TRACE
  fprintf(stderr, "tool_proc %p: %s -> %s\n", (void *)p, tp_state_name[p->state],
          tp_state_name[next]);
#endif
  p->state = next;
}

static bool check_invariants(const struct tool_proc *p) {
  bool closed =
      p->in_fd == -1 && p->out_fd == -1 && p->in_ev == NULL && p->out_ev == NULL;
  switch (p->state) {
  case TP_RUNNING:
    return !p->decided && p->pidfd >= 0 && evtimer_pending(p->timer, NULL) &&
           p->line_len <= p->line_cap && p->line_cap <= TOOL_PROC_OUTPUT_MAX;
  case TP_RESULT_READ:
    return p->decided && closed &&
           (p->pid == -1 || p->killed || evtimer_pending(p->timer, NULL));
  case TP_KILLED:
    return p->decided && closed && (p->pid == -1 || p->killed) &&
           !evtimer_pending(p->timer, NULL);
  case TP_START_FAILED:
  case TP_EXITED:
    return p->decided && closed && p->pid == -1;
  case TP_GONE:
    return true;
  default:
    return false;
  }
}

/* The one place a state changes after start: the table says whether input is
 * allowed in the current state. Returns 0, or -1 (state unchanged) if not. */
static int step(struct tool_proc *p, enum tp_input in) {
  enum tp_state next = (enum tp_state)tp_next[p->state][in];
  if (next == TP_NONE) return -1;
  set_state(p, next);
  return 0;
}

/* ------------------------------------------------------------ helpers */

static void kill_group(struct tool_proc *p) {
  if (p->pid <= 0) return;
  kill(-p->pid, SIGKILL); /* unreaped: the id is still ours */
  p->killed = true;
}

static void close_input(struct tool_proc *p) {
  if (p->in_ev != NULL) event_free(p->in_ev);
  p->in_ev = NULL;
  if (p->in_fd >= 0) close(p->in_fd);
  p->in_fd = -1;
  free(p->input);
  p->input = NULL;
}

static void close_output(struct tool_proc *p) {
  if (p->out_ev != NULL) event_free(p->out_ev);
  p->out_ev = NULL;
  if (p->out_fd >= 0) close(p->out_fd);
  p->out_fd = -1;
}

static void decide(struct tool_proc *p, bool ok, const char *summary, size_t len) {
  p->decided = true;
  p->ok = ok;
  safe_text(p->summary, summary, len);
}

static void decide_text(struct tool_proc *p, const char *summary) {
  decide(p, false, summary, strlen(summary));
}

static void deliver(struct tool_proc *p, const struct tool_proc_event *ev) {
  p->in_cb++;
  p->cb(p->ctx, ev);
  p->in_cb--;
}

/* Reaps pid once its pidfd is readable (event_base_once's callback: arg is the
 * pid). A readable pidfd means the program is a zombie that waitpid can take,
 * so one try is enough. Nothing of ours is left to free: libevent frees the
 * once-event itself, also when the base is freed before it fires. */
static void reap_when_readable(evutil_socket_t fd, short what, void *arg) {
  (void)what;
  int status;
  while (waitpid((pid_t)(intptr_t)arg, &status, WNOHANG) < 0 && errno == EINTR) {
  }
  close(fd);
}

/* The program was killed and its owner is gone: the loop reaps it. Takes
 * pidfd. If libevent cannot take it (out of memory), the zombie stays until
 * turnd exits. */
static void reap_later(struct event_base *base, pid_t pid, int pidfd) {
  if (event_base_once(base, pidfd, EV_READ, reap_when_readable, (void *)(intptr_t)pid,
                      NULL) != 0)
    close(pidfd);
}

/* Frees everything; a program still unreaped is killed and left to the loop. */
static void destroy(struct tool_proc *p) {
  if (p->exit_ev != NULL) event_free(p->exit_ev);
  if (p->pid > 0) { /* the pidfd exists whenever pid does */
    kill_group(p);
    reap_later(p->base, p->pid, p->pidfd);
    p->pidfd = -1;
  }
  if (p->pidfd >= 0) close(p->pidfd);
  close_input(p);
  close_output(p);
  if (p->timer != NULL) event_free(p->timer);
  free(p->line);
  free(p->result_json);
  free(p->env[1]);
  free(p);
}

/* ------------------------------------------------------------ outcomes */

/* RUNNING -> KILLED: the outcome is a failure that says why. */
static void fault(struct tool_proc *p, const char *why) {
  if (step(p, TP_IN_FAULT) != 0) return;
  decide_text(p, why);
  kill_group(p);
  close_input(p);
  close_output(p);
  evtimer_del(p->timer);
  assert(check_invariants(p));
}

static const char not_protocol[] = "the tool wrote something that is not its protocol";
static const char too_big_number[] =
    "the tool wrote a number too big for turnd to read exactly";
static const char too_much[] = "the tool wrote too much";

/* {"ok": bool, "summary": string, "result"?: any} and nothing else. */
static bool is_result(json_t *j) {
  size_t keys = 2 + (json_object_get(j, "result") != NULL);
  return json_is_boolean(json_object_get(j, "ok")) &&
         json_is_string(json_object_get(j, "summary")) && json_object_size(j) == keys;
}

/* RUNNING -> RESULT_READ: stop listening; the program has a moment to exit. */
static void take_result(struct tool_proc *p, json_t *j) {
  json_t *result = json_object_get(j, "result");
  char *result_json = NULL;
  if (result != NULL && (result_json = json_dumps_shortest(
                             result, JSON_COMPACT | JSON_ENCODE_ANY)) == NULL) {
    fault(p, "turnd ran out of memory reading the tool's result");
    return;
  }
  if (step(p, TP_IN_RESULT) != 0) {
    free(result_json);
    return;
  }
  json_t *summary = json_object_get(j, "summary");
  decide(p, json_is_true(json_object_get(j, "ok")), json_string_value(summary),
         json_string_length(summary));
  p->result_json = result_json;
  close_input(p);
  close_output(p);
  evtimer_del(p->timer);
  if (p->pid > 0) {
    struct timeval grace = {TOOL_PROC_GRACE_MS / 1000,
                            (TOOL_PROC_GRACE_MS % 1000) * 1000};
    if (evtimer_add(p->timer, &grace) != 0) kill_group(p); /* no grace, then */
  }
  assert(check_invariants(p));
}

/* One whole stdout line, its newline removed. A blank line (a stray echo) is
 * skipped; a progress line is handed out at once. */
static void take_line(struct tool_proc *p, const char *s, size_t len) {
  if (len > 0 && s[len - 1] == '\r') len--;
  size_t blank = 0;
  while (blank < len && (s[blank] == ' ' || s[blank] == '\t'))
    blank++;
  if (blank == len) return;
  /* Without JSON_ALLOW_NUL a "\u0000" is refused, so strings are C strings. */
  json_error_t err;
  json_t *j = json_loadb(s, len, JSON_REJECT_DUPLICATES, &err);
  json_t *progress = json_object_get(j, "progress");
  if (json_is_string(progress) && json_object_size(j) == 1) {
    if (++p->progress_n > TOOL_PROC_PROGRESS_MAX) {
      fault(p, too_much);
    } else {
      char text[TOOL_PROC_TEXT_MAX + 1];
      safe_text(text, json_string_value(progress), json_string_length(progress));
      struct tool_proc_event ev = {.kind = TOOL_PROC_PROGRESS, .message = text};
      deliver(p, &ev);
    }
  } else if (json_is_object(j) && is_result(j)) {
    take_result(p, j);
  } else if (j == NULL && json_error_code(&err) == json_error_numeric_overflow) {
    /* An integer outside int64 (a hash, an id): valid JSON, but jansson could
     * hold it only as a rounded real, and a changed id is worse than a clear
     * failure. */
    fault(p, too_big_number);
  } else {
    fault(p, not_protocol);
  }
  json_decref(j);
}

/* Makes room for a line of need bytes (at most TOOL_PROC_OUTPUT_MAX, which a
 * result may fill): doubling, so a long line costs a few copies. */
static bool grow_line(struct tool_proc *p, size_t need) {
  size_t cap = p->line_cap;
  while (cap < need)
    cap = cap > TOOL_PROC_OUTPUT_MAX / 2 ? TOOL_PROC_OUTPUT_MAX : cap * 2;
  char *line = realloc(p->line, cap);
  if (line == NULL) return false;
  p->line = line;
  p->line_cap = cap;
  return true;
}

/* Splits stdout bytes into lines. Stops as soon as the state is not RUNNING:
 * a result, a fault, or the owner gone in a progress callback. */
static void feed(struct tool_proc *p, const char *data, size_t len) {
  while (len > 0 && p->state == TP_RUNNING) {
    const char *nl = memchr(data, '\n', len);
    size_t seg = nl != NULL ? (size_t)(nl - data) : len;
    if (seg > TOOL_PROC_OUTPUT_MAX - p->line_len) {
      fault(p, too_much);
      return;
    }
    if (seg > p->line_cap - p->line_len && !grow_line(p, p->line_len + seg)) {
      fault(p, "turnd ran out of memory reading the tool's result");
      return;
    }
    memcpy(p->line + p->line_len, data, seg);
    p->line_len += seg;
    if (nl == NULL) return;
    data += seg + 1;
    len -= seg + 1;
    size_t line_len = p->line_len;
    p->line_len = 0;
    take_line(p, p->line, line_len);
  }
}

/* Stdout ended while running, with no result: no result can come now. The
 * program gets the grace to exit (the exit says best what went wrong); one that
 * runs on is ended then, not at its timeout, which may be an hour off. */
static void output_ended(struct tool_proc *p) {
  p->output_ended = true;
  struct timeval due, now, grace_end;
  struct timeval grace = {TOOL_PROC_GRACE_MS / 1000, (TOOL_PROC_GRACE_MS % 1000) * 1000};
  /* The timer holds the timeout: the grace replaces it only if it ends first. */
  if (event_pending(p->timer, EV_TIMEOUT, &due) &&
      event_base_gettimeofday_cached(p->base, &now) == 0) {
    evutil_timeradd(&now, &grace, &grace_end);
    if (!evutil_timercmp(&grace_end, &due, <)) return; /* the timeout comes first */
  }
  evtimer_add(p->timer, &grace); /* on failure the timeout stays armed */
}

/* Reads stdout: at most READ_BUDGET chunks, or everything there is when drain
 * (the program exited: what it wrote is all in the pipe now). At EOF, or at the
 * end of a drain, an unterminated last line still counts. */
static void pump_output(struct tool_proc *p, bool drain) {
  char chunk[READ_CHUNK];
  for (int round = 0; p->state == TP_RUNNING && p->out_fd >= 0; round++) {
    if (!drain && round == READ_BUDGET) return;
    /* Never read past the limit by more than one byte: the events a flood
     * gives do not depend on how the pipe split it. */
    size_t room = TOOL_PROC_OUTPUT_MAX - p->out_total;
    ssize_t n = read(p->out_fd, chunk, room < sizeof chunk ? room + 1 : sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    bool end = n == 0 || (n < 0 && (drain || (errno != EAGAIN && errno != EWOULDBLOCK)));
    if (n < 0 && !end) return; /* nothing more for now */
    if (n > 0) {
      size_t take = (size_t)n <= room ? (size_t)n : room;
      p->out_total += take;
      feed(p, chunk, take);
      if ((size_t)n > room) fault(p, too_much);
      continue;
    }
    if (p->line_len > 0) {
      size_t line_len = p->line_len;
      p->line_len = 0;
      take_line(p, p->line, line_len);
    }
    if (p->state == TP_RUNNING) {
      close_output(p);
      if (!drain) output_ended(p); /* draining: the program already exited */
    }
    return;
  }
}

static void finish(struct tool_proc *p) {
  struct tool_proc_event ev = {.kind = TOOL_PROC_DONE,
                               .ok = p->ok,
                               .summary = p->summary,
                               .result_json = p->result_json};
  deliver(p, &ev);
  destroy(p);
}

/* ------------------------------------------------------ loop callbacks */

/* Writes the input while the pipe takes it. EPIPE (the program closed its
 * stdin, or exited) ends the writing without failing the call: whether the
 * program wanted all of its input is its own business. */
static void on_input_writable(evutil_socket_t fd, short what, void *arg) {
  (void)what;
  struct tool_proc *p = arg;
  sigset_t pipe_set, old, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  /* A write to a closed pipe raises SIGPIPE, which by default ends turnd. Block
   * it around the write and take back the one the write raised, if any. */
  sigpending(&pending);
  bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  bool done = false;
  while (p->input_off < p->input_len) {
    ssize_t n = write(fd, p->input + p->input_off, p->input_len - p->input_off);
    if (n > 0) {
      p->input_off += (size_t)n;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      done = !(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
      if (n < 0 && errno == EPIPE && !was_pending) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR) {
        }
      }
      break;
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (done || p->input_off == p->input_len) close_input(p); /* EOF for the program */
}

static void on_output_readable(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  struct tool_proc *p = arg;
  pump_output(p, false);
  if (p->state == TP_GONE) destroy(p);
}

/* The program exited. Its group is killed before it is reaped (see the top),
 * then what it wrote is read to the end, since the exit may be seen before the
 * last lines were. */
static void on_program_exit(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  struct tool_proc *p = arg;
  kill_group(p); /* whatever it left behind in its group */
  pid_t pid = p->pid;
  int status = 0;
  pid_t r;
  while ((r = waitpid(pid, &status, WNOHANG)) < 0 && errno == EINTR) {
  }
  if (r == 0) return; /* not yet after all */
  p->pid = -1;
  event_free(p->exit_ev);
  p->exit_ev = NULL;
  close(p->pidfd);
  p->pidfd = -1;
  pump_output(p, true);
  if (p->state == TP_GONE) {
    destroy(p);
    return;
  }
  if (p->state == TP_RUNNING) {
    char why[120];
    if (r != pid)
      snprintf(why, sizeof why, "the tool exited before giving a result");
    else if (WIFSIGNALED(status))
      snprintf(why, sizeof why, "the tool was killed by signal %d before giving a result",
               WTERMSIG(status));
    else
      snprintf(why, sizeof why, "the tool exited with status %d before giving a result",
               WEXITSTATUS(status));
    decide_text(p, why);
    close_input(p);
    close_output(p);
    evtimer_del(p->timer);
  }
  step(p, TP_IN_EXIT);
  assert(p->state == TP_EXITED && check_invariants(p));
  finish(p);
}

static void on_timer(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  struct tool_proc *p = arg;
  enum tp_state was = p->state;
  if (step(p, TP_IN_TIMER) != 0) return;
  if (was == TP_START_FAILED) {
    assert(check_invariants(p));
    finish(p);
    return;
  }
  if (was == TP_RUNNING) {
    /* "within 30 s", "within 0.2 s": the configured time, as it was given. */
    uint32_t ms = p->tool->timeout_ms;
    char secs[32], why[96];
    if (ms % 1000 == 0) {
      snprintf(secs, sizeof secs, "%u", (unsigned)(ms / 1000));
    } else {
      snprintf(secs, sizeof secs, "%u.%03u", (unsigned)(ms / 1000),
               (unsigned)(ms % 1000));
      size_t n = strlen(secs);
      while (secs[n - 1] == '0')
        secs[--n] = '\0';
    }
    snprintf(why, sizeof why, "the tool did not finish within %s s", secs);
    decide_text(p, p->output_ended ? "the tool closed its output without giving a result"
                                   : why);
    close_input(p);
    close_output(p);
  }
  kill_group(p); /* RESULT_READ: the result stands, the program goes */
  assert(check_invariants(p));
}

/* ------------------------------------------------------------ start */

/* fd moved to 3 or above, so that the dup2 onto 0 and 1 in the child cannot
 * overwrite a pipe end that happens to be 0 or 1 (turnd started with them
 * closed). Returns the fd (close-on-exec), or -1. */
static int above_stdio(int fd) {
  if (fd > 2) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  close(fd);
  return moved;
}

/* A pipe with both ends above stdio: 0, or -1 with errno and both fds[] -1.
 * On failure nothing stays open and no closed number is left behind, as
 * another thread may already have been given that number and the caller's
 * cleanup would then close the other thread's fd. */
static int make_pipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) {
    fds[0] = fds[1] = -1;
    return -1;
  }
  fds[0] = above_stdio(fds[0]);
  fds[1] = above_stdio(fds[1]);
  if (fds[0] >= 0 && fds[1] >= 0) return 0;
  int saved = errno;
  for (int i = 0; i < 2; i++) {
    if (fds[i] >= 0) close(fds[i]);
    fds[i] = -1;
  }
  errno = saved;
  return -1;
}

static int set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* The child's side of spawn(), between fork and exec. turnd has other threads,
 * whose locks the child's copy of memory may hold, so only async-signal-safe
 * calls: no malloc, no stdio. A failure's errno goes to report (close-on-exec,
 * so a successful exec closes it unwritten) and the child exits. */
static _Noreturn void child_run(const struct tool_proc *p, int child_in, int child_out,
                                int report, pid_t parent, int fd_limit) {
  /* turnd ignores SIGPIPE and has handlers; the tool gets the defaults. */
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; sig++)
    (void)sigaction(sig, &dfl, NULL); /* SIGKILL and SIGSTOP refuse: no matter */
  /* A session of its own, so a group of its own too (its id is the pid), and
   * no controlling terminal: the owner's terminal, if turnd has one, is not
   * the tool's to write to (its output goes through turnd, which cleans it).
   * It dies with turnd, however turnd dies: a kill -9 leaves no tool running
   * on with nobody to read it or end it at its timeout. */
  if (setsid() < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) goto failed;
  if (getppid() != parent) _exit(127); /* turnd died before the request took */
  if (chdir(p->tool->cwd) != 0 || dup2(child_in, 0) < 0 || dup2(child_out, 1) < 0)
    goto failed;
  int null = open("/dev/null", O_WRONLY);
  if (null < 0 || dup2(null, 2) < 0) goto failed;
  /* Our fds are close-on-exec, but not every library's: nothing else passes.
   * Kernels 5.9 and 5.10 close but cannot mark: all but report is closed (it
   * is close-on-exec, and above stdio). An older kernel or a seccomp filter
   * refuses both: each fd below fd_limit is marked on its own. */
  if (close_range(3, ~0u, CLOSE_RANGE_CLOEXEC) != 0 &&
      ((report > 3 && close_range(3, (unsigned)report - 1, 0) != 0) ||
       close_range((unsigned)report + 1, ~0u, 0) != 0))
    for (int fd = 3; fd < fd_limit; fd++)
      (void)fcntl(fd, F_SETFD, FD_CLOEXEC); /* EBADF for the fds not open */
  sigset_t none;
  sigemptyset(&none);
  (void)sigprocmask(SIG_SETMASK, &none, NULL);
  execve(p->tool->argv[0], p->tool->argv, p->env);
failed:;
  int err = errno;
  ssize_t n = write(report, &err, sizeof err); /* a pipe's small write is whole */
  (void)n;
  _exit(127);
}

/* The fds a child without close_range must mark one by one: up to the highest
 * open now, which /proc/self/fd tells, or else the open-files limit. Only asked
 * where close_range is refused (found once): a walk of /proc per start is not
 * free. An fd another thread opens meanwhile is close-on-exec, as every
 * library here opens them. */
static int fd_walk_limit(void) {
  static int has_close_range = -1; /* unknown; the loop's thread only */
  if (has_close_range < 0)         /* a range no process holds: a no-op where it exists */
    has_close_range = close_range(~0u - 1, ~0u, 0) == 0;
  if (has_close_range) return 0;
  int highest = -1;
  DIR *dir = opendir("/proc/self/fd");
  if (dir != NULL) {
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
      char *end;
      long fd = strtol(e->d_name, &end, 10);
      if (end != e->d_name && *end == '\0' && fd > highest && fd < INT_MAX)
        highest = (int)fd;
    }
    closedir(dir);
    return highest + 1;
  }
  struct rlimit nofile;
  return getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < 65536
             ? (int)nofile.rlim_cur
             : 65536;
}

/* Starts the program with the setup of tool_proc.h. fork and exec, where
 * posix_spawn would do the rest, because only a child's own code can ask to die
 * with its parent. Returns 0 with *pid, or an errno value (a failed chdir or
 * exec among them, as posix_spawn reports them). */
static int spawn(struct tool_proc *p, int child_in, int child_out, pid_t *pid) {
  /* Above stdio, like the tool's pipes: a report end on 0-2 would be replaced
   * by the child's own dup2 and the failure read as a start. */
  int report[2];
  if (make_pipe(report) != 0) return errno;
  int fd_limit = fd_walk_limit();
  /* No handler of turnd's may run in the child before it resets them. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t parent = getpid();
  pid_t child = fork();
  if (child == 0) child_run(p, child_in, child_out, report[1], parent, fd_limit);
  int fork_err = errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  close(report[1]);
  if (child < 0) {
    close(report[0]);
    return fork_err;
  }
  /* Blocks only until the exec: the one moment posix_spawn blocks too. */
  int err = 0;
  ssize_t n;
  while ((n = read(report[0], &err, sizeof err)) < 0 && errno == EINTR) {
  }
  close(report[0]);
  if (n == (ssize_t)sizeof err) { /* the child said why and exits */
    while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {
    }
    return err != 0 ? err : EIO;
  }
  *pid = child;
  return 0;
}

/* NONE -> START_FAILED: DONE comes from the loop, never from inside start.
 * Returns -1 when even that cannot be arranged. */
static int start_failed(struct tool_proc *p, int err) {
  char why[160];
  snprintf(why, sizeof why, "the tool could not start: %s", strerror(err));
  decide_text(p, why);
  close_input(p);
  close_output(p);
  set_state(p, TP_START_FAILED);
  struct timeval now = {0, 0};
  if (evtimer_add(p->timer, &now) != 0) return -1;
  assert(check_invariants(p));
  return 0;
}

/* Pipes, the program, the pidfd and the events: 0 when RUNNING or
 * START_FAILED, -1 when the call cannot be reported (the caller destroys p). */
static int launch(struct tool_proc *p) {
  int in[2] = {-1, -1}, out[2] = {-1, -1};
  if (make_pipe(in) != 0 || make_pipe(out) != 0 || set_nonblocking(in[1]) != 0 ||
      set_nonblocking(out[0]) != 0) {
    int err = errno;
    for (int i = 0; i < 2; i++) {
      if (in[i] >= 0) close(in[i]);
      if (out[i] >= 0) close(out[i]);
    }
    return start_failed(p, err);
  }
  p->in_fd = in[1];
  p->out_fd = out[0];
  pid_t pid = -1;
  int rv = spawn(p, in[0], out[1], &pid);
  close(in[0]); /* the child's ends live on in the child only */
  close(out[1]);
  if (rv != 0) return start_failed(p, rv);
  p->pid = pid;
  p->pidfd = pidfd_open(pid, 0);
  if (p->pidfd < 0) {
    /* Out of fds or memory, and so no way to see the exit on the loop. The one
     * blocking wait of this file: the program has just been exec'd and is
     * killed, so it is gone at once. */
    int err = errno;
    kill_group(p);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    p->pid = -1;
    return start_failed(p, err);
  }
  p->in_ev = event_new(p->base, p->in_fd, EV_WRITE | EV_PERSIST, on_input_writable, p);
  p->out_ev = event_new(p->base, p->out_fd, EV_READ | EV_PERSIST, on_output_readable, p);
  struct timeval timeout = {p->tool->timeout_ms / 1000,
                            (p->tool->timeout_ms % 1000) * 1000};
  /* A tool's pipes, exit and timeout are part of its turn's stream: they go
   * with the stream's events, first (0 is the first priority of any loop). */
  if (p->in_ev == NULL || p->out_ev == NULL ||
      event_assign(p->exit_ev, p->base, p->pidfd, EV_READ | EV_PERSIST, on_program_exit,
                   p) != 0 ||
      event_priority_set(p->in_ev, 0) != 0 || event_priority_set(p->out_ev, 0) != 0 ||
      event_priority_set(p->exit_ev, 0) != 0 || event_priority_set(p->timer, 0) != 0 ||
      event_add(p->exit_ev, NULL) != 0 || event_add(p->in_ev, NULL) != 0 ||
      event_add(p->out_ev, NULL) != 0 || evtimer_add(p->timer, &timeout) != 0)
    return -1; /* destroy() kills and reaps */
  set_state(p, TP_RUNNING);
  assert(check_invariants(p));
  return 0;
}

struct tool_proc *tool_proc_start(struct event_base *base, const struct tool_config *tool,
                                  const char *input_json, tool_proc_cb *cb, void *ctx) {
  struct tool_proc *p = calloc(1, sizeof *p);
  if (p == NULL) return NULL;
  p->base = base;
  p->tool = tool;
  p->cb = cb;
  p->ctx = ctx;
  p->pid = -1;
  p->pidfd = p->in_fd = p->out_fd = -1;
  size_t input_len = strlen(input_json);
  size_t home_len = strlen(tool->cwd);
  p->input = malloc(input_len + 1);
  p->line_cap = TOOL_PROC_LINE_START;
  p->line = malloc(p->line_cap);
  p->env[1] = malloc(sizeof "HOME=" + home_len);
  p->timer = evtimer_new(base, on_timer, p);
  /* Assigned its pidfd once there is one; allocated now so that nothing after
   * the spawn can run out of memory but libevent's own add. */
  p->exit_ev = event_new(base, -1, 0, on_program_exit, p);
  if (p->input == NULL || p->line == NULL || p->env[1] == NULL || p->timer == NULL ||
      p->exit_ev == NULL) {
    destroy(p);
    return NULL;
  }
  memcpy(p->input, input_json, input_len);
  p->input[input_len] = '\n';
  p->input_len = input_len + 1;
  p->env[0] = "PATH=/usr/local/bin:/usr/bin:/bin";
  memcpy(p->env[1], "HOME=", 5);
  memcpy(p->env[1] + 5, tool->cwd, home_len + 1);
  p->env[2] = "LANG=C.UTF-8";
  p->env[3] = NULL;
  if (launch(p) != 0) {
    destroy(p);
    return NULL;
  }
  return p;
}

void tool_proc_kill(struct tool_proc *p) {
  if (p == NULL) return;
  assert(p->state != TP_EXITED && p->state != TP_GONE);
  if (step(p, TP_IN_KILL) != 0) return;
  kill_group(p); /* at once, even when the freeing waits for cb to return */
  if (p->in_cb == 0) destroy(p);
}
