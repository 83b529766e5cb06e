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

/* Forks argv[0] with in, out and err (-1: the runner's own) as its stdin, stdout
 * and stderr. The caller closes its copies of them. */
static pid_t spawn(const char *const *argv, int in, int out, int err) {
  pid_t pid = fork();
  if (pid == 0) {
    /* A runner that dies (a crash, a kill by ctest) takes turnd with it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (in >= 0) dup2(in, STDIN_FILENO);
    if (out >= 0) dup2(out, STDOUT_FILENO);
    if (err >= 0) dup2(err, STDERR_FILENO);
    close_inherited();
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  return pid;
}

int case_proc_start(struct case_proc *p, const char *data_dir, const char *const *args,
                    const char *log) {
  const char *argv[MAX_ARGV + 6];
  turnd_argv(argv, data_dir, args);
  return case_proc_start_program(p, argv, log);
}

/* Waits for the first line p's program appends to p->out_path past
 * p->out_start, into p->listen_line. A file, unlike a pipe, has no end to wait
 * for, so it is read again every few milliseconds until the line is whole or the
 * program has exited (then it is waited for: p->pid is 0). */
static void read_first_line(struct case_proc *p, int fd) {
  size_t cap = sizeof p->listen_line - 1, len = 0;
  long long deadline = now_ms() + 30000;
  for (;;) {
    int wstatus;
    bool gone = waitpid(p->pid, &wstatus, WNOHANG) == p->pid;
    ssize_t got = pread(fd, p->listen_line, cap, (off_t)p->out_start);
    len = got > 0 ? (size_t)got : 0;
    char *nl = memchr(p->listen_line, '\n', len);
    if (nl != NULL) len = (size_t)(nl - p->listen_line);
    if (gone) p->pid = 0;
    if (nl != NULL || len == cap || gone || now_ms() > deadline) break;
    struct timespec pause = {0, 2 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  p->listen_line[len] = '\0';
}

int case_proc_start_program(struct case_proc *p, const char *const *argv,
                            const char *log) {
  memset(p, 0, sizeof *p);
  char err_path[sizeof p->out_path];
  snprintf(p->out_path, sizeof p->out_path, "%s.out", log);
  snprintf(err_path, sizeof err_path, "%s.err", log);
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;
  int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  int out = open(p->out_path, flags, 0600), err = open(err_path, flags, 0600);
  int rd = open(p->out_path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (in >= 0 && out >= 0 && err >= 0 && rd >= 0 && fstat(out, &st) == 0) {
    p->out_start = (long)st.st_size;
    p->pid = spawn(argv, in, out, err);
  }
  if (in >= 0) close(in);
  if (out >= 0) close(out);
  if (err >= 0) close(err);
  if (p->pid <= 0) {
    p->pid = 0;
    if (rd >= 0) close(rd);
    return -1;
  }
  read_first_line(p, rd);
  close(rd);
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

static void close_pair(int fds[2]) {
  close(fds[0]);
  close(fds[1]);
}

/* Runs argv to its end with input on its stdin, keeping both outputs. */
static int run_argv(struct case_proc_run *r, const char *const *argv, const char *input,
                    int safety_ms) {
  memset(r, 0, sizeof *r);
  r->status = -1;
  size_t lens[2] = {0, 0};
  char **bufs[2] = {&r->out, &r->err};
  if (!append(&r->out, &lens[0], "", 0) || !append(&r->err, &lens[1], "", 0)) return -1;
  /* No close-on-exec needed: the child closes all but its three (spawn). */
  int in[2], out[2], err[2];
  if (pipe(in) != 0) return -1;
  if (pipe(out) != 0) {
    close_pair(in);
    return -1;
  }
  if (pipe(err) != 0) {
    close_pair(in);
    close_pair(out);
    return -1;
  }
  struct case_proc p = {0};
  p.pid = spawn(argv, in[0], out[1], err[1]);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  /* A line or two at most: it fits in the pipe, so this never blocks. */
  if (p.pid > 0 && input != NULL) (void)!write(in[1], input, strlen(input));
  close(in[1]);
  if (p.pid < 0) {
    close(out[0]);
    close(err[0]);
    return -1;
  }
  int fds[2] = {out[0], err[0]};
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

int case_proc_run(struct case_proc_run *r, const char *data_dir, const char *const *args,
                  int safety_ms) {
  const char *argv[MAX_ARGV + 6];
  turnd_argv(argv, data_dir, args);
  return run_argv(r, argv, NULL, safety_ms);
}

int case_proc_admin(struct case_proc_run *r, const char *const *args, const char *input,
                    int safety_ms) {
  const char *argv[MAX_ARGV + 2] = {TURND_PATH};
  size_t n = 1;
  for (size_t i = 0; args[i] != NULL && i < MAX_ARGV; i++)
    argv[n++] = args[i];
  argv[n] = NULL;
  return run_argv(r, argv, input, safety_ms);
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
