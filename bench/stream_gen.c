/* stream_gen: whole turns as a chat backend streams them, made by a fixed-seed
 * PRNG and libturn's encoder, so the benchmark measures the same bytes everywhere.
 * About three quarters of the events are short text deltas (a few words, some
 * non-ASCII, some needing escapes); the bytes are dominated by tool inputs,
 * widgets and results. Every turn follows the order rules, and each session's
 * turns are also written as a history document. Errors are sticky in struct gen:
 * after the first, every step does nothing and stream_gen_build returns it. */
#include "stream_gen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ----------------------------------------------------------------- PRNG */

/* splitmix64: tiny, fast and well mixed; plenty for picking words. */
struct rng {
  uint64_t s;
};

static uint64_t rng_next(struct rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/* Uniform in [0, n) for n > 0, by multiply-shift (no modulo bias worth noting). */
static uint32_t rng_below(struct rng *r, uint32_t n) {
  return (uint32_t)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Uniform in [lo, hi], both included. */
static uint32_t rng_range(struct rng *r, uint32_t lo, uint32_t hi) {
  return lo + rng_below(r, hi - lo + 1);
}

static bool rng_permille(struct rng *r, uint32_t p) {
  return rng_below(r, 1000) < p;
}

#define COUNT(a)     (sizeof(a) / sizeof((a)[0]))
#define PICK(r, arr) ((arr)[rng_below((r), (uint32_t)COUNT(arr))])

/* ------------------------------------------------------------ vocabulary */

static const char *const plain_words[] = {
    "the",      "a",        "and",     "to",       "of",       "is",      "it",
    "you",      "that",     "in",      "for",      "on",       "with",    "I",
    "this",     "your",     "lamp",    "desk",     "calendar", "meeting", "tomorrow",
    "file",     "build",    "tests",   "passed",   "found",    "three",   "results",
    "check",    "done",     "Let",     "me",       "look",     "at",      "now",
    "here",     "what",     "changed", "function", "returns",  "error",   "line",
    "42",       "3.5",      "100%",    "should",   "we",       "can",     "also",
    "update",   "config",   "before",  "after",    "server",   "request", "turned",
    "kitchen",  "light",    "weather", "forecast", "rain",     "Berlin",  "morning",
    "summary",  "options",  "first",   "second",   "then",     "which",   "means",
    "the user", "approved", "running", "script",   "output",   "shows",   "version"};

static const char *const unicode_words[] = {
    "café",  "naïve", "über",        "Zürich",     "résumé",   "Straße",   "São Paulo",
    "日本",  "東京",  "日本語",      "こんにちは", "Привет",   "Ελληνικά", "→",
    "—",     "…",     "“so-called”", "🙂",       "🚀",        "👍🏽", "🇩🇪",
    "½ cup", "20 °C", "Åsa",         "Øresund",    "İstanbul", "ñandú",    "€12,50"};

/* Text that the encoder must escape: quotes, backslashes, newlines, tabs. */
static const char *const escape_words[] = {"\"quoted\"", "C:\\Users\\ana",
                                           "a\\b",       "\n",
                                           "\n\n",       "\t",
                                           "say \"hi\"", "line\nbreak",
                                           "\"",         "\\n is not a newline",
                                           "x\ty",       "\r\n"};

static const char *const markdown_words[] = {
    "**bold**", "`make -j2`",
    "\n- item", "\n### Steps\n",
    "|",        "[docs](https://example.org/a?b=1&c=2)",
    "_note_",   "```c\n",
    "\n```",    "> "};

static const char *const device_names[] = {"desk", "hall", "front door", "Küche"};

static const char *const progress_templates[] = {
    "downloading page %u of %u",      "running tests: %u/%u passed",
    "compiling unit %u of %u",        "fetched %u of %u results",
    "waiting for the device (%u/%u)", "übertrage Datei %u von %u…",
    "scanning %u of %u folders"};

static const char *const error_messages[] = {
    "model provider returned HTTP 529 (overloaded)",
    "the agent loop stopped: tool process exited with signal 9",
    "store write failed: disk full",
    "Verbindung zum Modell abgebrochen (timeout nach 60 s)"};

static const char *const notice_texts[] = {
    "Das Gerät „Schreibtischlampe“ ist offline.",
    "Your session will be archived in 7 days.",
    "La routine « bonne nuit » a été exécutée.",
    "Guard: step-up required for physical actions after 22:00.",
    "Token budget: 80% of the daily limit used."};

/* ----------------------------------------------------------------- tools */

enum tool_kind {
  K_READ,
  K_SEARCH,
  K_SHELL,
  K_WRITE,
  K_CALENDAR,
  K_DEVICE,
  K_EMAIL,
  K_UI,
  K_ROUTINE
};

struct tool {
  const char *name;
  int tier; /* 0-2 or TURN_TIER_NULL (routines, which are exempt) */
  const char *effect;
  enum tool_kind kind;
  uint32_t weight; /* how often the model picks it */
};

static const struct tool tools[] = {
    {"read_file", 0, "read", K_READ, 20},
    {"web_search", 0, "network", K_SEARCH, 16},
    {"shell", 1, "exec", K_SHELL, 14},
    {"write_file", 1, "write", K_WRITE, 10},
    {"calendar_create", 1, "write", K_CALENDAR, 6},
    {"lamp_set", 2, "physical", K_DEVICE, 6},
    {"door_unlock", 2, "physical", K_DEVICE, 2},
    {"send_email", 2, "external", K_EMAIL, 4},
    {"render_ui", 0, "display", K_UI, 8},
    {"routine_run", TURN_TIER_NULL, "physical", K_ROUTINE, 4},
};

static const struct tool *pick_tool(struct rng *r) {
  uint32_t total = 0;
  for (size_t i = 0; i < COUNT(tools); i++)
    total += tools[i].weight;
  uint32_t x = rng_below(r, total);
  for (size_t i = 0; i < COUNT(tools); i++) {
    if (x < tools[i].weight) return &tools[i];
    x -= tools[i].weight;
  }
  return &tools[0];
}

/* ------------------------------------------------------------ generator */

#define START_S 1790841600u /* 2026-10-01T08:00:00Z */

struct gen {
  struct stream_gen *st;
  struct rng rng;
  int rv;           /* first error; sticky */
  turn_buf line;    /* one encoded event or block */
  turn_buf text;    /* a string being composed */
  turn_buf json;    /* a tool input being composed */
  turn_buf reply;   /* text deltas since the last assistant block */
  turn_buf thought; /* reasoning deltas since the last reasoning block */
  uint64_t seq;     /* seq of the next event of the open turn */
  uint64_t now_ms;  /* simulated clock, Unix milliseconds */
  uint64_t ids;     /* counter mixed into tool and request ids */
  turn_str session; /* id of the current session */
  bool doc_open;    /* a history document is being written */
  size_t doc_off;   /* where it starts in st->history */
  size_t doc_blocks;
};

static void set_rv(struct gen *g, int rv) {
  if (g->rv == TURN_OK) g->rv = rv;
}

static void append(struct gen *g, turn_buf *b, const char *p, size_t len) {
  int rv = turn_buf_append(b, p, len);
  if (rv != TURN_OK) set_rv(g, rv);
}

static void append_c(struct gen *g, turn_buf *b, const char *s) {
  append(g, b, s, strlen(s));
}

/* Appends a formatted piece (ids, numbers); pieces are short. */
static void appendf(struct gen *g, turn_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void appendf(struct gen *g, turn_buf *b, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof tmp) {
    set_rv(g, TURN_E_INVALID);
    return;
  }
  append(g, b, tmp, (size_t)n);
}

/* A copy of p[0..len) in the stream's arena, for strings that events point to. */
static turn_str keep(struct gen *g, const char *p, size_t len) {
  if (len == 0 || g->rv != TURN_OK) return (turn_str){NULL, 0};
  char *copy = turn_arena_alloc(&g->st->arena, len);
  if (copy == NULL) {
    set_rv(g, TURN_E_NOMEM);
    return (turn_str){NULL, 0};
  }
  memcpy(copy, p, len);
  return (turn_str){copy, len};
}

static turn_str keep_buf(struct gen *g, const turn_buf *b) {
  return keep(g, b->data, b->len);
}

static void advance(struct gen *g, uint32_t lo_ms, uint32_t hi_ms) {
  g->now_ms += rng_range(&g->rng, lo_ms, hi_ms);
}

/* One word: mostly plain English, some non-ASCII, a few that need escaping. */
static const char *pick_word(struct rng *r) {
  uint32_t x = rng_below(r, 1000);
  if (x < 800) return PICK(r, plain_words);
  if (x < 920) return PICK(r, unicode_words);
  if (x < 970) return PICK(r, escape_words);
  return PICK(r, markdown_words);
}

static void words(struct gen *g, turn_buf *b, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    if (i > 0) append(g, b, " ", 1);
    append_c(g, b, pick_word(&g->rng));
  }
}

/* Fills b with words until it holds at least len bytes. */
static void words_until(struct gen *g, turn_buf *b, size_t len) {
  while (b->len < len && g->rv == TURN_OK) {
    words(g, b, rng_range(&g->rng, 4, 14));
    append_c(g, b, rng_permille(&g->rng, 150) ? ".\n" : ". ");
  }
}

/* "2026-10-01T08:00:05.123Z", sometimes with an offset or without the fraction. */
static size_t format_at(struct gen *g, char *out, size_t cap) {
  time_t t = (time_t)(g->now_ms / 1000);
  struct tm tm;
  gmtime_r(&t, &tm);
  size_t n = strftime(out, cap, "%Y-%m-%dT%H:%M:%S", &tm);
  uint32_t style = rng_below(&g->rng, 10);
  int m;
  if (style < 7)
    m = snprintf(out + n, cap - n, ".%03uZ", (unsigned)(g->now_ms % 1000));
  else if (style < 9)
    m = snprintf(out + n, cap - n, "+00:00");
  else
    m = snprintf(out + n, cap - n, "Z");
  return n + (size_t)m;
}

/* ------------------------------------------------------------- output */

static void emit(struct gen *g, turn_event ev) {
  if (g->rv != TURN_OK) return;
  struct stream_gen *st = g->st;
  ev.seq = g->seq++;
  if (st->n_events == st->cap_events) {
    size_t cap = st->cap_events == 0 ? 4096 : st->cap_events * 2;
    turn_event *grown = realloc(st->events, cap * sizeof *grown);
    if (grown == NULL) {
      set_rv(g, TURN_E_NOMEM);
      return;
    }
    st->events = grown;
    st->cap_events = cap;
  }
  turn_buf_reset(&g->line);
  int rv = turn_event_encode(&ev, &g->line);
  if (rv == TURN_OK) rv = turn_buf_append(&st->ndjson, g->line.data, g->line.len);
  if (rv == TURN_OK) rv = turn_buf_append(&st->ndjson, "\n", 1);
  if (rv != TURN_OK) {
    set_rv(g, rv);
    return;
  }
  st->events[st->n_events++] = ev;
  st->n_by_type[ev.type]++;
  st->bytes_by_type[ev.type] += g->line.len + 1;
  if (g->line.len > st->max_line) st->max_line = g->line.len;
}

static void push_span(struct gen *g, struct stream_gen_span **v, size_t *n, size_t *cap,
                      size_t off, size_t len) {
  if (g->rv != TURN_OK) return;
  if (*n == *cap) {
    size_t grown_cap = *cap == 0 ? 1024 : *cap * 2;
    struct stream_gen_span *grown = realloc(*v, grown_cap * sizeof *grown);
    if (grown == NULL) {
      set_rv(g, TURN_E_NOMEM);
      return;
    }
    *v = grown;
    *cap = grown_cap;
  }
  (*v)[(*n)++] = (struct stream_gen_span){off, len};
}

/* Appends one block to the open history document; 1 in 20 has "at": null. */
static void add_block(struct gen *g, turn_block b) {
  if (g->rv != TURN_OK || !g->doc_open) return;
  char at[48];
  b.at = (turn_str){NULL, 0};
  if (!rng_permille(&g->rng, 50)) b.at = (turn_str){at, format_at(g, at, sizeof at)};
  turn_buf_reset(&g->line);
  int rv = turn_block_encode(&b, &g->line);
  if (rv != TURN_OK) {
    set_rv(g, rv);
    return;
  }
  struct stream_gen *st = g->st;
  if (g->doc_blocks > 0) append(g, &st->history, ",", 1);
  size_t off = st->history.len;
  append(g, &st->history, g->line.data, g->line.len);
  push_span(g, &st->blocks, &st->n_blocks, &st->cap_blocks, off, g->line.len);
  g->doc_blocks++;
}

static void add_text_block(struct gen *g, turn_block_type type, const turn_buf *text) {
  if (text->len == 0) return;
  turn_block b;
  memset(&b, 0, sizeof b);
  b.type = type;
  b.text.text = (turn_str){text->data, text->len};
  add_block(g, b);
}

/* Consecutive deltas of one reply become one block, as the history joins them. */
static void flush_text(struct gen *g) {
  add_text_block(g, TURN_BLOCK_REASONING, &g->thought);
  add_text_block(g, TURN_BLOCK_ASSISTANT, &g->reply);
  turn_buf_reset(&g->thought);
  turn_buf_reset(&g->reply);
}

static void doc_begin(struct gen *g, uint32_t n_turns) {
  struct stream_gen *st = g->st;
  char id[32], at[48];
  time_t t = (time_t)(g->now_ms / 1000);
  struct tm tm;
  gmtime_r(&t, &tm);
  size_t n = strftime(id, sizeof id, "%Y%m%d-%H%M%S-", &tm);
  for (int i = 0; i < 4; i++)
    id[n++] = (char)('a' + rng_below(&g->rng, 26));
  g->session = keep(g, id, n);
  size_t at_len = format_at(g, at, sizeof at);

  g->doc_off = st->history.len;
  g->doc_blocks = 0;
  g->doc_open = true;
  append_c(g, &st->history, "{\"session\":{\"id\":\"");
  append(g, &st->history, id, n);
  append_c(g, &st->history, "\",\"title\":\"");
  turn_buf_reset(&g->text);
  words(g, &g->text, rng_range(&g->rng, 2, 6));
  /* Titles are picked from words; escape the few that need it by hand. */
  for (size_t i = 0; i < g->text.len; i++) {
    char c = g->text.data[i];
    if (c == '"' || c == '\\')
      append(g, &st->history, "\\", 1);
    else if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
    append(g, &st->history, &c, 1);
  }
  append_c(g, &st->history, "\",\"channel\":\"web\",\"created_at\":\"");
  append(g, &st->history, at, at_len);
  appendf(g, &st->history, "\",\"updated_at\":null,\"message_count\":%u},\"blocks\":[",
          2 * n_turns);
}

static void doc_end(struct gen *g) {
  if (!g->doc_open) return;
  struct stream_gen *st = g->st;
  append_c(g, &st->history, "]}");
  push_span(g, &st->docs, &st->n_docs, &st->cap_docs, g->doc_off,
            st->history.len - g->doc_off);
  g->doc_open = false;
}

/* ---------------------------------------------------------- tool inputs */

/* A tiny compact JSON writer on g->json. A separator goes before a key or value
 * unless it follows '{', '[' or ':'; strings are escaped as the encoder would, so
 * the compact text turn_input_from_json makes is the same length. */
static void j_sep(struct gen *g) {
  turn_buf *b = &g->json;
  if (b->len == 0) return;
  char last = b->data[b->len - 1];
  if (last != '{' && last != '[' && last != ':') append(g, b, ",", 1);
}

static void j_str(struct gen *g, const char *s, size_t len) {
  static const char hex[] = "0123456789abcdef";
  turn_buf *b = &g->json;
  j_sep(g);
  append(g, b, "\"", 1);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    char esc[6] = {'\\', 0, 0, 0, 0, 0};
    size_t n = 2;
    switch (c) {
    case '"':
    case '\\':
      esc[1] = (char)c;
      break;
    case '\n':
      esc[1] = 'n';
      break;
    case '\r':
      esc[1] = 'r';
      break;
    case '\t':
      esc[1] = 't';
      break;
    default:
      if (c >= 0x20) {
        append(g, b, (const char *)&s[i], 1);
        continue;
      }
      esc[1] = 'u';
      esc[2] = '0';
      esc[3] = '0';
      esc[4] = hex[c >> 4];
      esc[5] = hex[c & 15];
      n = 6;
    }
    append(g, b, esc, n);
  }
  append(g, b, "\"", 1);
}

