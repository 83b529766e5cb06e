/* See interrupt.h. */
#include "interrupt.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t seen, caught;
static int null_fd = -1; /* /dev/null, opened before the handler may need it */

void interrupt_note(void) {
  seen = 1;
  /* A ^C that comes just before the y/n question starts to read would not
   * interrupt that read, which could then wait for ever: stdin becomes empty
   * instead, so every read from now on ends at once. dup2 is async-signal-safe. */
  if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
}

static void on_interrupt(int sig) {
  (void)sig;
  interrupt_note();
}

void interrupt_catch(void) {
  if (null_fd < 0) null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  /* No SA_RESTART: a read under way returns. SA_RESETHAND: the second ^C gets
   * the default, which ends the client. */
  sa.sa_flags = (int)SA_RESETHAND;
  sigaction(SIGINT, &sa, NULL);
  caught = 1;
}

bool interrupt_caught(void) {
  return caught != 0;
}

bool interrupt_seen(void) {
  return seen != 0;
}
