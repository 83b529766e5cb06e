/* See case_proc.h. turnd's path comes from the build (TURND_PATH). */
#include "case_proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ARGV 64

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int exit_status(int wstatus) {
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
  return -1;
}

/* In the child: only stdin, stdout and stderr go on to turnd, so no socket of
 * the runner stays open in it (a reader the runner closes must look closed). */
static void close_inherited(void) {
  struct rlimit rl;
  long max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                 ? (long)rl.rlim_cur
                 : 4096;
  if (max > 65536) max = 65536;
  for (long fd = 3; fd < max; fd++)
    close((int)fd);
}

/* turnd's command line: --listen, --data, then args. argv has MAX_ARGV + 6. */
static void turnd_argv(const char **argv, const char *data_dir, const char *const *args) {
  const char *head[] = {TURND_PATH, "--listen", "127.0.0.1:0", "--data", data_dir};
  size_t n = 0;
  for (; n < 5; n++)
    argv[n] = head[n];
  for (size_t i = 0; args != NULL && args[i] != NULL && i < MAX_ARGV; i++)
    argv[n++] = args[i];
  argv[n] = NULL;
}

/* Forks argv[0] with its stdout (and stderr when err_fd is not NULL) on pipes. */
static pid_t spawn(const char *const *argv, int *out_fd, int *err_fd) {
  int out[2], err[2] = {-1, -1};
  if (pipe(out) != 0) return -1;
  if (err_fd != NULL && pipe(err) != 0) {
    close(out[0]);
    close(out[1]);
    return -1;
  }
  pid_t pid = fork();
  if (pid == 0) {
    /* A runner that dies (a crash, a kill by ctest) takes turnd with it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(out[1], STDOUT_FILENO);
    if (err_fd != NULL) dup2(err[1], STDERR_FILENO);
    close_inherited();
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  close(out[1]);
  if (err_fd != NULL) close(err[1]);
  if (pid < 0) {
    close(out[0]);
    if (err_fd != NULL) close(err[0]);
    return -1;
  }
  *out_fd = out[0];
  if (err_fd != NULL) *err_fd = err[0];
  return pid;
}

int case_proc_start(struct case_proc *p, const char *data_dir, const char *const *args) {
  const char *argv[MAX_ARGV + 6];
  turnd_argv(argv, data_dir, args);
  return case_proc_start_program(p, argv);
}

int case_proc_start_program(struct case_proc *p, const char *const *argv) {
  memset(p, 0, sizeof *p);
  int fd;
  p->pid = spawn(argv, &fd, NULL);
  if (p->pid < 0) {
    p->pid = 0;
    return -1;
  }
  /* The first line, byte by byte so nothing after it is swallowed; a turnd that
   * exits first closes the pipe. */
  size_t len = 0;
  long long deadline = now_ms() + 30000;
  for (;;) {
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    long long left = deadline - now_ms();
    char c;
    if (left <= 0 || poll(&pf, 1, (int)left) <= 0 || read(fd, &c, 1) != 1 || c == '\n')
      break;
    if (len + 1 < sizeof p->listen_line) p->listen_line[len++] = c;
  }
  p->listen_line[len] = '\0';
  close(fd);
  if (sscanf(p->listen_line, "listening on http://127.0.0.1:%u", &p->port) != 1 ||
      p->port == 0) {
    case_proc_stop(p, SIGKILL, 30000);
    return -1;
  }
  snprintf(p->base_url, sizeof p->base_url, "http://127.0.0.1:%u", p->port);
  return 0;
}

int case_proc_stop(struct case_proc *p, int sig, int safety_ms) {
  if (p->pid <= 0) return -1;
  if (sig != 0) kill(p->pid, sig);
  long long deadline = now_ms() + safety_ms;
  int wstatus, status = -1;
  for (;;) {
    pid_t got = waitpid(p->pid, &wstatus, WNOHANG);
    if (got == p->pid) {
      status = exit_status(wstatus);
      break;
    }
    if (got < 0 && errno != EINTR) break;
    if (now_ms() > deadline) { /* the safety net: it hangs */
      kill(p->pid, SIGKILL);
      waitpid(p->pid, &wstatus, 0);
      break;
    }
    struct timespec pause = {0, 5 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  p->pid = 0;
  return status;
}

/* Appends n bytes to a NUL-terminated growing buffer. */
static bool append(char **buf, size_t *len, const char *data, size_t n) {
  char *grown = realloc(*buf, *len + n + 1);
  if (grown == NULL) return false;
  memcpy(grown + *len, data, n);
  *len += n;
  grown[*len] = '\0';
  *buf = grown;
  return true;
}

int case_proc_run(struct case_proc_run *r, const char *data_dir, const char *const *args,
                  int safety_ms) {
  memset(r, 0, sizeof *r);
  r->status = -1;
  size_t lens[2] = {0, 0};
  char **bufs[2] = {&r->out, &r->err};
  if (!append(&r->out, &lens[0], "", 0) || !append(&r->err, &lens[1], "", 0)) return -1;
  struct case_proc p = {0};
  int fds[2];
  const char *argv[MAX_ARGV + 6];
  turnd_argv(argv, data_dir, args);
  p.pid = spawn(argv, &fds[0], &fds[1]);
  if (p.pid < 0) return -1;
  long long deadline = now_ms() + safety_ms;
  bool told_to_stop = false, ok = true;
  while (ok && (fds[0] >= 0 || fds[1] >= 0)) {
    struct pollfd pf[2] = {{.fd = fds[0], .events = POLLIN},
                           {.fd = fds[1], .events = POLLIN}};
    long long left = deadline - now_ms();
    if (left <= 0 || poll(pf, 2, (int)left) < 0) {
      ok = false;
      break;
    }
    for (int i = 0; i < 2; i++) {
      if (pf[i].fd < 0 || pf[i].revents == 0) continue;
      char buf[4096];
      ssize_t got = read(pf[i].fd, buf, sizeof buf);
      if (got > 0) {
        ok = append(bufs[i], &lens[i], buf, (size_t)got);
      } else {
        close(fds[i]);
        fds[i] = -1;
      }
    }
    /* It listens, so it was not refused: stop it, and let the caller see. */
    if (!told_to_stop && strchr(r->out, '\n') != NULL &&
        strncmp(r->out, "listening on ", 13) == 0) {
      kill(p.pid, SIGTERM);
      told_to_stop = true;
    }
  }
  for (int i = 0; i < 2; i++)
    if (fds[i] >= 0) close(fds[i]);
  long long left = deadline - now_ms();
  r->status = case_proc_stop(&p, ok ? 0 : SIGKILL, ok && left > 0 ? (int)left : 1);
  return ok && r->status >= 0 ? 0 : -1;
}

void case_proc_run_free(struct case_proc_run *r) {
  free(r->out);
  free(r->err);
  r->out = r->err = NULL;
}

int case_remove_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR(st.st_mode)) return unlink(path);
  DIR *dir = opendir(path);
  if (dir == NULL) return -1;
  int rc = 0;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char child[4096];
    if ((size_t)snprintf(child, sizeof child, "%s/%s", path, e->d_name) >= sizeof child ||
        case_remove_tree(child) != 0)
      rc = -1;
  }
  closedir(dir);
  return rmdir(path) == 0 ? rc : -1;
}