static void j_cstr(struct gen *g, const char *s) {
  j_str(g, s, strlen(s));
}

static void j_key(struct gen *g, const char *key) {
  j_cstr(g, key);
  append(g, &g->json, ":", 1);
}

static void j_open(struct gen *g, char c) {
  j_sep(g);
  append(g, &g->json, &c, 1);
}

static void j_close(struct gen *g, char c) {
  append(g, &g->json, &c, 1);
}

static void j_raw(struct gen *g, const char *lit) {
  j_sep(g);
  append_c(g, &g->json, lit);
}

static void j_int(struct gen *g, long long v) {
  j_sep(g);
  appendf(g, &g->json, "%lld", v);
}

/* A real from integer parts, so the text is the same on every libc. */
static void j_real(struct gen *g) {
  j_sep(g);
  uint32_t style = rng_below(&g->rng, 4);
  uint32_t a = rng_below(&g->rng, 10000), b = rng_below(&g->rng, 1000);
  if (style == 0)
    appendf(g, &g->json, "-%u.%03u", a, b);
  else if (style == 1)
    appendf(g, &g->json, "%u.%ue-%u", a % 10, b, 1 + a % 9);
  else
    appendf(g, &g->json, "%u.%03u", a, b);
}

static void j_words(struct gen *g, uint32_t lo, uint32_t hi) {
  turn_buf_reset(&g->text);
  words(g, &g->text, rng_range(&g->rng, lo, hi));
  j_str(g, g->text.data, g->text.len);
}

