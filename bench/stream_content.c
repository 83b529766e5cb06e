/* stream_content: what the events say. Words, mostly plain English with some
 * non-ASCII and a few needing escapes; tool inputs as compact JSON of 100 B to 24 KB;
 * widget HTML. Deltas are most of the events, but these inputs and widgets are most
 * of the bytes. */
#include "stream_content.h"

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

/* One word: mostly plain English, some non-ASCII, a few that need escaping. */
static const char *pick_word(struct rng *r) {
  uint32_t x = rng_below(r, 1000);
  if (x < 800) return PICK(r, plain_words);
  if (x < 920) return PICK(r, unicode_words);
  if (x < 970) return PICK(r, escape_words);
  return PICK(r, markdown_words);
}

void stream_content_words(struct gen *g, turn_buf *b, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    if (i > 0) append(g, b, " ", 1);
    append_c(g, b, pick_word(&g->rng));
  }
}

/* Fills b with words until it holds at least len bytes. */
void stream_content_words_until(struct gen *g, turn_buf *b, size_t len) {
  while (b->len < len && g->rv == TURN_OK) {
    stream_content_words(g, b, rng_range(&g->rng, 4, 14));
    append_c(g, b, rng_permille(&g->rng, 150) ? ".\n" : ". ");
  }
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
  stream_content_words(g, &g->text, rng_range(&g->rng, lo, hi));
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
  stream_content_words_until(g, &g->text, room - room / 16);
  j_str(g, g->text.data, g->text.len);
}

/* Constant members go in as compact JSON text; the rest varies per call. */
static void tool_input_json(struct gen *g, enum tool_kind kind, size_t target) {
  turn_buf_reset(&g->json);
  j_open(g, '{');
  switch (kind) {
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

turn_input stream_content_input(struct gen *g, enum tool_kind kind) {
  turn_input in = {{NULL, 0}, {NULL, 0}, false};
  tool_input_json(g, kind, input_target(g));
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

/* ------------------------------------------------------------ widget HTML */

turn_str stream_content_html(struct gen *g, turn_str title, size_t target) {
  turn_buf *b = &g->text;
  turn_buf_reset(b);
  append_c(g, b, "<div class=\"card\" data-theme=\"light\">\n<h2>");
  append(g, b, title.p, title.len);
  append_c(g, b, "</h2>\n<table class=\"grid\">\n<tr><th>Name</th><th>Wert</th></tr>\n");
  while (b->len + 120 < target && g->rv == TURN_OK) {
    append_c(g, b, "<tr><td>");
    stream_content_words(g, b, rng_range(&g->rng, 1, 4));
    appendf(g, b, "</td><td style=\"text-align:right\">%u,%02u €</td></tr>\n",
            rng_below(&g->rng, 5000), rng_below(&g->rng, 100));
  }
  append_c(g, b,
           "</table>\n<p class=\"note\">Stand: 08:05 — “Daten” &amp; 'Quellen'</p>\n"
           "<script>document.querySelector('.card').dataset.ready = \"1\";</script>\n"
           "</div>");
  return keep_buf(g, b);
}
