/* The builder thread (see request_build.h). Two lists under one lock: jobs to
 * build, oldest first, and jobs built, which the loop takes all at once when the
 * eventfd says there are some. A job's owner and done are the loop's alone: the
 * thread reads only its input and writes only its body. */
#include "request_build.h"

#include "thread_sched.h"

#include <event2/event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct request_job {
  struct request_job *next;
  request_build_fn *build;
  char *what;            /* the input: owned */
  char *body;            /* once built: owned, or NULL */
  request_done_fn *done; /* loop only */
  void *owner;           /* loop only; NULL once forgotten */
};

struct job_list {
  struct request_job *head, **tail;
};

struct request_builder {
  const void *cfg;
  pthread_t thread;
  bool thread_started;
  pthread_mutex_t lock;
  pthread_cond_t wake;   /* todo has a job, or stopping */
  struct job_list todo;  /* under lock */
  struct job_list built; /* under lock */
  bool stopping;         /* under lock */
  int efd;               /* readable when built has jobs */
  struct event *built_ev;
};

static void list_init(struct job_list *l) {
  l->head = NULL;
  l->tail = &l->head;
}

static void list_push(struct job_list *l, struct request_job *j) {
  j->next = NULL;
  *l->tail = j;
  l->tail = &j->next;
}

static void job_free(struct request_job *j) {
  free(j->what);
  free(j->body);
  free(j);
}

/* Hands each job of the list taken out, j on, to its owner, unless forgotten,
 * and frees it. done may submit or forget other jobs (a run that ends frees
 * another), so each owner is read just before its call. */
static void hand_back(struct request_job *j) {
  while (j != NULL) {
    struct request_job *next = j->next;
    if (j->owner != NULL) {
      char *body = j->body;
      j->body = NULL;
      j->done(j->owner, body);
    }
    job_free(j);
    j = next;
  }
}

static void *builder_main(void *arg) {
  struct request_builder *b = arg;
  background_thread_begin("builder");
  pthread_mutex_lock(&b->lock);
  for (;;) {
    while (!b->stopping && b->todo.head == NULL)
      pthread_cond_wait(&b->wake, &b->lock);
    if (b->stopping) break;
    struct request_job *j = b->todo.head;
    b->todo.head = j->next;
    if (b->todo.head == NULL) b->todo.tail = &b->todo.head;
    pthread_mutex_unlock(&b->lock);

    j->body = j->build(b->cfg, j->what);

    pthread_mutex_lock(&b->lock);
    list_push(&b->built, j);
    uint64_t one = 1; /* cannot fail short of a counter near 2^64 */
    ssize_t w = write(b->efd, &one, sizeof one);
    (void)w;
  }
  pthread_mutex_unlock(&b->lock);
  return NULL;
}

/* The eventfd is readable: hand each built job to its owner. */
static void on_built(evutil_socket_t fd, short what, void *arg) {
  (void)what;
  struct request_builder *b = arg;
  uint64_t count;
  ssize_t r = read(fd, &count, sizeof count); /* resets it; EAGAIN: nothing new */
  (void)r;
  pthread_mutex_lock(&b->lock);
  struct request_job *j = b->built.head;
  list_init(&b->built);
  pthread_mutex_unlock(&b->lock);
  hand_back(j);
}

struct request_builder *request_builder_new(struct event_base *base, const void *cfg) {
  struct request_builder *b = calloc(1, sizeof *b);
  if (b == NULL) return NULL;
  b->cfg = cfg;
  list_init(&b->todo);
  list_init(&b->built);
  pthread_mutex_init(&b->lock, NULL);
  pthread_cond_init(&b->wake, NULL);
  b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (b->efd >= 0)
    b->built_ev = event_new(base, b->efd, EV_READ | EV_PERSIST, on_built, b);
  /* A built request starts a running turn's model call: part of its stream
   * (loop_prio.h; 0 is the first priority of any loop). */
  if (b->built_ev == NULL || event_priority_set(b->built_ev, 0) != 0 ||
      event_add(b->built_ev, NULL) != 0 ||
      pthread_create(&b->thread, NULL, builder_main, b) != 0) {
    request_builder_free(b);
    return NULL;
  }
  b->thread_started = true;
  return b;
}

void request_builder_free(struct request_builder *b) {
  if (b == NULL) return;
  pthread_mutex_lock(&b->lock);
  b->stopping = true; /* and no more jobs: a done below may try */
  pthread_cond_signal(&b->wake);
  pthread_mutex_unlock(&b->lock);
  if (b->thread_started) pthread_join(b->thread, NULL);
  /* The thread is gone: the lists are the loop's. Built ones first, in order. */
  struct request_job *built = b->built.head, *todo = b->todo.head;
  list_init(&b->built);
  list_init(&b->todo);
  hand_back(built);
  hand_back(todo);
  if (b->built_ev != NULL) event_free(b->built_ev);
  if (b->efd >= 0) close(b->efd);
  pthread_cond_destroy(&b->wake);
  pthread_mutex_destroy(&b->lock);
  free(b);
}

struct request_job *request_builder_submit(struct request_builder *b,
                                           request_build_fn *build, const char *what,
                                           request_done_fn *done, void *owner) {
  struct request_job *j = calloc(1, sizeof *j);
  if (j == NULL || (j->what = strdup(what)) == NULL) {
    free(j);
    return NULL;
  }
  j->build = build;
  j->done = done;
  j->owner = owner;
  pthread_mutex_lock(&b->lock);
  bool stopping = b->stopping;
  if (!stopping) {
    list_push(&b->todo, j);
    pthread_cond_signal(&b->wake);
  }
  pthread_mutex_unlock(&b->lock);
  if (stopping) {
    job_free(j);
    return NULL;
  }
  return j;
}

void request_job_forget(struct request_job *job) {
  job->owner = NULL;
}