/* One record of the filler lists: the nested shape of search hits, file entries
 * and device states. About 150-250 bytes. */
static void j_record(struct gen *g) {
  j_open(g, '{');
  j_key(g, "id");
  j_int(g, (long long)rng_below(&g->rng, 1000000));
  j_key(g, "name");
  j_words(g, 1, 5);
  j_key(g, "score");
  j_real(g);
  j_key(g, "tags");
  j_open(g, '[');
  for (uint32_t i = rng_below(&g->rng, 4); i > 0; i--)
    j_cstr(g, PICK(&g->rng, plain_words));
  j_close(g, ']');
  j_key(g, "active");
  j_raw(g, rng_permille(&g->rng, 500) ? "true" : "false");
  j_key(g, "parent");
  if (rng_permille(&g->rng, 300))
    j_raw(g, "null");
  else
    j_int(g, -(long long)rng_below(&g->rng, 5000));
  j_key(g, "meta");
  j_open(g, '{');
  j_key(g, "path");
  j_cstr(g, "/home/ana/src/turnd/src/proto/json_scan.c");
  j_key(g, "size");
  j_int(g, (long long)rng_below(&g->rng, 1u << 20));
  j_close(g, '}');
  j_close(g, '}');
}

/* Records until the input is about target bytes; stays under it by one record. */
static void j_fill_records(struct gen *g, const char *key, size_t target) {
  j_key(g, key);
  j_open(g, '[');
  while (g->json.len + 260 < target && g->rv == TURN_OK)
    j_record(g);
  j_close(g, ']');
}

