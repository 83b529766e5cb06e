/* The conversation of a session in the model's own message format, the form the
 * store keeps and a provider is sent: a user message per user text, an assistant
 * message per model reply (thinking, text and tool_use blocks in the order they
 * came), and a user message with the tool_result blocks of that reply's calls:
 *   {"role":"user","content":[{"type":"text","text":"..."}]}
 *   {"role":"assistant","content":[{"type":"thinking","thinking":"..."},
 *     {"type":"text","text":"..."},{"type":"tool_use","id":"u1","name":"clock",
 *     "input":{}}]}
 *   {"role":"user","content":[{"type":"tool_result","tool_use_id":"u1",
 *     "content":"summary","is_error":false}]}
 * Built piece by piece as the turn goes; each finished message waits in a small
 * queue until the shell takes it. No I/O. */
#ifndef TURND_AGENT_CONVO_H
#define TURND_AGENT_CONVO_H

#include "turn/turn.h"

#include <stdbool.h>
#include <stdint.h>

#define CONVO_QUEUE                                          \
  4 /* finished messages not yet taken; the shell takes them \
       after every agent step, and one step finishes at most two */

struct convo_message {
  char *json;     /* compact JSON, owned by whoever took it (free()); with parts,
                     the rest of it after them */
  uint64_t at_ms; /* when its first piece came */
  uint64_t parts; /* the pieces of its front taken before (convo_front_taken) */
};

enum convo_open { CONVO_NONE, CONVO_ASSISTANT, CONVO_RESULTS };
enum convo_block { CONVO_BLOCK_NONE, CONVO_BLOCK_TEXT, CONVO_BLOCK_THINKING };

struct convo {
  enum convo_open open;   /* the message being built */
  turn_buf msg;           /* its JSON text so far: the head and each block, without
                             the closing "]}"; a growing text block's string is
                             closed after each delta (and its object is not) */
  size_t n_blocks;        /* blocks in msg */
  uint64_t parts;         /* pieces of its front taken before (msg holds the rest) */
  uint64_t open_at_ms;    /* when its first piece came */
  enum convo_block block; /* the text block still growing, if any */
  bool block_begun;       /* ... and it has text, so it is in msg */
  char partial[4];        /* its last delta's cut character, waiting for the rest:
                             at most 3 bytes held, 4 once the next delta ends it */
  size_t n_partial;
  char *signature; /* a thinking block's signature so far (owned), or NULL */
  struct convo_message queue[CONVO_QUEUE];
  size_t n_queued;
  bool lost; /* out of memory: a message could not be kept */
  /* convo_recover only: the calls whose input came and whose result has not, in
   * order (ids, each NUL-ended). Calls run one at a time in that order, so the
   * first is the one running or next to run; started says it had begun, asked
   * that its approval was asked (and not yet answered). */
  turn_buf unanswered;
  bool started;
  bool asked;
  turn_buf tiers; /* each call's tier (one digit) then its id, NUL-ended */
};

void convo_init(struct convo *c);
void convo_fini(struct convo *c); /* frees queued messages too */

/* Each piece borrows its arguments. A piece of another kind than the open
 * message finishes that message first. */
void convo_user_text(struct convo *c, const char *text, uint64_t now_ms);
void convo_text(struct convo *c, turn_str delta, uint64_t now_ms);
void convo_thinking(struct convo *c, turn_str delta, uint64_t now_ms);
/* A piece of the growing thinking block's signature (ignored without one). */
void convo_signature(struct convo *c, turn_str signature);
/* input_json: the call's whole input, an object as JSON text. */
void convo_tool_use(struct convo *c, const char *id, const char *name,
                    const char *input_json, uint64_t now_ms);
void convo_tool_result(struct convo *c, const char *id, turn_str summary, bool is_error,
                       uint64_t now_ms);
/* The reply or the batch of results is complete (or the turn stops here). */
void convo_finish(struct convo *c);

/* Takes the oldest finished message into *out (the caller frees out->json).
 * Returns false when none waits. */
bool convo_take(struct convo *c, struct convo_message *out);

/* The front of the open message's JSON that no later piece changes (empty when
 * there is none), borrowed until the next call: a shell hands a long reply on
 * piece by piece as it grows, instead of holding it and then storing it whole. */
turn_str convo_front(const struct convo *c);
/* The front was taken: it leaves the message, whose `parts` counts it. */
void convo_front_taken(struct convo *c);

/* Takes a finished message: m->json is the callback's, to free, whatever it
 * returns. Non-zero stops the feed. */
typedef int convo_message_cb(void *ctx, struct convo_message *m);

/* Rebuilds what a turn cut off by a crash had not yet made messages (the reply
 * being streamed, the results of a batch of calls still running) from the
 * events it recorded (convo_recover.c). Feed each chunk of the turn's events in
 * seq order (NDJSON lines; lines that do not parse are skipped): text and
 * reasoning, each call whose input was complete and each result (its summary:
 * the tool's full result was not recorded) go into c as the agent put them, and
 * cb gets every message finished, at_ms its time; convo_recover_finish then
 * ends the last. The first message cb gets is the turn's first reply: the
 * user's text is in no event. arena is scratch space for parsing. Returns 0, or
 * -1 when out of memory or cb stopped it. */
int convo_recover(struct convo *c, turn_arena *arena, const char *lines, size_t len,
                  uint64_t at_ms, convo_message_cb *cb, void *ctx);
/* Ends a rebuild once every chunk is fed, in place of convo_finish: the call
 * that had begun and has no result gets one, at at_ms, that says it was stopped
 * and may have run in part. Told "not run" (convo_repair's words for a call
 * without a result), a model could make it again, and repeat what it had done.
 * A call had begun when it reported progress or its approval was granted, or
 * when it is the first without a result of a reply that was complete (its calls
 * then run one by one), needs no approval (tier 0 or 1) and none was asked: a
 * quiet tool runs without an event. reply_kept: the store has the reply still
 * open in c (the agent stores a reply once complete); a reply the results began
 * after was. */
void convo_recover_finish(struct convo *c, uint64_t at_ms, bool reply_kept);

/* Makes a session's stored messages (JSON as above, each malloc'd and owned by
 * the array, itself malloc'd) a conversation a provider takes, however its
 * turns ended (convo_repair.c): a tool call without a result gets an error
 * result, and neighbouring messages of one role become one. Replaces *messages
 * and *n. Returns 0, or -1 (out of memory, or a message that is not one of
 * these) leaving both as they were. */
int convo_repair(char ***messages, size_t *n);

#endif
