/* The request builder (src/turnd/request_build.c): jobs built on its thread in
 * the order handed over, each handed back on the loop to its owner unless the
 * owner forgot it, and at the latest when the builder stops; every input and
 * body is freed once (the suite runs under ASan too). */
#include "turnd/request_build.h"

#include <event2/event.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the build sees: it answers "built:" and the input ("!" fails: NULL). A
 * gate lets a test hold every build until it opens, and a second one holds the
 * build of "hold" alone: while it waits, every job before it has been built and
 * handed over to the loop's side. */
struct build_cfg {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  int started;    /* builds begun */
  int built;      /* builds finished */
  bool open;      /* builds may run */
  bool hold_open; /* the build of "hold" may run */
};

static char *echo_build(const void *arg, const char *what) {
  struct build_cfg *cfg = (struct build_cfg *)arg;
  pthread_mutex_lock(&cfg->lock);
  cfg->started++;
  pthread_cond_broadcast(&cfg->changed);
  while (!cfg->open || (strcmp(what, "hold") == 0 && !cfg->hold_open))
    pthread_cond_wait(&cfg->changed, &cfg->lock);
  pthread_mutex_unlock(&cfg->lock);
  char *body = NULL;
  if (strcmp(what, "!") != 0) {
    size_t len = strlen(what);
    if ((body = malloc(len + 7)) != NULL) {
      memcpy(body, "built:", 6);
      memcpy(body + 6, what, len + 1);
    }
  }
  pthread_mutex_lock(&cfg->lock);
  cfg->built++;
  pthread_cond_broadcast(&cfg->changed);
  pthread_mutex_unlock(&cfg->lock);
  return body;
}

static void cfg_init(struct build_cfg *cfg, bool open) {
  memset(cfg, 0, sizeof *cfg);
  pthread_mutex_init(&cfg->lock, NULL);
  pthread_cond_init(&cfg->changed, NULL);
  cfg->open = open;
}

static void cfg_fini(struct build_cfg *cfg) {
  pthread_cond_destroy(&cfg->changed);
  pthread_mutex_destroy(&cfg->lock);
}

static void cfg_open(struct build_cfg *cfg) {
  pthread_mutex_lock(&cfg->lock);
  cfg->open = true;
  pthread_cond_broadcast(&cfg->changed);
  pthread_mutex_unlock(&cfg->lock);
}

/* Blocks until *counter (a field of cfg) reaches count. */
static void cfg_await_count(struct build_cfg *cfg, const int *counter, int count) {
  pthread_mutex_lock(&cfg->lock);
  while (*counter < count)
    pthread_cond_wait(&cfg->changed, &cfg->lock);
  pthread_mutex_unlock(&cfg->lock);
}

/* Blocks until count builds have finished. */
static void cfg_await(struct build_cfg *cfg, int count) {
  cfg_await_count(cfg, &cfg->built, count);
}

static void cfg_release_hold(struct build_cfg *cfg) {
  pthread_mutex_lock(&cfg->lock);
  cfg->hold_open = true;
  pthread_cond_broadcast(&cfg->changed);
  pthread_mutex_unlock(&cfg->lock);
}

/* A builder on a loop of its own, over a build_cfg. */
/* A job's owner: what it was handed back, and what to do then. */
struct owner {
  int calls;
  char *body;                /* owned once handed back */
  bool got_null;             /* handed back NULL */
  struct request_job *other; /* forgotten from within the call, when set */
  int *order;                /* where the call's place goes */
  int *next_place;
};

struct rig {
  struct event_base *base;
  struct build_cfg cfg;
  struct request_builder *b;
  /* The jobs' owners and where each came back: here rather than on a test's
   * stack, as a failed test's jobs come back in the teardown. */
  struct owner o[4];
  int order[4];
  int place;
};

/* Each test's rig: the builder with every build held until the test opens the
 * gate. The teardown opens both gates first, so that a test that failed half
 * way still lets the thread finish and be joined. */
static int rig_setup(void **state) {
  struct rig *r = calloc(1, sizeof *r);
  if (r == NULL || (r->base = event_base_new()) == NULL) return -1;
  cfg_init(&r->cfg, false);
  r->b = request_builder_new(r->base, &r->cfg);
  *state = r;
  return r->b != NULL ? 0 : -1;
}

static int rig_teardown(void **state) {
  struct rig *r = *state;
  cfg_open(&r->cfg);
  cfg_release_hold(&r->cfg);
  request_builder_free(r->b);
  for (int i = 0; i < 4; i++)
    free(r->o[i].body);
  cfg_fini(&r->cfg);
  event_base_free(r->base);
  free(r);
  return 0;
}

static void on_done(void *arg, char *body) {
  struct owner *o = arg;
  o->calls++;
  o->body = body;
  o->got_null = body == NULL;
  if (o->order != NULL) *o->order = (*o->next_place)++;
  if (o->other != NULL) request_job_forget(o->other);
}

