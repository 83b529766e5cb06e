/* The case runner's processes: turnd, the fake provider, and turnd's admin
 * commands. A case keeps one data folder for its whole run, so turnd can be
 * stopped, killed and started again on what it stored; the runner makes the
 * folder and starts turnd itself (tests/daemon's harness always starts on a
 * fresh folder). What a started process prints goes to files, so nothing it
 * says is lost (the runner searches it for secrets) and it never blocks on a
 * full pipe. Every wait here is for the process (a line, its exit), under the
 * case's safety timeout. */
#ifndef CASE_PROC_H
#define CASE_PROC_H

#include <stddef.h>
#include <sys/types.h>

/* A turnd that printed its "listening on" line. */
struct case_proc {
  pid_t pid; /* 0 once it has been waited for */
  unsigned port;
  char base_url[64];     /* http://127.0.0.1:PORT */
  char listen_line[160]; /* the first line it printed, without its newline */
  char out_path[160];    /* the file its stdout is appended to */
  long out_start;        /* where in out_path this start's output begins */
};

/* Starts TURND_PATH --listen 127.0.0.1:0 --data data_dir, then args (borrowed,
 * NULL-terminated), with its stdout appended to log.out and its stderr to
 * log.err (log is a path without the extension), and waits for its first line.
 * Returns 0 when that line says where it listens; else -1, with whatever it
 * printed in p->listen_line, and the process waited for. */
int case_proc_start(struct case_proc *p, const char *data_dir, const char *const *args,
                    const char *log);
/* The same for another program that prints turnd's "listening on" line first
 * (the fake model provider): argv[0] is its path (all borrowed). */
int case_proc_start_program(struct case_proc *p, const char *const *argv,
                            const char *log);

/* Sends sig (0: none) and waits up to safety_ms for the exit; past that the
 * process is killed. Returns the exit status (128 + N when signal N ended it), or
 * -1 when it had to be killed or cannot be waited for. */
int case_proc_stop(struct case_proc *p, int sig, int safety_ms);

/* A program run to its end with stdout and stderr kept. */
struct case_proc_run {
  int status; /* as case_proc_stop returns */
  char *out;  /* its standard output, NUL-terminated; owned */
  char *err;  /* its standard error, likewise */
};

/* Runs turnd as case_proc_start would and reads both outputs until they close.
 * A turnd that says it listens is running, not refused: it is sent SIGTERM and
 * run to its end, so the caller sees what it did. Returns 0, or -1 when it could
 * not be run or did not end within safety_ms (then it is killed). */
int case_proc_run(struct case_proc_run *r, const char *data_dir, const char *const *args,
                  int safety_ms);
/* Runs TURND_PATH, then args (an admin command and its arguments, borrowed), with
 * input (borrowed; NULL for none) on its stdin, as case_proc_run does. stdin is
 * never a terminal, so no command prompts. */
int case_proc_admin(struct case_proc_run *r, const char *const *args, const char *input,
                    int safety_ms);
void case_proc_run_free(struct case_proc_run *r);

/* Removes path and everything under it; a missing path is not an error. */
int case_remove_tree(const char *path);

#endif
