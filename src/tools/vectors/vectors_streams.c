/* The "streams" section: whole turns fed through turn_reader and turn_order,
 * valid ones and invalid ones with the first error and the line it is on. The
 * expected verdict is written by hand and checked against the C checker. */
#include "vectors.h"

#include "spec_example.h"

#include <stdint.h>
#include <string.h>

static json_t *valid_streams, *invalid_streams;

struct verdict {
  turn_order *order;
  turn_reader *reader;
  int code;      /* first problem */
  uint64_t line; /* its line */
};

static int on_event(void *ctx, const turn_event *ev, const turn_error *err) {
  struct verdict *v = ctx;
  int code = TURN_OK;
  turn_error order_err;
  if (err != NULL)
    code = err->code;
  else
    code = turn_order_step(v->order, ev, &order_err);
  if (code != TURN_OK && v->code == TURN_OK) {
    v->code = code;
    v->line = turn_reader_line(v->reader);
  }
  return 0;
}

static struct verdict judge(const char *const *lines, size_t n) {
  struct verdict v = {turn_order_new(NULL), turn_reader_new(1 << 20, NULL), TURN_OK, 0};
  if (v.order == NULL || v.reader == NULL) vectors_die("out of memory");
  for (size_t i = 0; i < n; i++) {
    turn_reader_feed(v.reader, lines[i], strlen(lines[i]), on_event, &v);
    turn_reader_feed(v.reader, "\n", 1, on_event, &v);
  }
  turn_reader_finish(v.reader, on_event, &v);
  turn_error err;
  int rv = turn_order_finish(v.order, &err);
  if (rv != TURN_OK && v.code == TURN_OK) {
    v.code = rv;
    v.line = n;
  }
  turn_order_free(v.order);
  turn_reader_free(v.reader);
  return v;
}

