/* libturn: the turn protocol v1 (events, history blocks, NDJSON framing, input
 * fields and the per-turn order rules) as a codec without I/O. Bytes go in and
 * validated events come out; events go in and bytes come out. No sockets, files,
 * clocks, globals or threads: the caller owns every buffer and every loop.
 *
 * Ownership words used below: "borrows" (the caller keeps it; libturn keeps no
 * pointer after returning), "takes", "returns owned", "valid until X". */
#ifndef TURN_TURN_H
#define TURN_TURN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TURN_EXTERN __attribute__((visibility("default")))
#else
#define TURN_EXTERN
#endif

/* ------------------------------------------------------------------ errors */

/* One table makes the enum, the stable name (what vectors.json and every other
 * half compare) and the message. Values are never renumbered or reused; codes at
 * or below TURN_E_NOMEM are fatal: the object that returned one may only be freed. */
#define TURN_ERRORS(X)                                                        \
  X(OK, 0, "ok")                                                              \
  X(E_JSON, -10, "not valid JSON")                                            \
  X(E_VERSION, -11, "unsupported protocol version")                           \
  X(E_TYPE, -12, "unknown type")                                              \
  X(E_MISSING, -13, "required field is missing")                              \
  X(E_FIELD, -14, "field has the wrong JSON type")                            \
  X(E_VALUE, -15, "field value is outside its allowed set or range")          \
  X(E_UTF8, -16, "text is not valid UTF-8")                                   \
  X(E_NOT_OBJECT, -17, "not a JSON object")                                   \
  X(E_TOOBIG, -20, "longer than the limit")                                   \
  X(E_PARTIAL, -21, "input ended inside a line")                              \
  X(E_ORDER, -30, "event out of order")                                       \
  X(E_SEQ, -31, "seq is not the next number")                                 \
  X(E_UNKNOWN_ID, -32, "event refers to a tool call or approval not started") \
  X(E_DUPLICATE_ID, -33, "tool call or approval id used twice")               \
  X(E_MISMATCH, -34, "event contradicts an earlier event of the same call")   \
  X(E_UNFINISHED, -35, "turn ended with a tool call or approval still open")  \
  X(E_INCOMPLETE, -36, "stream ended before the turn's end")                  \
  X(E_INVALID, -40, "invalid argument")                                       \
  X(E_NOMEM, -900, "out of memory")

typedef enum turn_errcode {
#define TURN__ERR_ENUM(name, value, msg) TURN_##name = value,
  TURN_ERRORS(TURN__ERR_ENUM)
#undef TURN__ERR_ENUM
} turn_errcode;

/* Stable name of a code without the TURN_ prefix ("E_FIELD"), or "E_UNKNOWN". */
TURN_EXTERN const char *turn_errname(int code);
/* Human message of a code ("field has the wrong JSON type"). */
TURN_EXTERN const char *turn_strerror(int code);
/* True for codes after which the object may only be freed. */
TURN_EXTERN bool turn_is_fatal(int code);

/* Where a problem is. Holds no byte of the rejected input, so it is safe to log
 * or to show to anyone. */
typedef struct turn_error {
  int code;          /* a turn_errcode */
  const char *field; /* static string naming the field ("status", "input"), or NULL */
  size_t offset;     /* byte offset in the line where parsing stopped */
  uint64_t
      line; /* 1-based line number, set by the reader and the checker; 0 if unknown */
} turn_error;

/* Writes "line N: message (field \"f\", E_CODE)" or shorter forms into out[0..cap),
 * always NUL-terminated when cap > 0. Returns the length it wanted to write. */
TURN_EXTERN size_t turn_error_format(const turn_error *err, char *out, size_t cap);

/* ------------------------------------------------------- memory and bytes */

/* Every allocation of libturn goes through one of these; NULL means malloc. */
typedef struct turn_mem {
  void *(*malloc)(size_t len, void *user);
  void *(*realloc)(void *ptr, size_t len, void *user);
  void (*free)(void *ptr, void *user);
  void *user;
} turn_mem;