/* A long text member (file contents, mail bodies) filling the input to target. */
static void j_fill_text(struct gen *g, const char *key, size_t target) {
  j_key(g, key);
  turn_buf_reset(&g->text);
  size_t room = target > g->json.len + 80 ? target - g->json.len - 80 : 16;
  /* Escapes make the JSON longer than the text: aim a bit under. */
  words_until(g, &g->text, room - room / 16);
  j_str(g, g->text.data, g->text.len);
}

/* Constant members go in as compact JSON text; the rest varies per call. */
static void tool_input_json(struct gen *g, const struct tool *t, size_t target) {
  turn_buf_reset(&g->json);
  j_open(g, '{');
  switch (t->kind) {
  case K_READ:
    j_raw(g, "\"path\":\"src/proto/fields.c\"");
    j_key(g, "offset");
    j_int(g, rng_below(&g->rng, 500));
    j_raw(g, "\"limit\":200");
    j_fill_records(g, "context", target);
    break;
  case K_SEARCH:
    j_key(g, "query");
    j_words(g, 2, 8);
    j_raw(g, "\"max_results\":10,\"filters\":{\"lang\":\"de\",\"since\":\"2026-01-01\","
             "\"safe\":true}");
    j_fill_records(g, "previous_hits", target);
    break;
  case K_SHELL:
    j_raw(g, "\"command\":\"make -j2 && ctest --output-on-failure -R \\\"unit_.*\\\"\","
             "\"cwd\":\"/home/ana/turnd\",\"env\":{\"LANG\":\"C.UTF-8\",\"CC\":\"gcc\"},"
             "\"timeout_s\":120");
    j_fill_records(g, "files", target);
    break;
  case K_WRITE:
    j_key(g, "path");
    j_words(g, 2, 6);
    j_raw(g, "\"mode\":\"overwrite\"");
    j_fill_text(g, "content", target);
    break;
  case K_EMAIL:
    j_key(g, "subject");
    j_words(g, 2, 6);
    j_raw(g, "\"to\":[\"ana@example.org\",\"zoë.müller@example.de\"]");
    j_fill_text(g, "body", target);
    break;
  case K_CALENDAR:
    j_key(g, "title");
    j_words(g, 2, 5);
    j_raw(g, "\"start\":\"2026-10-02T09:00:00+02:00\",\"duration_min\":45,"
             "\"reminders\":[10,60]");
    j_fill_records(g, "attendees", target);
    break;
  case K_DEVICE:
    j_key(g, "name");
    j_cstr(g, PICK(&g->rng, device_names));
    j_raw(g, "\"on\":true");
    j_key(g, "brightness");
    j_real(g);
    j_raw(g, "\"color\":{\"r\":255,\"g\":180,\"b\":90}");
    if (target > 400) j_fill_records(g, "scene", target);
    break;
  case K_UI:
    j_key(g, "title");
    j_words(g, 2, 5);
    j_raw(g, "\"component\":\"table\"");
    j_fill_records(g, "rows", target);
    break;
  case K_ROUTINE:
    j_raw(g, "\"routine\":\"good_night\",\"args\":{\"delay_min\":5}");
    break;
  }
  j_close(g, '}');
}

