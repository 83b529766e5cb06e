/* See pin.h. Echo is turned off with termios for the one line, and a signal that
 * arrives meanwhile (^C) puts it back before the process ends, or the owner's
 * shell would be left typing blind. */
#include "pin.h"

#include "interrupt.h"
#include "secret.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

static const int restore_on[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define N_SIGNALS (sizeof restore_on / sizeof restore_on[0])

static struct termios saved; /* the terminal as it was, while echo is off */

static void on_signal(int sig) {
  tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved); /* async-signal-safe */
  if (sig == SIGINT && interrupt_caught()) {  /* a turn's ^C: it is cancelled */
    interrupt_note();
    return;
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Echo off (but the newline still shown, ECHONL), with handlers that undo it.
 * Returns false when stdin is not a terminal we can change. */
static bool echo_off(struct sigaction old[N_SIGNALS]) {
  if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved) != 0) return false;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < N_SIGNALS; i++)
    sigaction(restore_on[i], &sa, &old[i]);
  struct termios quiet = saved;
  quiet.c_lflag &= (tcflag_t)~ECHO;
  quiet.c_lflag |= ECHONL;
  if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) == 0) return true;
  for (size_t i = 0; i < N_SIGNALS; i++)
    sigaction(restore_on[i], &old[i], NULL);
  return false;
}

static void echo_on(struct sigaction old[N_SIGNALS]) {
  tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
  for (size_t i = 0; i < N_SIGNALS; i++)
    sigaction(restore_on[i], &old[i], NULL);
  if (interrupt_seen()) signal(SIGINT, SIG_DFL); /* the second ^C ends the client */
}

int pin_ask(char *out, size_t cap) {
  fflush(stdout);
  fputs("PIN: ", stderr); /* stderr: seen even with stdout sent to a file */
  struct sigaction old[N_SIGNALS];
  bool quiet = echo_off(old);
  bool got = fgets(out, (int)cap, stdin) != NULL;
  if (quiet) echo_on(old);
  /* From a pipe nothing echoes the newline: end the prompt's line ourselves, as
   * the y/n question does. */
  if (!isatty(STDIN_FILENO)) fputc('\n', stderr);
  if (!got) return -1;
  size_t len = strlen(out);
  bool whole = len > 0 && out[len - 1] == '\n';
  if (!whole && !feof(stdin)) {
    int c;
    while ((c = getchar()) != EOF && c != '\n') /* the rest of the long line */
      ;
    secret_wipe(out, cap);
    fprintf(stderr, "turn: that PIN is too long\n");
    return -1;
  }
  while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == '\r'))
    out[--len] = '\0';
  return len > 0 ? 0 : -1;
}