/* A length-delimited string; never assumed NUL-terminated. p may be NULL iff len == 0. */
typedef struct turn_str {
  const char *p;
  size_t len;
} turn_str;

#define TURN_STR(lit) ((turn_str){(lit), sizeof(lit) - 1})
TURN_EXTERN turn_str turn_str_c(const char *cstr); /* borrows cstr */
TURN_EXTERN bool turn_str_eq(turn_str a, turn_str b);

/* A growable byte buffer with a hard cap fixed at init: appending past cap fails
 * with TURN_E_TOOBIG and leaves the buffer as it was.
 * Invariants: len <= alloc <= cap; data == NULL iff alloc == 0. */
typedef struct turn_buf {
  char *data;
  size_t len;
  size_t alloc;
  size_t cap;
  const turn_mem *mem;
} turn_buf;

TURN_EXTERN void turn_buf_init(turn_buf *b, size_t cap, const turn_mem *mem);
TURN_EXTERN void turn_buf_fini(turn_buf *b);
TURN_EXTERN void turn_buf_reset(turn_buf *b); /* len = 0, keeps the memory */
/* Returns TURN_OK, TURN_E_TOOBIG (past cap) or TURN_E_NOMEM; on error b is unchanged. */
TURN_EXTERN int turn_buf_append(turn_buf *b, const void *data, size_t len);
TURN_EXTERN int turn_buf_reserve(turn_buf *b, size_t extra);
/* Gives back the memory past len (all of it when len is 0), for a buffer that
 * is done growing. Returns TURN_OK, or TURN_E_NOMEM leaving b as it was. */
TURN_EXTERN int turn_buf_shrink(turn_buf *b);
/* Appends s[0..len) to b as a JSON string, quotes included, escaped as the
 * encoder escapes an event's strings: NUL and invalid UTF-8 become U+FFFD, so
 * the result is always valid JSON in UTF-8. Returns TURN_OK, TURN_E_TOOBIG or
 * TURN_E_NOMEM; on error b may hold part of the string (roll back to the
 * length saved before). */
TURN_EXTERN int turn_buf_append_json_string(turn_buf *b, const char *s, size_t len);

/* Room for one more item in an array of the C library's heap (realloc, free)
 * holding n items of size bytes in *cap slots: when n == *cap, the slots
 * double (first: the count to start with) and *cap says so. Returns the array,
 * perhaps moved, or NULL when out of memory (items and *cap are as they
 * were). */
TURN_EXTERN void *turn_grow(void *items, size_t n, size_t *cap, size_t size,
                            size_t first);

/* A bump allocator for one parse. Everything a parse returns lives in it until
 * turn_arena_reset(), which keeps one block for the next parse. */
typedef struct turn_arena {
  struct turn__arena_block *head; /* newest block first */
  const turn_mem *mem;
  size_t block_len; /* size of a normal block */
} turn_arena;

TURN_EXTERN void turn_arena_init(turn_arena *a, const turn_mem *mem);
TURN_EXTERN void turn_arena_reset(turn_arena *a);
TURN_EXTERN void turn_arena_fini(turn_arena *a);
/* Returns owned-by-arena memory aligned for any scalar, or NULL when out of memory. */
TURN_EXTERN void *turn_arena_alloc(turn_arena *a, size_t len);

/* ------------------------------------------------------------ field values */

typedef enum turn_event_type {
  TURN_EV_TURN,
  TURN_EV_TEXT,
  TURN_EV_REASONING,
  TURN_EV_TOOL_USE,
  TURN_EV_TOOL_INPUT,
  TURN_EV_TOOL_PROGRESS,
  TURN_EV_TOOL_RESULT,
  TURN_EV_APPROVAL,
  TURN_EV_APPROVAL_DECIDED,
  TURN_EV_WIDGET,
  TURN_EV_THROTTLED,
  TURN_EV_NOTICE,
  TURN_EV_GUARD,
  TURN_EV_END,
  TURN_EV_ERROR,
  TURN_EV__COUNT
} turn_event_type;

