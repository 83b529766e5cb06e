/* The tool calls a turn left open, read from its recorded events, and the
 * events that close them. A turn a crash cut off is ended at the next start as
 * a live turn's end would have ended it (docs/protocol.md, "How turnd closes
 * the calls a turn cuts short"): each call it started gets its tool_result, an
 * approval that waits its approval_decided first, so that readers and the
 * history show no call running for ever. No I/O. */
#ifndef TURND_AGENT_CALL_CLOSE_H
#define TURND_AGENT_CALL_CLOSE_H

#include "turn/turn.h"

#include <stdbool.h>
#include <stddef.h>

/* A call that began (tool_use) and has no result. Strings owned. */
struct call_close_call {
  char *id, *tool;
  char *request;          /* the approval asked for it, or NULL */
  int tier;               /* from tool_use */
  size_t input_n;         /* when its input came, counting from 1 (0: not yet) */
  bool decided;           /* approval_decided came, or the close decided it */
  turn_decision decision; /* ... with this */
  bool cut_waiting;       /* the close decided it: it waited for the owner */
  bool begun;             /* it reported progress, showed its widget or was
                             approved (an approved call runs at once) */
};

struct call_close {
  struct call_close_call *calls; /* the open calls in tool_use order: the order
                                    the agent runs them in */
  size_t n, cap;
  size_t inputs; /* inputs completed so far, for input_n */
  size_t next;   /* call_close_next: calls[next] is closed next */
};

void call_close_init(struct call_close *cc);
void call_close_fini(struct call_close *cc);

/* Feeds one chunk of the turn's recorded events (NDJSON lines, in seq order;
 * lines that do not parse are skipped). arena is scratch space for parsing.
 * Returns 0, or -1 when out of memory. */
int call_close_feed(struct call_close *cc, turn_arena *arena, const char *lines,
                    size_t len);

/* The next event that closes an open call into *ev (its seq is the caller's to
 * set; its strings live in arena until it is reset), oldest call first: the
 * approval that waits is decided ("rejected": nothing approves on its own),
 * then the call's result, which says why it did not run, or that it was
 * stopped while it ran. why: what ended the turn ("turnd stopped").
 * reply_complete: the reply that made the calls had ended, so its first open
 * call may have begun without a word (a quiet tool needing no approval); it is
 * then said stopped, and may have run in part. Returns false when no call is
 * left open (or out of memory). */
bool call_close_next(struct call_close *cc, const char *why, bool reply_complete,
                     turn_arena *arena, turn_event *ev);

#endif
