/* Model requests built off the loop. A request carries the session's whole
 * conversation: reading it from the store, checking it (convo_repair) and
 * turning it into a provider's body parses and writes every message, which costs
 * milliseconds per 50 KB of history (see bench/request_build.c). Done on the
 * loop, that would stall every other turn's stream for as long; so one builder
 * thread does it, and the loop only starts the call with the body.
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
 * while the builder runs, and what only the builder's thread uses. */
typedef char *request_build_fn(const void *cfg, const char *what);
/* Runs on the loop: job's body (owned, NULL when it could not be built). */
typedef void request_done_fn(void *owner, char *body);

/* Starts the thread. Returns NULL when it cannot (out of memory, no thread). */
struct request_builder *request_builder_new(struct event_base *base,
                                            request_build_fn *build, const void *cfg);
/* Stops the thread and frees the jobs left, whose owners are not told: every
 * owner forgets its job first. Accepts NULL. */
void request_builder_free(struct request_builder *b);

/* Hands what (borrowed: copied) to the thread; done(owner, body) follows on the
 * loop. Returns the job, or NULL when out of memory (done never comes). */
struct request_job *request_builder_submit(struct request_builder *b, const char *what,
                                           request_done_fn *done, void *owner);
/* The owner is going: done will not be called for job, which the builder frees.
 * Loop only; job must not be used afterwards. */
void request_job_forget(struct request_job *job);

#endif