/* tool_result.status; the history's tool block also allows null. */
typedef enum turn_status {
  TURN_STATUS_NULL, /* only in history blocks */
  TURN_STATUS_OK,
  TURN_STATUS_ERROR,
  TURN_STATUS_REJECTED,
  TURN_STATUS__COUNT
} turn_status;

/* How a tier-2 call got through, or why it did not; null for every other call. */
typedef enum turn_approval {
  TURN_APPROVAL_NULL,
  TURN_APPROVAL_APPROVED,
  TURN_APPROVAL_REJECTED,
  TURN_APPROVAL_TIMEOUT,
  TURN_APPROVAL_EXEMPT,
  TURN_APPROVAL_LOCKED,
  TURN_APPROVAL__COUNT
} turn_approval;

typedef enum turn_stop_reason {
  TURN_STOP_END_TURN,
  TURN_STOP_LIMIT_TURNS,
  TURN_STOP_LIMIT_TOTAL_TOKENS,
  TURN_STOP_MAX_TOKENS,
  TURN_STOP_CANCELLED,
  TURN_STOP_INTERRUPT,
  TURN_STOP_ERROR,
  TURN_STOP_BUSY,
  TURN_STOP_LOCKED,
  TURN_STOP__COUNT
} turn_stop_reason;

typedef enum turn_decision {
  TURN_DECISION_APPROVED,
  TURN_DECISION_REJECTED,
  TURN_DECISION_TIMEOUT,
  TURN_DECISION__COUNT
} turn_decision;

#define TURN_TIER_NULL (-1) /* tier is 0, 1, 2 or this */

/* Wire names of the enumerations ("tool_use", "rejected", "end_turn"), or NULL
 * for a value out of range. Parsing the names back: turn_*_from_name, which
 * return -1 for an unknown name. */
TURN_EXTERN const char *turn_event_type_name(turn_event_type t);
TURN_EXTERN const char *turn_status_name(turn_status s);     /* NULL for _NULL */
TURN_EXTERN const char *turn_approval_name(turn_approval a); /* NULL for _NULL */
TURN_EXTERN const char *turn_stop_reason_name(turn_stop_reason r);
TURN_EXTERN const char *turn_decision_name(turn_decision d);
TURN_EXTERN int turn_event_type_from_name(turn_str name);
TURN_EXTERN int turn_stop_reason_from_name(turn_str name);

/* ------------------------------------------------------------ input fields */

#define TURN_INPUT_LIMIT 8192 /* bytes of compact JSON, and characters of a preview */

/* A tool input on the wire, in one of two forms:
 *   truncated == false: json is the input object's JSON text, preview is empty;
 *   truncated == true:  json is empty (the wire has "input":null), preview holds
 *                       the first TURN_INPUT_LIMIT code points of the compact JSON. */
typedef struct turn_input {
  turn_str json;
  turn_str preview;
  bool truncated;
} turn_input;

/* Builds the input field of a tool input given as JSON text (borrows json[0..len)).
 * The text must be one JSON object; it is made compact (no whitespace outside
 * strings, strings in the encoder's canonical escaping, numbers as written). If
 * the compact text is at most TURN_INPUT_LIMIT bytes it is the input, otherwise
 * its first TURN_INPUT_LIMIT code points are the preview. Strings in *out live in
 * arena. Returns TURN_OK, TURN_E_JSON / TURN_E_UTF8 / TURN_E_NOT_OBJECT for bad
 * text (err says where), TURN_E_VALUE for an object nested too deeply to travel
 * inside a line or history document (over 2045 levels), or TURN_E_NOMEM; on error
 * *out is unchanged. */
TURN_EXTERN int turn_input_from_json(turn_input *out, turn_arena *arena, const char *json,
                                     size_t len, turn_error *err);

/* ------------------------------------------------------------------ events */

/* One event. Which member of the union is set follows from type. Strings point
 * into the arena of the parse that made the event (or wherever the producer
 * keeps them when it builds an event to encode). */
