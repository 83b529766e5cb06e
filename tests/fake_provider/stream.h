/* One streamed reply: whole server-sent events queued up front, each sent as its
 * own HTTP chunk after its delay, on a timer. A stream stops its timer the
 * moment the client goes away, so nothing is ever written to a freed request.
 * An event may carry its own send time, for latency probes (STREAM_SEND_NS). */
#ifndef FAKE_STREAM_H
#define FAKE_STREAM_H

#include <event2/event.h>
#include <event2/http.h>
#include <jansson.h>

struct stream;

/* The server's live streams. Streams are freed only by its reap event, at the
 * end of a loop pass, never inside a callback of their own (STYLE.md 4.7). */
struct streams {
  struct stream *head; /* every started stream not yet freed */
  struct event *reap;  /* owned; activated when a stream is done */
};

/* Returns 0, or -1 when out of memory. */
int streams_init(struct streams *all, struct event_base *base);
/* Frees every stream, before evhttp_free: a request still on its connection is
 * left for evhttp_free to free with it. Accepts a streams never initialised
 * (zeroed). */
void streams_fini(struct streams *all);

/* How the reply ends once every event is sent. */
enum stream_end {
  STREAM_END,   /* the terminating chunk: a whole reply */
  STREAM_STALL, /* nothing: the reply stays open until the client leaves */
  STREAM_CUT    /* once the last event left, the connection is closed */
};

/* Stands in an event for the moment the event is written to the socket: the first
 * one in each queued event is replaced then by CLOCK_MONOTONIC in nanoseconds, in
 * decimal, and the event is written out at once. No JSON escaping touches it, so
 * it survives json_dumps. */
#define STREAM_SEND_NS "{{send_ns}}"

/* A stream for req, which stays the caller's until stream_start. Returns NULL
 * when out of memory. */
struct stream *stream_new(struct event_base *base, struct evhttp_request *req);
/* Makes s keep its own pace: each delay counts from when the event before was
 * due, not from when it was sent, so a late pass of the loop delays one event
 * and not the rest, and streams started apart stay apart. Before stream_start. */
void stream_keep_pace(struct stream *s);
/* Frees a stream that was never started; req is untouched. Accepts NULL. */
void stream_discard(struct stream *s);
/* Queues one event, "event: NAME" (none when name is NULL) and "data: " the
 * compact JSON of data, sent delay_ms after the event before it (its first
 * STREAM_SEND_NS becomes the send time). Takes data (NULL: out of memory,
 * reported as such). Returns 0 or -1 (out of memory). */
int stream_event(struct stream *s, unsigned delay_ms, const char *name, json_t *data);
/* Queues "data: TEXT" as an event, for OpenAI's "[DONE]". Borrows text. */
int stream_data(struct stream *s, unsigned delay_ms, const char *text);
/* Sends the status and headers (200, text/event-stream) and the events. Takes
 * s and req: from here on, all belongs to the server, and s goes away by
 * itself. */
void stream_start(struct stream *s, struct streams *all, enum stream_end end);

#endif