/* Runs the loop until calls owners have been handed back their job in total. */
static void loop_until(struct event_base *base, struct owner *owners, size_t n,
                       int calls) {
  for (;;) {
    int total = 0;
    for (size_t i = 0; i < n; i++)
      total += owners[i].calls;
    if (total >= calls) return;
    assert_int_equal(event_base_loop(base, EVLOOP_ONCE), 0);
  }
}

static void test_jobs_come_back_in_order_unless_forgotten(void **state) {
  struct rig *r = *state;
  struct owner *o = r->o;
  int *order = r->order;
  for (int i = 0; i < 3; i++) {
    order[i] = -1;
    o[i].order = &order[i];
    o[i].next_place = &r->place;
  }
  char input[16] = "s1"; /* copied: changing it after does not reach the build */
  assert_non_null(request_builder_submit(r->b, echo_build, input, on_done, &o[0]));
  input[1] = '9';
  struct request_job *second =
      request_builder_submit(r->b, echo_build, "s2", on_done, &o[1]);
  assert_non_null(second);
  assert_non_null(request_builder_submit(r->b, echo_build, "!", on_done, &o[2]));
  request_job_forget(second); /* before it was even built */
  cfg_open(&r->cfg);
  loop_until(r->base, o, 3, 2);
  cfg_await(&r->cfg, 3);
  /* the forgotten one may only have been built, never handed back */
  event_base_loop(r->base, EVLOOP_NONBLOCK);
  assert_int_equal(o[0].calls, 1);
  assert_string_equal(o[0].body, "built:s1");
  assert_int_equal(o[1].calls, 0);
  assert_int_equal(o[2].calls, 1);
  assert_true(o[2].got_null); /* a build that fails says so */
  assert_true(order[0] < order[2]);
}

/* An owner handed back its body may forget a job built in the same batch (one
 * run ending frees another): that job is not handed back. */
static void test_a_job_forgotten_by_another_owner_is_not_handed_back(void **state) {
  struct rig *r = *state;
  cfg_open(&r->cfg);
  struct owner *o = r->o;
  assert_non_null(request_builder_submit(r->b, echo_build, "x", on_done, &o[0]));
  o[0].other = request_builder_submit(r->b, echo_build, "y", on_done, &o[1]);
  assert_non_null(o[0].other);
  assert_non_null(request_builder_submit(r->b, echo_build, "hold", on_done, &o[2]));
  /* "hold" has begun: x and y are built and wait for the loop, one batch */
  cfg_await_count(&r->cfg, &r->cfg.started, 3);
  loop_until(r->base, o, 3, 1);
  event_base_loop(r->base, EVLOOP_NONBLOCK);
  assert_int_equal(o[0].calls, 1);
  assert_string_equal(o[0].body, "built:x");
  assert_int_equal(o[1].calls, 0);
  assert_int_equal(o[2].calls, 0);
  cfg_release_hold(&r->cfg);
  request_builder_free(r->b); /* stopping hands "hold" back, built */
  r->b = NULL;
  assert_int_equal(o[2].calls, 1);
  assert_string_equal(o[2].body, "built:hold");
}

/* Stopping hands every job not forgotten back at once, whatever it is at: the
 * built ones with their body, the one being built once it is, the waiting ones
 * with NULL (or built, if the thread took them first); no owner waits for ever. */
static void test_stopping_hands_every_job_back(void **state) {
  struct rig *r = *state;
  cfg_open(&r->cfg);
  struct owner *o = r->o;
  assert_non_null(request_builder_submit(r->b, echo_build, "a", on_done, &o[0]));
  assert_non_null(request_builder_submit(r->b, echo_build, "hold", on_done, &o[1]));
  assert_non_null(request_builder_submit(r->b, echo_build, "c", on_done, &o[2]));
  struct request_job *gone =
      request_builder_submit(r->b, echo_build, "d", on_done, &o[3]);
  assert_non_null(gone);
  request_job_forget(gone);
  cfg_await_count(&r->cfg, &r->cfg.started, 2); /* a built; "hold" begun; c waits */
  cfg_release_hold(&r->cfg);
  request_builder_free(r->b);
  r->b = NULL; /* the teardown would free it again */
  for (int i = 0; i < 3; i++)
    assert_int_equal(o[i].calls, 1);
  assert_int_equal(o[3].calls, 0);
  assert_string_equal(o[0].body, "built:a");
  assert_string_equal(o[1].body, "built:hold");
  assert_true(o[2].got_null || strcmp(o[2].body, "built:c") == 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_jobs_come_back_in_order_unless_forgotten,
                                      rig_setup, rig_teardown),
      cmocka_unit_test_setup_teardown(
          test_a_job_forgotten_by_another_owner_is_not_handed_back, rig_setup,
          rig_teardown),
      cmocka_unit_test_setup_teardown(test_stopping_hands_every_job_back, rig_setup,
                                      rig_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