typedef struct turn_event {
  turn_event_type type;
  uint64_t seq;
  union {
    struct {
      turn_str turn, session;
    } turn;
    struct {
      turn_str delta;
    } text; /* TURN_EV_TEXT and TURN_EV_REASONING */
    struct {
      turn_str id, tool;
      int tier;
    } tool_use;
    struct {
      turn_str id, tool;
      turn_input input;
    } tool_input;
    struct {
      turn_str id, tool, message;
    } tool_progress;
    struct {
      turn_str id, tool, summary;
      turn_status status; /* never TURN_STATUS_NULL in an event */
      turn_approval approval;
    } tool_result;
    struct {
      turn_str request, tool, effect;
      int tier;
      turn_input input;
      bool has_expires_at; /* false: "expires_at":null */
      double expires_at_s; /* Unix seconds */
    } approval;
    struct {
      turn_str request;
      turn_decision decision;
    } approval_decided;
    struct {
      turn_str id, title, html;
    } widget;
    struct {
      double delay_seconds;
    } throttled;
    struct {
      turn_str text;
    } notice;
    struct {
      turn_str action;  /* what the guard did: "refused", "step_up", "passed", ... */
      turn_str request; /* the approval a step-up belongs to; empty when none */
      turn_str message; /* a line for the owner; empty when none */
    } guard;
    struct {
      turn_stop_reason stop_reason;
    } end;
    struct {
      turn_str message;
    } error;
  };
} turn_event;

/* Parses one line (without its newline; borrows line[0..len)) into *ev: the whole
 * line must be one JSON object of the protocol. Unknown fields are ignored. Strings
 * in *ev live in arena until turn_arena_reset(arena). Returns TURN_OK or a code with
 * *err filled (err may be NULL); on error *ev is unchanged. TURN_E_NOMEM is the only
 * code that is about libturn rather than the line. */
TURN_EXTERN int turn_event_parse(turn_event *ev, turn_arena *arena, const char *line,
                                 size_t len, turn_error *err);

/* Appends the event as one compact JSON line, without a newline, to out: "v",
 * "seq", "type", then the event's fields in the spec's order. Strings are escaped;
 * NUL bytes and invalid UTF-8 in them become U+FFFD, so the output is always valid
 * and always parses again. Returns TURN_OK, TURN_E_INVALID (anything the parser
 * would refuse: an enumeration out of range, a tier outside 0-2/null, a negative or
 * non-finite number, an empty id, an input that is not one JSON object or is nested
 * too deeply, a preview over TURN_INPUT_LIMIT code points), TURN_E_TOOBIG (past
 * out's cap) or TURN_E_NOMEM; on error out is unchanged. */
TURN_EXTERN int turn_event_encode(const turn_event *ev, turn_buf *out);

/* ----------------------------------------------------------- NDJSON reader */

/* Called once per complete line, in order: ev is the parsed event and err NULL, or
 * ev NULL and err says what was wrong with that line (err->line is set). Both are
 * valid only during the call. A nonzero return stops the feed, which returns it. */
typedef int (*turn_event_cb)(void *ctx, const turn_event *ev, const turn_error *err);

typedef struct turn_reader turn_reader;

#define TURN_READER_DEFAULT_MAX_LINE (1u << 20)

/* Returns owned (free with turn_reader_free), or NULL when out of memory or when
 * max_line is 0 or SIZE_MAX. A line
 * longer than max_line bytes (without its newline) is reported as TURN_E_TOOBIG as
 * soon as it passes the limit, and the rest of it is skipped without buffering. */
TURN_EXTERN turn_reader *turn_reader_new(size_t max_line, const turn_mem *mem);
TURN_EXTERN void turn_reader_free(turn_reader *r);
/* Feeds any chunk (borrows data[0..len)): one byte or many lines. A line ends at
 * "\n"; a "\r" before it is dropped. Empty lines are skipped. Returns TURN_OK, the
 * callback's nonzero return (the rest of the chunk is then dropped: a caller that
 * stops a stream does not resume it), or TURN_E_NOMEM, which is sticky. */
TURN_EXTERN int turn_reader_feed(turn_reader *r, const char *data, size_t len,
                                 turn_event_cb cb, void *ctx);
