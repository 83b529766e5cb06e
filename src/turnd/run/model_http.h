/* Model calls over HTTP: libcurl's multi interface driven by turnd's libevent
 * loop (no thread, no blocking call). A call posts a provider's request body and
 * streams the answer through the SSE parser and the provider's decoder
 * (agent/provider.h) to its owner as model events (agent/model.h).
 *
 * Failures become the call's last event, MODEL_EV_ERROR, with a message that
 * holds no key and no request bytes: the transfer's (connection refused, cut,
 * stalled), or the provider's own message (its answer to a status other than
 * 2xx, or an error event in the stream), in which every copy of the call's key
 * (of a key shorter than 8 bytes, a placeholder, every copy that stands as a word
 * of its own), and a piece of it cut off at the message's end, is "[key]", since
 * a server or a proxy may echo the key. A 429, 503 or 529 is throttled, with the wait its
 * retry-after header asks for (its seconds, or its HTTP-date less now) when it
 * has one, unless that is more than 5 minutes: then it is a plain failure whose
 * message says the wait. A throttle that comes after the reply began is a plain
 * failure too, since a retry would say it again. */
#ifndef TURND_MODEL_HTTP_H
#define TURND_MODEL_HTTP_H

#include "agent/model.h"
#include "agent/provider.h"

#include <stdint.h>

struct event_base;
struct model_http;
struct model_call;

/* One per daemon. Returns NULL when libcurl cannot be set up. */
struct model_http *model_http_new(struct event_base *base);
/* Aborts every call (their owners are not called) and frees. Accepts NULL. */
void model_http_free(struct model_http *mh);

struct model_call_spec {
  enum provider_kind kind;
  const char *url;          /* the endpoint */
  const char *api_key;      /* NULL or "": no key is sent (a local server); any
                               length (a bearer JWT runs to kilobytes) */
  const char *body;         /* the request body (provider_*_body) */
  uint32_t reply_timeout_s; /* no reply begun this long after the request: fails */
  uint32_t stall_timeout_s; /* once the reply began, silent this long: fails */
};

/* Every model event of the call, in order; the last is MODEL_EV_STOP or
 * MODEL_EV_ERROR, and the owner forgets the call when cb returns from it (the
 * call itself may live on for a second, reading its answer's end). */
typedef void model_call_cb(void *ctx, const struct model_event *ev);

/* Starts a call (copies spec's strings). Returns it, or NULL when it could not
 * start (out of memory): then cb is never called. */
struct model_call *model_call_start(struct model_http *mh,
                                    const struct model_call_spec *spec, model_call_cb *cb,
                                    void *ctx);
/* The owner is going: cb is not called again, and the transfer is torn down at
 * once (from inside any call's cb: as soon as libcurl returns to turnd's loop).
 * Not after the last event. */
void model_call_abort(struct model_call *c);

#endif
