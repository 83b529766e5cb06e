/* The PIN check's thread; see pin_check.h. The thread touches nothing but its
 * own copies and its end of the pipe: the loop joins it after reading its one
 * byte, when it is already on its way out. */
#include "pin_check.h"

#include "credential.h"
#include "thread_sched.h"

#include <event2/event.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pin_check {
  char stored[CREDENTIAL_PIN_HASH_CAP];
  char pin[CREDENTIAL_PIN_MAX + 1];
  size_t len;
  int pipe_fd[2]; /* [0] the loop reads the answer, [1] the thread writes it */
  pthread_t thread;
  struct event *ev; /* owned: pipe_fd[0] readable */
  pin_check_done_cb *done;
  void *ctx;
};

static void *verify(void *arg) {
  struct pin_check *c = arg;
  background_thread_begin("pin");
  char match = credential_pin_verify(c->stored, c->pin, c->len) ? 1 : 0;
  credential_wipe(c->pin, sizeof c->pin);
  while (write(c->pipe_fd[1], &match, 1) < 0) {
  }
  return NULL;
}

static void check_free(struct pin_check *c) {
  pthread_join(c->thread, NULL);
  event_free(c->ev);
  close(c->pipe_fd[0]);
  close(c->pipe_fd[1]);
  free(c);
}

static void on_answer(evutil_socket_t fd, short what, void *arg) {
  (void)what;
  struct pin_check *c = arg;
  char match = 0;
  if (read(fd, &match, 1) != 1) return; /* spurious: it comes again */
  c->done(c->ctx, match == 1);
  check_free(c);
}

struct pin_check *pin_check_start(struct event_base *base, const char *stored,
                                  const char *pin, size_t len, pin_check_done_cb *done,
                                  void *ctx) {
  if (strlen(stored) >= sizeof((struct pin_check *)0)->stored || len > CREDENTIAL_PIN_MAX)
    return NULL;
  struct pin_check *c = calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  memcpy(c->stored, stored, strlen(stored) + 1);
  memcpy(c->pin, pin, len);
  c->len = len;
  c->done = done;
  c->ctx = ctx;
  if (pipe2(c->pipe_fd, O_CLOEXEC) != 0) {
    credential_wipe(c->pin, sizeof c->pin);
    free(c);
    return NULL;
  }
  c->ev = event_new(base, c->pipe_fd[0], EV_READ | EV_PERSIST, on_answer, c);
  if (c->ev == NULL || event_add(c->ev, NULL) != 0 ||
      pthread_create(&c->thread, NULL, verify, c) != 0) {
    if (c->ev != NULL) event_free(c->ev);
    close(c->pipe_fd[0]);
    close(c->pipe_fd[1]);
    credential_wipe(c->pin, sizeof c->pin);
    free(c);
    return NULL;
  }
  return c;
}

void pin_check_abandon(struct pin_check *c) {
  if (c != NULL) check_free(c);
}