/* End of input: a partial last line is reported as TURN_E_PARTIAL. */
TURN_EXTERN int turn_reader_finish(turn_reader *r, turn_event_cb cb, void *ctx);
/* Lines seen so far; during a callback, the number of the line being delivered. */
TURN_EXTERN uint64_t turn_reader_line(const turn_reader *r);

/* ----------------------------------------------------------- order checker */

/* A whole turn's rules: turn first with seq 0, seq without gaps, end last, each
 * tool call's tool_use -> tool_input -> [approval -> approval_decided] ->
 * tool_progress* -> tool_result (or tool_use -> tool_result, not "ok", for a
 * call whose input never came whole), every call ended before the turn's end,
 * widgets before their render_ui call's result, error followed by end. One
 * checker follows one turn; after the end it accepts only the turn event of the
 * next turn (a log of turns). */
typedef struct turn_order turn_order;

TURN_EXTERN turn_order *turn_order_new(const turn_mem *mem); /* NULL: out of memory */
TURN_EXTERN void turn_order_free(turn_order *o);
/* Checks the next event (borrows ev; copies what it keeps). Returns TURN_OK or an
 * order code with *err filled (err may be NULL). A refused event changes nothing
 * but the seq count: inside a turn every event uses up its seq. Three codes mean
 * "reported, and applied", so that one bad line gives one report:
 *   TURN_E_SEQ        a gap; counting goes on from the event's seq;
 *   TURN_E_UNFINISHED an end with calls still open (any stop reason): the turn ends;
 *   TURN_E_ORDER      on a turn event inside a turn: the old turn is abandoned and
 *                     the new one starts (any other TURN_E_ORDER is a refusal).
 * TURN_E_INVALID: an enumeration, tier or status out of range (an event built in
 * C); it changes nothing, not even the seq count. TURN_E_NOMEM is fatal. */
TURN_EXTERN int turn_order_step(turn_order *o, const turn_event *ev, turn_error *err);
/* A line of the stream was lost or did not parse: the next event's seq is taken
 * as the count instead of being reported as a gap, and if the lost line may have
 * been a turn or end event, what follows is checked as the rest of that turn or
 * the start of the next, without a second report. */
TURN_EXTERN void turn_order_resync(turn_order *o);
/* The stream ended: TURN_E_INCOMPLETE when a turn began and has not ended, unless
 * its last line was lost (turn_order_resync): that line may have been the end, and
 * it was reported already. */
TURN_EXTERN int turn_order_finish(turn_order *o, turn_error *err);
/* True between a turn's turn event and its end. */
TURN_EXTERN bool turn_order_in_turn(const turn_order *o);

/* ---------------------------------------------------------- history blocks */

typedef enum turn_block_type {
  TURN_BLOCK_USER,
  TURN_BLOCK_ASSISTANT,
  TURN_BLOCK_REASONING,
  TURN_BLOCK_TOOL,
  TURN_BLOCK_WIDGET,
  TURN_BLOCK_NOTICE,
  TURN_BLOCK__COUNT
} turn_block_type;

TURN_EXTERN const char *turn_block_type_name(turn_block_type t);

/* One block of a session's history. at is an ISO 8601 time, empty for null. */
typedef struct turn_block {
  turn_block_type type;
  turn_str at;
  union {
    struct {
      turn_str text;
    } text; /* user, assistant, reasoning, notice */
    struct {
      turn_str id, tool, summary; /* summary may be empty for null */
      int tier;
      turn_input input;
      turn_status status;
      turn_approval approval;
      bool has_summary;     /* false: "summary":null */
      bool has_duration_ms; /* false: "duration_ms":null */
      int64_t duration_ms;
    } tool;
    struct {
      turn_str id, title, html;
    } widget;
  };
} turn_block;

/* Like turn_event_parse, for one block given as a JSON object. */
TURN_EXTERN int turn_block_parse(turn_block *b, turn_arena *arena, const char *json,
                                 size_t len, turn_error *err);
/* Like turn_event_encode: "type", the block's fields in the spec's order, then "at". */
TURN_EXTERN int turn_block_encode(const turn_block *b, turn_buf *out);