/* Target size of an input: log-uniform from 100 B to 8 KiB (by octave, integers
 * only); 1 in 50 is larger and travels as a preview. */
static size_t input_target(struct gen *g) {
  if (rng_permille(&g->rng, 20)) return rng_range(&g->rng, 9000, 24000);
  uint32_t octave = rng_below(&g->rng, 7); /* 100 << 6 = 6400 */
  size_t lo = (size_t)100 << octave;
  size_t hi = lo * 2 < 8000 ? lo * 2 : 8000;
  return rng_range(&g->rng, (uint32_t)lo, (uint32_t)hi);
}

static turn_input make_input(struct gen *g, const struct tool *t) {
  turn_input in = {{NULL, 0}, {NULL, 0}, false};
  tool_input_json(g, t, input_target(g));
  if (g->rv != TURN_OK) return in;
  turn_error err;
  int rv = turn_input_from_json(&in, &g->st->arena, g->json.data, g->json.len, &err);
  if (rv != TURN_OK) {
    set_rv(g, rv);
    return in;
  }
  g->st->n_inputs++;
  g->st->n_truncated += in.truncated;
  return in;
}

static turn_str make_html(struct gen *g, turn_str title, size_t target) {
  turn_buf *b = &g->text;
  turn_buf_reset(b);
  append_c(g, b, "<div class=\"card\" data-theme=\"light\">\n<h2>");
  append(g, b, title.p, title.len);
  append_c(g, b, "</h2>\n<table class=\"grid\">\n<tr><th>Name</th><th>Wert</th></tr>\n");
  while (b->len + 120 < target && g->rv == TURN_OK) {
    append_c(g, b, "<tr><td>");
    words(g, b, rng_range(&g->rng, 1, 4));
    appendf(g, b, "</td><td style=\"text-align:right\">%u,%02u €</td></tr>\n",
            rng_below(&g->rng, 5000), rng_below(&g->rng, 100));
  }
  append_c(g, b,
           "</table>\n<p class=\"note\">Stand: 08:05 — “Daten” &amp; 'Quellen'</p>\n"
           "<script>document.querySelector('.card').dataset.ready = \"1\";</script>\n"
           "</div>");
  return keep_buf(g, b);
}

/* ------------------------------------------------------------- events */

