/* Documents built off the loop from a session's whole history: a model call's
 * request body (the conversation read from the store, checked by convo_repair
 * and written in the provider's form) and a client's GET of the session's
 * history. Both parse every stored message, which costs milliseconds per 50 KB
 * of history (see bench/request_build.c); done on the loop, that would stall
 * every other turn's stream for as long. So one builder thread does them, and
 * the loop only sends what it gets back.
 *
 * Jobs are built in the order they were handed over. The loop learns of
 * finished ones through an eventfd watched on its base. */
#ifndef TURND_REQUEST_BUILD_H
#define TURND_REQUEST_BUILD_H

struct event_base;
struct request_builder;
struct request_job;

/* Runs on the builder's thread: the body for what (a job's input, e.g. a
 * session id), owned (free()), or NULL when it cannot be built. cfg is what
 * request_builder_new was given; build may only read things nobody changes
 * while the builder runs, and what only the builder's thread uses. Each job
 * names its own. */
typedef char *request_build_fn(const void *cfg, const char *what);
/* Runs on the loop: job's body (owned, NULL when it could not be built). */
typedef void request_done_fn(void *owner, char *body);

/* Starts the thread. Returns NULL when it cannot (out of memory, no thread). */
struct request_builder *request_builder_new(struct event_base *base, const void *cfg);
/* Stops the thread (after the build under way) and frees every job: each not
 * forgotten goes to its owner first, with its body if it was built, else NULL,
 * so that nobody waits for it; call it while the owners can still take that.
 * Accepts NULL. */
void request_builder_free(struct request_builder *b);

/* Hands what (borrowed: copied) to the thread to build with build;
 * done(owner, body) follows on the loop. Returns the job, or NULL when out of
 * memory or the builder is stopping (done never comes). */
struct request_job *request_builder_submit(struct request_builder *b,
                                           request_build_fn *build, const char *what,
                                           request_done_fn *done, void *owner);
/* The owner is going: done will not be called for job, which the builder frees.
 * Loop only; job must not be used afterwards. */
void request_job_forget(struct request_job *job);

#endif