/* Called once per block of a history document, in order, with its 0-based index:
 * b is the parsed block and err NULL, or b NULL and err says what was wrong (its
 * offset counts from the start of the document). */
typedef int (*turn_block_cb)(void *ctx, size_t index, const turn_block *b,
                             const turn_error *err);

/* Checks a history document {"session": {...}, "blocks": [...]} (borrows doc):
 * the document must be a JSON object with those two members, "blocks" only once;
 * each block goes to cb as it is read (arena is reset after each, so the caller
 * must not keep anything else in it), so a problem with the document found later
 * (bad JSON further on, no "session") comes after the callbacks of the blocks before it.
 * Returns TURN_OK, a code for the document itself (err says where), the callback's
 * nonzero return, or TURN_E_NOMEM. Memory is bounded by one block, not the document. */
TURN_EXTERN int turn_history_parse(const char *doc, size_t len, turn_arena *arena,
                                   turn_block_cb cb, void *ctx, turn_error *err);

/* True when s is an ISO 8601 date and time as the history's "at" uses it:
 * YYYY-MM-DDTHH:MM:SS[.fraction][Z|+HH:MM|-HH:MM], with every part in range
 * (year from 0001, seconds to 59, a fraction of 1 to 9 digits). */
TURN_EXTERN bool turn_iso8601_valid(turn_str s);

/* ---------------------------------------------------------------- text
 * UTF-8 and text made safe to show, for every program that handles text from
 * outside (a model, a tool, a provider). No I/O; nothing is allocated. */

/* Decodes the character at s[0..len): returns its length in bytes (1 to 4) and
 * puts its code point in *cp (cp may be NULL), or returns 0 when len is 0 or s
 * does not start with a whole, valid UTF-8 sequence (a continuation byte, an
 * overlong form, a surrogate, a code point past U+10FFFF, or a sequence that len
 * cuts short). The rules are JSON's and libturn's, so what this accepts a
 * parsed event may carry. Borrows s. */
TURN_EXTERN size_t turn_utf8_decode(const char *s, size_t len, uint32_t *cp);

/* Where to cut s[0..len) to keep at most max bytes without splitting a
 * character: len when len <= max, else max moved back over the (at most three)
 * bytes that continue a character begun before it. On valid UTF-8 the result
 * is the longest whole-character prefix of at most max bytes. Borrows s. */
TURN_EXTERN size_t turn_utf8_cut(const char *s, size_t len, size_t max);

/* What turn_safe_text does besides replacing control characters. */
enum turn_safe_flag {
  TURN_SAFE_KEEP_LINES = 1u << 0, /* newline and tab stay (text for a terminal) */
  TURN_SAFE_BIDI = 1u << 1,       /* also replace what can reorder or break a
                                     line of text: U+061C, U+200E, U+200F,
                                     U+2028, U+2029, U+202A..U+202E and
                                     U+2066..U+2069 */
  TURN_SAFE_FFFD = 1u << 2,       /* replace with U+FFFD instead of a space */
  TURN_SAFE_TRIM = 1u << 3        /* no leading or trailing spaces in the result */
};

/* Copies text[0..len) into out[0..cap), made safe to show in a log, a terminal
 * or a page: each control character (C0, DEL and C1: a newline could forge a
 * log line, an escape could drive a terminal) and each byte that does not
 * start a valid UTF-8 character (see turn_utf8_decode) becomes a space, or
 * U+FFFD with TURN_SAFE_FFFD; flags (TURN_SAFE_*, or 0) say what else. The copy
 * stops before the first character, or replacement, that would pass cap bytes,
 * so it never ends inside a character. Returns the bytes written (out is not
 * NUL-terminated) and, when used is not NULL, puts in *used the bytes of text
 * taken, so a caller can go on from there with a buffer of 4 bytes or more.
 * Borrows text and out. */
TURN_EXTERN size_t turn_safe_text(char *out, size_t cap, const char *text, size_t len,
                                  unsigned flags, size_t *used);

#ifdef __cplusplus
}
#endif
#endif /* TURN_TURN_H */