static turn_str new_id(struct gen *g, const char *prefix, size_t n_chars) {
  static const char b62[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  char id[64];
  size_t n = strlen(prefix);
  memcpy(id, prefix, n);
  for (size_t i = 0; i < n_chars && n < sizeof id; i++)
    id[n++] = b62[rng_below(&g->rng, 62)];
  g->ids++;
  return keep(g, id, n);
}

static void emit_delta(struct gen *g, turn_event_type type) {
  turn_buf_reset(&g->text);
  if (rng_permille(&g->rng, 900)) append(g, &g->text, " ", 1);
  words(g, &g->text,
        type == TURN_EV_TEXT ? rng_range(&g->rng, 1, 5) : rng_range(&g->rng, 2, 10));
  uint32_t p = rng_below(&g->rng, 100);
  if (p < 10)
    append(g, &g->text, ".", 1);
  else if (p < 15)
    append(g, &g->text, ",", 1);
  turn_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = type;
  ev.text.delta = keep_buf(g, &g->text);
  append(g, type == TURN_EV_TEXT ? &g->reply : &g->thought, g->text.data, g->text.len);
  advance(g, 5, 80);
  emit(g, ev);
}

static void emit_throttled(struct gen *g) {
  turn_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = TURN_EV_THROTTLED;
  ev.throttled.delay_seconds = (double)rng_range(&g->rng, 1, 16) * 0.25;
  emit(g, ev);
}

static void emit_notice(struct gen *g) {
  const char *text = PICK(&g->rng, notice_texts);
  turn_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = TURN_EV_NOTICE;
  ev.notice.text = keep(g, text, strlen(text));
  emit(g, ev);
  turn_block b;
  memset(&b, 0, sizeof b);
  b.type = TURN_BLOCK_NOTICE;
  b.text.text = ev.notice.text;
  add_block(g, b);
}

/* One tool call, stepped one event at a time so calls of a batch interleave:
 * USE -> INPUT -> [APPROVAL -> GUARD* -> DECIDED] -> PROGRESS* -> [WIDGET] -> RESULT */
enum step {
  S_USE,
  S_INPUT,
  S_APPROVAL,
  S_GUARD,
  S_DECIDED,
  S_PROGRESS,
  S_WIDGET,
  S_RESULT,
  S_DONE
};

struct call {
  const struct tool *tool;
  turn_str id, request;
  turn_input input;
  enum step step;
  uint32_t guards_left, progress_left, progress_total;
  turn_decision decision;
  uint64_t started_ms;
};

static void call_init(struct gen *g, struct call *c, const struct tool *t) {
  memset(c, 0, sizeof *c);
  c->tool = t;
  c->step = S_USE;
  c->progress_total = t->kind == K_SHELL || t->kind == K_SEARCH
                          ? rng_range(&g->rng, 0, 8)
                          : rng_range(&g->rng, 0, 2);
  c->progress_left = c->progress_total;
  c->guards_left = rng_permille(&g->rng, 300) ? rng_range(&g->rng, 1, 3) : 0;
  uint32_t d = rng_below(&g->rng, 100);
  c->decision = d < 80   ? TURN_DECISION_APPROVED
                : d < 92 ? TURN_DECISION_REJECTED
                         : TURN_DECISION_TIMEOUT;
}

static enum step after_input(const struct call *c) {
  if (c->progress_left > 0) return S_PROGRESS;
  return c->tool->kind == K_UI ? S_WIDGET : S_RESULT;
}

static void call_result(struct gen *g, struct call *c) {
  turn_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = TURN_EV_TOOL_RESULT;
  ev.tool_result.id = c->id;
  ev.tool_result.tool = (turn_str){c->tool->name, strlen(c->tool->name)};
  turn_status status = TURN_STATUS_OK;
  turn_approval approval = TURN_APPROVAL_NULL;
  if (c->tool->tier == 2) {
    static const turn_approval of_decision[TURN_DECISION__COUNT] = {
        TURN_APPROVAL_APPROVED, TURN_APPROVAL_REJECTED, TURN_APPROVAL_TIMEOUT};
    approval = of_decision[c->decision];
    if (c->decision != TURN_DECISION_APPROVED) status = TURN_STATUS_REJECTED;
  } else if (c->tool->tier == TURN_TIER_NULL) {
    approval = TURN_APPROVAL_EXEMPT;
  }
  if (status == TURN_STATUS_OK && rng_permille(&g->rng, 80)) status = TURN_STATUS_ERROR;
  turn_buf_reset(&g->text);
  if (status == TURN_STATUS_REJECTED) {
    append_c(g, &g->text,
             c->decision == TURN_DECISION_TIMEOUT
                 ? "no decision before the approval expired"
                 : "the owner rejected the call");
  } else if (status == TURN_STATUS_ERROR) {
    appendf(g, &g->text, "%s failed: ", c->tool->name);
    words(g, &g->text, rng_range(&g->rng, 3, 12));
  } else {
    appendf(g, &g->text, "%s ok: ", c->tool->name);
    words(g, &g->text, rng_range(&g->rng, 3, 40));
    if (rng_permille(&g->rng, 200)) {
      append_c(g, &g->text, "\nstdout:\n");
      words_until(g, &g->text, g->text.len + rng_range(&g->rng, 100, 1500));
    }
  }
  ev.tool_result.summary = keep_buf(g, &g->text);
  ev.tool_result.status = status;
  ev.tool_result.approval = approval;
  advance(g, 50, 3000);
  emit(g, ev);

  turn_block b;
  memset(&b, 0, sizeof b);
  b.type = TURN_BLOCK_TOOL;
  b.tool.id = c->id;
  b.tool.tool = ev.tool_result.tool;
  b.tool.tier = c->tool->tier;
  b.tool.input = c->input;
  b.tool.status = status;
  b.tool.summary = ev.tool_result.summary;
  b.tool.has_summary = true;
  b.tool.approval = approval;
  b.tool.has_duration_ms = true;
  b.tool.duration_ms = (int64_t)(g->now_ms - c->started_ms);
  add_block(g, b);
}

/* A call cut short by a cancel: the history knows only what was asked. */
static void call_abandoned(struct gen *g, const struct call *c) {
  if (c->step == S_USE || c->step == S_DONE) return;
  turn_block b;
  memset(&b, 0, sizeof b);
  b.type = TURN_BLOCK_TOOL;
  b.tool.id = c->id;
  b.tool.tool = (turn_str){c->tool->name, strlen(c->tool->name)};
  b.tool.tier = c->tool->tier;
  b.tool.input = c->input; /* empty before tool_input: "input":null, unknown */
  b.tool.status = TURN_STATUS_NULL;
  b.tool.approval = TURN_APPROVAL_NULL;
  add_block(g, b);
}

static void call_step(struct gen *g, struct call *c) {
  turn_event ev;
  memset(&ev, 0, sizeof ev);
  turn_str tool = {c->tool->name, strlen(c->tool->name)};
  switch (c->step) {
  case S_USE:
    c->id = new_id(g, "toolu_01", 22);
    c->started_ms = g->now_ms;
    ev.type = TURN_EV_TOOL_USE;
    ev.tool_use.id = c->id;
    ev.tool_use.tool = tool;
    ev.tool_use.tier = c->tool->tier;
    emit(g, ev);
    c->step = S_INPUT;
    return;
  case S_INPUT:
    c->input = make_input(g, c->tool);
    ev.type = TURN_EV_TOOL_INPUT;
    ev.tool_input.id = c->id;
    ev.tool_input.tool = tool;
    ev.tool_input.input = c->input;
    advance(g, 100, 2000);
    emit(g, ev);
    c->step = c->tool->tier == 2 ? S_APPROVAL : after_input(c);
    return;
  case S_APPROVAL:
    c->request = new_id(g, "apr_", 12);
    ev.type = TURN_EV_APPROVAL;
    ev.approval.request = c->request;
    ev.approval.tool = tool;
    ev.approval.tier = 2;
    ev.approval.effect = (turn_str){c->tool->effect, strlen(c->tool->effect)};
    ev.approval.input = c->input;
    ev.approval.has_expires_at = !rng_permille(&g->rng, 100);
    ev.approval.expires_at_s = (double)(g->now_ms / 1000 + 300);
    emit(g, ev);
    c->step = c->guards_left > 0 ? S_GUARD : S_DECIDED;
    return;
  case S_GUARD: {
    static const char *const messages[] = {"Bestätige die Aktion auf deinem Telefon.",
                                           "Step-up sent to Ana's phone",
                                           "waiting for the second factor…"};
    const char *msg = PICK(&g->rng, messages);
    ev.type = TURN_EV_GUARD;
    ev.guard.action = TURN_STR("step_up");
    ev.guard.request = c->request;
    ev.guard.message = keep(g, msg, strlen(msg));
    advance(g, 1000, 20000);
    emit(g, ev);
    if (--c->guards_left == 0) c->step = S_DECIDED;
    return;
  }
  case S_DECIDED:
    ev.type = TURN_EV_APPROVAL_DECIDED;
    ev.approval_decided.request = c->request;
    ev.approval_decided.decision = c->decision;
    advance(g, 2000, 60000);
    emit(g, ev);
    c->step = c->decision == TURN_DECISION_APPROVED ? after_input(c) : S_RESULT;
    return;
  case S_PROGRESS:
    turn_buf_reset(&g->text);
    appendf(g, &g->text, PICK(&g->rng, progress_templates),
            c->progress_total - c->progress_left + 1, c->progress_total);
    ev.type = TURN_EV_TOOL_PROGRESS;
    ev.tool_progress.id = c->id;
    ev.tool_progress.tool = tool;
    ev.tool_progress.message = keep_buf(g, &g->text);
    advance(g, 100, 1500);
    emit(g, ev);
    if (--c->progress_left == 0) c->step = c->tool->kind == K_UI ? S_WIDGET : S_RESULT;
    return;
  case S_WIDGET: {
    turn_buf_reset(&g->text);
    words(g, &g->text, rng_range(&g->rng, 2, 5));
    turn_str title = keep_buf(g, &g->text);
    ev.type = TURN_EV_WIDGET;
    ev.widget.id = c->id;
    ev.widget.title = title;
    ev.widget.html = make_html(g, title, rng_range(&g->rng, 300, 6000));
    emit(g, ev);
    turn_block b;
    memset(&b, 0, sizeof b);
    b.type = TURN_BLOCK_WIDGET;
    b.widget.id = ev.widget.id;
    b.widget.title = ev.widget.title;
    b.widget.html = ev.widget.html;
    add_block(g, b);
    c->step = S_RESULT;
    return;
  }
  case S_RESULT:
    call_result(g, c);
    c->step = S_DONE;
    return;
  case S_DONE:
    return;
  }
}

/* One to three calls of distinct tools (so each approval names one call), their
 * events interleaved, with a text delta now and then between them. Returns false
 * when the turn was cancelled in the middle. */
static bool tool_batch(struct gen *g, bool may_cancel) {
  struct call calls[3];
  uint32_t x = rng_below(&g->rng, 100);
  size_t n = x < 65 ? 1 : x < 90 ? 2 : 3;
  for (size_t i = 0; i < n; i++) {
    const struct tool *t = pick_tool(&g->rng);
    for (size_t j = 0; j < i; j++)
      if (calls[j].tool == t) {
        t = pick_tool(&g->rng);
        j = (size_t)-1; /* check the new pick against all again */
      }
    call_init(g, &calls[i], t);
  }
  flush_text(g);
  size_t open = n;
  while (open > 0 && g->rv == TURN_OK) {
    if (may_cancel && rng_permille(&g->rng, 80)) {
      for (size_t i = 0; i < n; i++)
        call_abandoned(g, &calls[i]);
      return false;
    }
    /* Mostly the oldest open call goes on; sometimes another one does. */
    size_t i = 0;
    while (calls[i].step == S_DONE)
      i++;
    if (rng_permille(&g->rng, 350)) {
      size_t j = rng_below(&g->rng, (uint32_t)n);
      if (calls[j].step != S_DONE) i = j;
    }
    call_step(g, &calls[i]);
    if (calls[i].step == S_DONE) open--;
    if (rng_permille(&g->rng, 40)) emit_delta(g, TURN_EV_TEXT);
    if (rng_permille(&g->rng, 4)) emit_throttled(g);
  }
  flush_text(g);
  return true;
}

static void user_block(struct gen *g) {
  turn_buf_reset(&g->text);
  words(g, &g->text, rng_range(&g->rng, 3, 40));
  append(g, &g->text, "?", 1);
  turn_block b;
  memset(&b, 0, sizeof b);
  b.type = TURN_BLOCK_USER;
  b.text.text = (turn_str){g->text.data, g->text.len};
  add_block(g, b);
}

static void gen_turn(struct gen *g) {
  char id[32];
  int n = snprintf(id, sizeof id, "t-%012llx",
                   (unsigned long long)(rng_next(&g->rng) & 0xffffffffffffULL));
  turn_event ev;
  memset(&ev, 0, sizeof ev);
  g->seq = 0;
  ev.type = TURN_EV_TURN;
  ev.turn.turn = keep(g, id, (size_t)n);
  ev.turn.session = g->session;
  advance(g, 5000, 600000);
  emit(g, ev);
  user_block(g);

  /* How the turn ends: mostly end_turn; some are cancelled in a tool call, some
   * fail with an error event, a few hit a limit. */
  uint32_t fate = rng_below(&g->rng, 1000);
  bool may_cancel = fate < 15;
  bool fails = fate >= 15 && fate < 20;
  turn_stop_reason stop = fate < 25   ? TURN_STOP_END_TURN
                          : fate < 35 ? TURN_STOP_MAX_TOKENS
                          : fate < 40 ? TURN_STOP_LIMIT_TURNS
                                      : TURN_STOP_END_TURN;
  uint32_t rounds = rng_range(&g->rng, 1, 4);
  bool cancelled = false;
  for (uint32_t r = 0; r < rounds && !cancelled && g->rv == TURN_OK; r++) {
    if (rng_permille(&g->rng, r == 0 ? 550 : 300)) {
      for (uint32_t i = rng_range(&g->rng, 2, 24); i > 0; i--)
        emit_delta(g, TURN_EV_REASONING);
      flush_text(g);
    }
    for (uint32_t i = rng_range(&g->rng, 4, 64); i > 0; i--)
      emit_delta(g, TURN_EV_TEXT);
    if (r + 1 < rounds) cancelled = !tool_batch(g, may_cancel);
    if (rng_permille(&g->rng, 20)) emit_notice(g);
    if (rng_permille(&g->rng, 5)) emit_throttled(g);
  }
  flush_text(g);
  if (fails) {
    const char *msg = PICK(&g->rng, error_messages);
    memset(&ev, 0, sizeof ev);
    ev.type = TURN_EV_ERROR;
    ev.error.message = keep(g, msg, strlen(msg));
    emit(g, ev);
    stop = TURN_STOP_ERROR;
  }
  if (cancelled) stop = TURN_STOP_CANCELLED;
  memset(&ev, 0, sizeof ev);
  ev.type = TURN_EV_END;
  ev.end.stop_reason = stop;
  emit(g, ev);
  g->st->n_turns++;
}

int stream_gen_build(struct stream_gen *st, size_t target_bytes, uint64_t seed) {
  memset(st, 0, sizeof *st);
  turn_arena_init(&st->arena, NULL);
  turn_buf_init(&st->ndjson, SIZE_MAX, NULL);
  turn_buf_init(&st->history, SIZE_MAX, NULL);

  struct gen g;
  memset(&g, 0, sizeof g);
  g.st = st;
  g.rng.s = seed;
  g.now_ms = (uint64_t)START_S * 1000;
  turn_buf_init(&g.line, SIZE_MAX, NULL);
  turn_buf_init(&g.text, SIZE_MAX, NULL);
  turn_buf_init(&g.json, SIZE_MAX, NULL);
  turn_buf_init(&g.reply, SIZE_MAX, NULL);
  turn_buf_init(&g.thought, SIZE_MAX, NULL);
  /* Reserving up front keeps 200 MB of doubling copies out of the build time. */
  if (turn_buf_reserve(&st->ndjson, target_bytes + (1u << 20)) != TURN_OK ||
      turn_buf_reserve(&st->history, target_bytes + (1u << 20)) != TURN_OK)
    set_rv(&g, TURN_E_NOMEM);

  while (st->ndjson.len < target_bytes && g.rv == TURN_OK) {
    uint32_t turns = rng_range(&g.rng, 1, 8); /* turns in this session */
    doc_begin(&g, turns);
    for (uint32_t i = 0; i < turns && g.rv == TURN_OK; i++)
      gen_turn(&g);
    doc_end(&g);
  }

  turn_buf_fini(&g.line);
  turn_buf_fini(&g.text);
  turn_buf_fini(&g.json);
  turn_buf_fini(&g.reply);
  turn_buf_fini(&g.thought);
  if (g.rv != TURN_OK) stream_gen_free(st);
  return g.rv;
}

void stream_gen_free(struct stream_gen *st) {
  free(st->events);
  free(st->docs);
  free(st->blocks);
  turn_buf_fini(&st->ndjson);
  turn_buf_fini(&st->history);
  turn_arena_fini(&st->arena);
  memset(st, 0, sizeof *st);
}