static void add_stream(const char *name, const char *const *lines, size_t n, int code,
                       uint64_t line) {
  struct verdict v = judge(lines, n);
  vectors_check(v.code == code && v.line == line, "stream verdict differs", name);
  json_t *entry = json_object();
  json_object_set_new(entry, "name", json_string(name));
  json_t *arr = json_array();
  for (size_t i = 0; i < n; i++) {
    json_t *text = json_string(lines[i]);
    if (text == NULL) vectors_die("a stream line is not valid UTF-8");
    json_array_append_new(arr, text);
  }
  json_object_set_new(entry, "lines", arr);
  if (code != TURN_OK) {
    json_object_set_new(entry, "error", json_string(turn_errname(code)));
    json_object_set_new(entry, "line", json_integer((json_int_t)line));
  }
  json_array_append_new(code == TURN_OK ? valid_streams : invalid_streams, entry);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define STREAM_OK(name, ...)                           \
  do {                                                 \
    static const char *const lines_[] = {__VA_ARGS__}; \
    add_stream(name, lines_, N(lines_), TURN_OK, 0);   \
  } while (0)
#define STREAM_BAD(name, code, line, ...)                   \
  do {                                                      \
    static const char *const lines_[] = {__VA_ARGS__};      \
    add_stream(name, lines_, N(lines_), TURN_##code, line); \
  } while (0)

#define L_TURN \
  "{\"v\":1,\"seq\":0,\"type\":\"turn\",\"turn\":\"t-1\",\"session\":\"s-1\"}"
#define L_TEXT(seq) "{\"v\":1,\"seq\":" #seq ",\"type\":\"text\",\"delta\":\"ok\"}"
#define L_END(seq, why) \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"end\",\"stop_reason\":\"" why "\"}"
#define L_USE(seq, id, tool, tier)                                                     \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"tool_use\",\"id\":\"" id "\",\"tool\":\"" tool \
  "\",\"tier\":" #tier "}"
#define L_INPUT(seq, id, tool)                                                           \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"tool_input\",\"id\":\"" id "\",\"tool\":\"" tool \
  "\",\"input\":{},\"truncated\":false}"
#define L_PROGRESS(seq, id, tool)                                     \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"tool_progress\",\"id\":\"" id \
  "\",\"tool\":\"" tool "\",\"message\":\"step\"}"
#define L_RESULT(seq, id, tool, status, approval)                   \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"tool_result\",\"id\":\"" id \
  "\",\"tool\":\"" tool "\",\"status\":\"" status                   \
  "\",\"summary\":\"done\",\"approval\":" approval "}"
#define L_APPROVAL(seq, req, tool)                                          \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"approval\",\"request\":\"" req      \
  "\",\"tool\":\"" tool                                                     \
  "\",\"tier\":2,\"effect\":\"physical\",\"input\":{},\"truncated\":false," \
  "\"expires_at\":1790841900.0}"
#define L_DECIDED(seq, req, decision)                                          \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"approval_decided\",\"request\":\"" req \
  "\",\"decision\":\"" decision "\"}"
#define L_GUARD(seq, action) \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"guard\",\"action\":\"" action "\"}"
#define L_WIDGET(seq, id)                                      \
  "{\"v\":1,\"seq\":" #seq ",\"type\":\"widget\",\"id\":\"" id \
  "\",\"title\":\"Lamps\",\"html\":\"<p>on</p>\"}"

static void make_streams(void) {
  add_stream("the spec's example", spec_example, SPEC_EXAMPLE_LINES, TURN_OK, 0);
  STREAM_OK("text only", L_TURN, L_TEXT(1), L_TEXT(2), L_END(3, "end_turn"));
  STREAM_OK(
      "a tool with progress, text and reasoning around it", L_TURN,
      "{\"v\":1,\"seq\":1,\"type\":\"reasoning\",\"delta\":\"count\"}",
      L_USE(2, "u1", "count_slowly", 0), L_TEXT(3), L_INPUT(4, "u1", "count_slowly"),
      L_PROGRESS(5, "u1", "count_slowly"), L_PROGRESS(6, "u1", "count_slowly"),
      L_RESULT(7, "u1", "count_slowly", "ok", "null"), L_TEXT(8), L_END(9, "end_turn"));
  STREAM_OK("two calls interleaved", L_TURN, L_USE(1, "u1", "clock", 0),
            L_USE(2, "u2", "clock", 0), L_INPUT(3, "u2", "clock"),
            L_INPUT(4, "u1", "clock"), L_RESULT(5, "u1", "clock", "ok", "null"),
            L_RESULT(6, "u2", "clock", "error", "null"), L_END(7, "end_turn"));
  STREAM_OK("a widget before its render_ui result", L_TURN,
            L_USE(1, "u3", "render_ui", 0), L_INPUT(2, "u3", "render_ui"),
            L_WIDGET(3, "u3"), L_RESULT(4, "u3", "render_ui", "ok", "null"),
            L_END(5, "end_turn"));
  STREAM_OK("a step-up: guard events between approval and decision", L_TURN,
            L_USE(1, "u1", "lamp_set", 2), L_INPUT(2, "u1", "lamp_set"),
            L_APPROVAL(3, "a1", "lamp_set"), L_GUARD(4, "step_up"), L_GUARD(5, "passed"),
            L_DECIDED(6, "a1", "approved"),
            L_RESULT(7, "u1", "lamp_set", "ok", "\"approved\""), L_END(8, "end_turn"));
  STREAM_OK("a step-up with a wrong PIN first", L_TURN, L_USE(1, "u1", "lamp_set", 2),
            L_INPUT(2, "u1", "lamp_set"), L_APPROVAL(3, "a1", "lamp_set"),
            L_GUARD(4, "step_up"), L_GUARD(5, "failed"), L_GUARD(6, "passed"),
            L_DECIDED(7, "a1", "approved"),
            L_RESULT(8, "u1", "lamp_set", "ok", "\"approved\""), L_END(9, "end_turn"));
  STREAM_OK("an approval that times out", L_TURN, L_USE(1, "u1", "lamp_set", 2),
            L_INPUT(2, "u1", "lamp_set"), L_APPROVAL(3, "a1", "lamp_set"),
            L_DECIDED(4, "a1", "timeout"),
            L_RESULT(5, "u1", "lamp_set", "rejected", "\"timeout\""),
            L_END(6, "end_turn"));
  STREAM_OK("a tier-2 call refused while locked, without an approval", L_TURN,
            L_USE(1, "u1", "lamp_set", 2), L_INPUT(2, "u1", "lamp_set"),
            L_RESULT(3, "u1", "lamp_set", "rejected", "\"locked\""),
            L_END(4, "end_turn"));
  STREAM_OK("a turn refused by the guard", L_TURN, L_GUARD(1, "refused"),
            L_END(2, "locked"));
  STREAM_OK("busy", L_TURN, L_END(1, "busy"));
  STREAM_OK("an error outside the agent, then end", L_TURN, L_TEXT(1),
            "{\"v\":1,\"seq\":2,\"type\":\"error\",\"message\":\"the store failed\"}",
            L_END(3, "error"));
  STREAM_OK("a model failure: notice, then end error", L_TURN,
            "{\"v\":1,\"seq\":1,\"type\":\"throttled\",\"delay_seconds\":2.0}",
            "{\"v\":1,\"seq\":2,\"type\":\"notice\",\"text\":\"The model failed.\"}",
            L_END(3, "error"));
  STREAM_OK("cancelled while a call ran: its result, then end", L_TURN,
            L_USE(1, "u1", "count_slowly", 0), L_INPUT(2, "u1", "count_slowly"),
            L_PROGRESS(3, "u1", "count_slowly"),
            L_RESULT(4, "u1", "count_slowly", "error", "null"), L_END(5, "cancelled"));
  STREAM_OK("cancelled while an approval waited: decided, result, end", L_TURN,
            L_USE(1, "u1", "lamp_set", 2), L_INPUT(2, "u1", "lamp_set"),
            L_APPROVAL(3, "a1", "lamp_set"), L_GUARD(4, "step_up"),
            L_DECIDED(5, "a1", "rejected"),
            L_RESULT(6, "u1", "lamp_set", "rejected", "\"rejected\""),
            L_END(7, "cancelled"));
  STREAM_OK("a reply cut off mid-call: a result straight after tool_use", L_TURN,
            L_USE(1, "u1", "clock", 0), L_USE(2, "u2", "clock", 0),
            L_INPUT(3, "u1", "clock"), L_RESULT(4, "u1", "clock", "error", "null"),
            L_RESULT(5, "u2", "clock", "error", "null"), L_END(6, "max_tokens"));
  STREAM_OK("calls closed before an error outside the agent", L_TURN,
            L_USE(1, "u1", "clock", 0), L_INPUT(2, "u1", "clock"),
            L_RESULT(3, "u1", "clock", "error", "null"),
            "{\"v\":1,\"seq\":4,\"type\":\"error\",\"message\":\"the store failed\"}",
            L_END(5, "error"));
  STREAM_OK("a log of two turns", L_TURN, L_TEXT(1), L_END(2, "end_turn"), L_TURN,
            L_TEXT(1), L_END(2, "max_tokens"));

  STREAM_BAD("the first event is not turn", E_ORDER, 1, L_TEXT(0), L_END(1, "end_turn"));
  STREAM_BAD("turn does not start at seq 0", E_SEQ, 1,
             "{\"v\":1,\"seq\":1,\"type\":\"turn\",\"turn\":\"t\",\"session\":\"s\"}",
             L_END(2, "end_turn"));
  STREAM_BAD("a gap in seq", E_SEQ, 3, L_TURN, L_TEXT(1), L_TEXT(3),
             L_END(4, "end_turn"));
  STREAM_BAD("a repeated seq", E_SEQ, 3, L_TURN, L_TEXT(1), L_TEXT(1),
             L_END(2, "end_turn"));
  STREAM_BAD("no end", E_INCOMPLETE, 2, L_TURN, L_TEXT(1));
  STREAM_BAD("an event after end", E_ORDER, 3, L_TURN, L_END(1, "end_turn"), L_TEXT(2));
  STREAM_BAD("a second turn event inside a turn", E_ORDER, 2, L_TURN,
             "{\"v\":1,\"seq\":1,\"type\":\"turn\",\"turn\":\"t\",\"session\":\"s\"}",
             L_END(2, "end_turn"));
  STREAM_BAD("text after error", E_ORDER, 3, L_TURN,
             "{\"v\":1,\"seq\":1,\"type\":\"error\",\"message\":\"x\"}", L_TEXT(2),
             L_END(3, "error"));
  STREAM_BAD("tool_input for a call never started", E_UNKNOWN_ID, 2, L_TURN,
             L_INPUT(1, "u1", "clock"), L_END(2, "end_turn"));
  STREAM_BAD("tool_result before tool_input", E_ORDER, 3, L_TURN,
             L_USE(1, "u1", "clock", 0), L_RESULT(2, "u1", "clock", "ok", "null"),
             L_END(3, "end_turn"));
  STREAM_BAD("two calls with one id", E_DUPLICATE_ID, 3, L_TURN,
             L_USE(1, "u1", "clock", 0), L_USE(2, "u1", "clock", 0),
             L_END(3, "cancelled"));
  STREAM_BAD("tool name differs from the tool_use", E_MISMATCH, 3, L_TURN,
             L_USE(1, "u1", "clock", 0), L_INPUT(2, "u1", "lamp_set"),
             L_END(3, "cancelled"));
  STREAM_BAD("an approval for a tier-0 call", E_MISMATCH, 4, L_TURN,
             L_USE(1, "u1", "clock", 0), L_INPUT(2, "u1", "clock"),
             L_APPROVAL(3, "a1", "clock"), L_END(4, "cancelled"));
  STREAM_BAD("an approval before the input is complete", E_ORDER, 3, L_TURN,
             L_USE(1, "u1", "lamp_set", 2), L_APPROVAL(2, "a1", "lamp_set"),
             L_END(3, "cancelled"));
  STREAM_BAD("a decision for an unknown request", E_UNKNOWN_ID, 2, L_TURN,
             L_DECIDED(1, "a9", "approved"), L_END(2, "end_turn"));
  STREAM_BAD("a decision given twice", E_ORDER, 6, L_TURN, L_USE(1, "u1", "lamp_set", 2),
             L_INPUT(2, "u1", "lamp_set"), L_APPROVAL(3, "a1", "lamp_set"),
             L_DECIDED(4, "a1", "approved"), L_DECIDED(5, "a1", "rejected"),
             L_END(6, "cancelled"));
  STREAM_BAD("progress while awaiting the decision", E_ORDER, 5, L_TURN,
             L_USE(1, "u1", "lamp_set", 2), L_INPUT(2, "u1", "lamp_set"),
             L_APPROVAL(3, "a1", "lamp_set"), L_PROGRESS(4, "u1", "lamp_set"),
             L_END(5, "cancelled"));
  STREAM_BAD("a result that contradicts the decision", E_MISMATCH, 6, L_TURN,
             L_USE(1, "u1", "lamp_set", 2), L_INPUT(2, "u1", "lamp_set"),
             L_APPROVAL(3, "a1", "lamp_set"), L_DECIDED(4, "a1", "rejected"),
             L_RESULT(5, "u1", "lamp_set", "ok", "\"approved\""), L_END(6, "end_turn"));
  STREAM_BAD("a widget for a call that is not render_ui", E_MISMATCH, 4, L_TURN,
             L_USE(1, "u1", "clock", 0), L_INPUT(2, "u1", "clock"), L_WIDGET(3, "u1"),
             L_END(4, "cancelled"));
  STREAM_BAD("a widget after its result", E_ORDER, 5, L_TURN,
             L_USE(1, "u3", "render_ui", 0), L_INPUT(2, "u3", "render_ui"),
             L_RESULT(3, "u3", "render_ui", "ok", "null"), L_WIDGET(4, "u3"),
             L_END(5, "end_turn"));
  STREAM_BAD("end_turn with a call still open", E_UNFINISHED, 3, L_TURN,
             L_USE(1, "u1", "clock", 0), L_END(2, "end_turn"));
  STREAM_BAD("cancelled with a running call still open", E_UNFINISHED, 5, L_TURN,
             L_USE(1, "u1", "count_slowly", 0), L_INPUT(2, "u1", "count_slowly"),
             L_PROGRESS(3, "u1", "count_slowly"), L_END(4, "cancelled"));
  STREAM_BAD("cancelled with an approval still waiting", E_UNFINISHED, 5, L_TURN,
             L_USE(1, "u1", "lamp_set", 2), L_INPUT(2, "u1", "lamp_set"),
             L_APPROVAL(3, "a1", "lamp_set"), L_END(4, "cancelled"));
  STREAM_BAD("interrupt with a call still open", E_UNFINISHED, 4, L_TURN,
             L_USE(1, "u1", "clock", 0), L_INPUT(2, "u1", "clock"),
             L_END(3, "interrupt"));
  STREAM_BAD("max_tokens with a call cut off before its input", E_UNFINISHED, 3, L_TURN,
             L_USE(1, "u1", "clock", 0), L_END(2, "max_tokens"));
  STREAM_BAD("an error, then end, with a call still open", E_UNFINISHED, 5, L_TURN,
             L_USE(1, "u1", "clock", 0), L_INPUT(2, "u1", "clock"),
             "{\"v\":1,\"seq\":3,\"type\":\"error\",\"message\":\"x\"}",
             L_END(4, "error"));
  STREAM_BAD("progress after the owner rejected the call", E_ORDER, 6, L_TURN,
             L_USE(1, "u1", "lamp_set", 2), L_INPUT(2, "u1", "lamp_set"),
             L_APPROVAL(3, "a1", "lamp_set"), L_DECIDED(4, "a1", "rejected"),
             L_PROGRESS(5, "u1", "lamp_set"),
             L_RESULT(6, "u1", "lamp_set", "rejected", "\"rejected\""),
             L_END(7, "end_turn"));
  STREAM_BAD("approved without an approval", E_MISMATCH, 4, L_TURN,
             L_USE(1, "u1", "lamp_set", 2), L_INPUT(2, "u1", "lamp_set"),
             L_RESULT(3, "u1", "lamp_set", "ok", "\"approved\""), L_END(4, "cancelled"));
  STREAM_BAD("a new turn before the end of the last", E_ORDER, 3, L_TURN, L_TEXT(1),
             L_TURN, L_TEXT(1), L_END(2, "end_turn"));
  STREAM_BAD("a line that does not parse", E_FIELD, 2, L_TURN,
             "{\"v\":1,\"seq\":1,\"type\":\"text\",\"delta\":7}", L_END(2, "end_turn"));
}

void vectors_streams(json_t *doc) {
  valid_streams = json_array();
  invalid_streams = json_array();
  make_streams();
  json_object_set_new(
      doc, "streams",
      json_pack("{s:o,s:o}", "valid", valid_streams, "invalid", invalid_streams));
}
