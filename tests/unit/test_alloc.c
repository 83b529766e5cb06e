/* Allocation failure (STYLE.md 4.6 and 11): each libturn scenario is re-run with
 * the N-th allocation failing, for every N from 1 until a run succeeds. Every run
 * must end in TURN_E_NOMEM (or NULL from a _new) or in success, and once all is
 * freed nothing may be left allocated. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support.h"
#include "turn/turn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RUNS 100000 /* a scenario that never succeeds is a bug, not a hang */

/* A growable string for building inputs. */
struct text {
  char *p;
  size_t len, cap;
};

static void text_put(struct text *t, const char *p, size_t n) {
  if (t->cap - t->len < n + 1) {
    size_t cap = t->cap == 0 ? 1024 : t->cap;
    while (cap - t->len < n + 1)
      cap *= 2;
    char *grown = realloc(t->p, cap);
    assert_non_null(grown);
    t->p = grown;
    t->cap = cap;
  }
  memcpy(t->p + t->len, p, n);
  t->len += n;
  t->p[t->len] = '\0';
}

static void text_puts(struct text *t, const char *s) {
  text_put(t, s, strlen(s));
}

static void text_printf(struct text *t, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  assert_true(n >= 0 && (size_t)n < sizeof tmp);
  text_put(t, tmp, (size_t)n);
}

/* ---------------------------------------------------------------- reader */

/* What the reader delivered: one checksum-like line per callback. */
struct seen {
  turn_reader *r;
  struct text log;
  turn_buf enc;
  size_t n;
};

static int on_event(void *ctx, const turn_event *ev, const turn_error *err) {
  struct seen *s = ctx;
  char head[96];
  int n;
  s->n++;
  if (ev != NULL) {
    turn_buf_reset(&s->enc);
    assert_int_equal(turn_event_encode(ev, &s->enc), TURN_OK);
    n = snprintf(head, sizeof head, "%llu ", (unsigned long long)turn_reader_line(s->r));
    text_put(&s->log, head, (size_t)n);
    text_put(&s->log, s->enc.data, s->enc.len);
    text_puts(&s->log, "\n");
  } else {
    n = snprintf(head, sizeof head, "%s %llu\n", turn_errname(err->code),
                 (unsigned long long)err->line);
    text_put(&s->log, head, (size_t)n);
  }
  return 0;
}

/* A stream with long lines (several arena blocks, a growing line buffer), bad
 * lines, blank lines and a partial last line. */
static void reader_stream(struct text *t) {
  text_puts(t,
            "{\"v\":1,\"seq\":0,\"type\":\"turn\",\"turn\":\"t-1\",\"session\":\"s\"}\n");
  for (int i = 1; i <= 6; i++) {
    text_printf(t, "{\"v\":1,\"seq\":%d,\"type\":\"text\",\"delta\":\"", i);
    for (int k = 0; k < 1500 * i; k++)
      text_puts(t, k % 3 == 0 ? "\\n\xc3\xa9" : "abcdefgh");
    text_puts(t, "\"}\r\n\n");
    text_puts(t, "not json\n");
  }
  text_puts(t, "{\"v\":1,\"seq\":7,\"type\":\"tool_input\",\"id\":\"u1\",\"tool\":\"t\","
               "\"input\":{\"a\":[1,2,{\"b\":\"c\"}]},\"truncated\":false}\n");
  text_puts(t,
            "{\"v\":1,\"seq\":8,\"type\":\"throttled\",\"delay_seconds\":"
            "1.00000000000000000000000000000000000000000000000000000000000000000001}\n");
  text_puts(t, "{\"v\":1,\"seq\":9,\"type\":\"end\",\"stop_reason\":\"end_turn\"}\n");
  text_puts(t, "{\"v\":1,\"seq\":0,");
}

/* Feeds the stream in chunks of `chunk` bytes. Returns TURN_OK or TURN_E_NOMEM. */
static int reader_run(struct seen *s, const struct text *data, size_t chunk) {
  int rv = TURN_OK;
  for (size_t at = 0; at < data->len && rv == TURN_OK; at += chunk) {
    size_t n = data->len - at < chunk ? data->len - at : chunk;
    rv = turn_reader_feed(s->r, data->p + at, n, on_event, s);
  }
  if (rv == TURN_OK) rv = turn_reader_finish(s->r, on_event, s);
  return rv;
}

static void test_alloc_reader_split_stream(void **state) {
  (void)state;
  struct text data = {0};
  reader_stream(&data);
  static const size_t chunks[] = {997, 4096, 65536};
  for (size_t ci = 0; ci < sizeof chunks / sizeof chunks[0]; ci++) {
    /* The reference run, with malloc. */
    struct seen ref;
    memset(&ref, 0, sizeof ref);
    turn_buf_init(&ref.enc, 1u << 22, NULL);
    ref.r = turn_reader_new(TURN_READER_DEFAULT_MAX_LINE, NULL);
    assert_non_null(ref.r);
    assert_int_equal(reader_run(&ref, &data, chunks[ci]), TURN_OK);
    turn_reader_free(ref.r);
    assert_true(ref.n > 10);

    bool done = false;
    unsigned long n;
    for (n = 1; n < MAX_RUNS && !done; n++) {
      struct support_failmem fm;
      support_failmem_init(&fm, n);
      struct seen s;
      memset(&s, 0, sizeof s);
      turn_buf_init(&s.enc, 1u << 22, NULL);
      s.r = turn_reader_new(TURN_READER_DEFAULT_MAX_LINE, &fm.mem);
      if (s.r != NULL) {
        int rv = reader_run(&s, &data, chunks[ci]);
        if (rv == TURN_OK) {
          done = true;
          assert_true(fm.calls < n); /* no allocation was refused */
          assert_int_equal(s.log.len, ref.log.len);
          assert_memory_equal(s.log.p, ref.log.p, ref.log.len);
        } else {
          assert_int_equal(rv, TURN_E_NOMEM);
          /* Whatever was delivered before the failure is what malloc gave. */
          assert_true(s.log.len <= ref.log.len);
          if (s.log.len > 0) assert_memory_equal(s.log.p, ref.log.p, s.log.len);
          /* Sticky: no more callbacks, the same code. */
          size_t calls = s.n;
          assert_int_equal(turn_reader_feed(s.r, "\n", 1, on_event, &s), TURN_E_NOMEM);
          assert_int_equal(turn_reader_finish(s.r, on_event, &s), TURN_E_NOMEM);
          assert_int_equal(s.n, calls);
        }
      }
      turn_reader_free(s.r);
      assert_int_equal(fm.live, 0);
      turn_buf_fini(&s.enc);
      free(s.log.p);
    }
    assert_true(done);
    assert_true(n > 3); /* the scenario did allocate */
    turn_buf_fini(&ref.enc);
    free(ref.log.p);
  }
  free(data.p);
}

static int count_event(void *ctx, const turn_event *ev, const turn_error *err) {
  (void)ev;
  (void)err;
  (*(size_t *)ctx)++;
  return 0;
}

/* After TURN_E_NOMEM the reader returns it on every later call and calls no
 * callback. */
static void test_alloc_reader_nomem_is_sticky(void **state) {
  (void)state;
  static const char line[] = "{\"v\":1,\"seq\":0,\"type\":\"text\",\"delta\":\"a\"}\n";
  for (int where = 0; where < 2; where++) {
    struct support_failmem fm;
    support_failmem_init(&fm, 2); /* the reader itself, then nothing */
    turn_reader *r = turn_reader_new(1000, &fm.mem);
    assert_non_null(r);
    size_t calls = 0;
    /* 0: a split line needs the line buffer; 1: a whole line needs the arena. */
    size_t first = where == 0 ? 10 : sizeof line - 1;
    assert_int_equal(turn_reader_feed(r, line, first, count_event, &calls), TURN_E_NOMEM);
    assert_int_equal(calls, 0);
    fm.fail_at = 0; /* memory is back, but the reader must stay failed */
    assert_int_equal(turn_reader_feed(r, line, sizeof line - 1, count_event, &calls),
                     TURN_E_NOMEM);
    assert_int_equal(turn_reader_feed(r, "\n", 1, count_event, &calls), TURN_E_NOMEM);
    assert_int_equal(turn_reader_finish(r, count_event, &calls), TURN_E_NOMEM);
    assert_int_equal(turn_reader_feed(r, line, sizeof line - 1, count_event, &calls),
                     TURN_E_NOMEM);
    assert_int_equal(calls, 0);
    turn_reader_free(r);
    assert_int_equal(fm.live, 0);
  }
}

/* Sticky means every call (STYLE.md 3: "the object returns it on every call until
 * reset"), a feed of zero bytes too: a caller that feeds whatever its read gave,
 * an empty read included, must not see TURN_OK from a failed reader. */
static void test_alloc_reader_nomem_sticky_on_empty_feed(void **state) {
  (void)state;
  static const char line[] = "{\"v\":1,\"seq\":0,\"type\":\"text\",\"delta\":\"a\"}\n";
  struct support_failmem fm;
  support_failmem_init(&fm, 2);
  turn_reader *r = turn_reader_new(1000, &fm.mem);
  assert_non_null(r);
  size_t calls = 0;
  assert_int_equal(turn_reader_feed(r, line, 10, count_event, &calls), TURN_E_NOMEM);
  fm.fail_at = 0;
  assert_int_equal(turn_reader_feed(r, "", 0, count_event, &calls), TURN_E_NOMEM);
  assert_int_equal(turn_reader_feed(r, NULL, 0, count_event, &calls), TURN_E_NOMEM);
  assert_int_equal(calls, 0);
  turn_reader_free(r);
  assert_int_equal(fm.live, 0);
}

/* ---------------------------------------------------------------- encode */

/* Encoding appends to a buffer that already holds something; when growing it
 * fails, the buffer keeps exactly what it held. */
static void test_alloc_event_encode(void **state) {
  (void)state;
  struct text delta = {0};
  for (int i = 0; i < 3000; i++)
    text_puts(&delta, i % 2 ? "\"quoted\"\n" : "\xe6\x97\xa5\x01");
  turn_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = TURN_EV_TEXT;
  ev.seq = 12;
  ev.text.delta.p = delta.p;
  ev.text.delta.len = delta.len;

  turn_buf ref;
  turn_buf_init(&ref, SIZE_MAX, NULL);
  assert_int_equal(turn_buf_append(&ref, "prev\n", 5), TURN_OK);
  assert_int_equal(turn_event_encode(&ev, &ref), TURN_OK);

  bool done = false;
  unsigned long n;
  for (n = 1; n < MAX_RUNS && !done; n++) {
    struct support_failmem fm;
    support_failmem_init(&fm, n);
    turn_buf b;
    turn_buf_init(&b, SIZE_MAX, &fm.mem);
    int rv = turn_buf_append(&b, "prev\n", 5);
    if (rv == TURN_OK) {
      rv = turn_event_encode(&ev, &b);
      if (rv == TURN_OK) {
        done = true;
        assert_true(fm.calls < n);
        assert_int_equal(b.len, ref.len);
        assert_memory_equal(b.data, ref.data, ref.len);
      } else {
        assert_int_equal(rv, TURN_E_NOMEM);
        assert_int_equal(b.len, 5);
        assert_memory_equal(b.data, "prev\n", 5);
      }
    } else {
      assert_int_equal(rv, TURN_E_NOMEM);
    }
    turn_buf_fini(&b);
    assert_int_equal(fm.live, 0);
  }
  assert_true(done);
  assert_true(n > 3); /* the buffer grew several times */
  turn_buf_fini(&ref);
  free(delta.p);
}

/* ----------------------------------------------------------------- order */

#define N_CALLS 300

struct call_names {
  char id[N_CALLS][80];
  char tool[N_CALLS][24];
  char req[N_CALLS][24];
};

static turn_event mk(turn_event_type t, uint64_t seq) {
  turn_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = t;
  ev.seq = seq;
  return ev;
}

/* A turn with N_CALLS calls, a third of them tier 2 with an approval, opened in
 * groups so many are open at once: the call table, both maps and the arena grow. */
static size_t order_stream(turn_event *evs, struct call_names *nm) {
  size_t n = 0;
  uint64_t seq = 0;
  turn_event ev = mk(TURN_EV_TURN, seq++);
  ev.turn.turn = TURN_STR("t-1");
  ev.turn.session = TURN_STR("s");
  evs[n++] = ev;
  for (int g = 0; g < N_CALLS; g += 50) {
    for (int i = g; i < g + 50; i++) {
      snprintf(nm->id[i], sizeof nm->id[i], "call-%04d-%s", i,
               "padding-padding-padding-padding-padding-padding-padding");
      /* Approvals name a tool, not a call: each tier-2 call gets a tool of its own. */
      if (i % 3 == 0)
        snprintf(nm->tool[i], sizeof nm->tool[i], "lamp_%d", i);
      else
        snprintf(nm->tool[i], sizeof nm->tool[i], "tool_%d", i % 7);
      snprintf(nm->req[i], sizeof nm->req[i], "req-%d", i);
      ev = mk(TURN_EV_TOOL_USE, seq++);
      ev.tool_use.id = turn_str_c(nm->id[i]);
      ev.tool_use.tool = turn_str_c(nm->tool[i]);
      ev.tool_use.tier = i % 3 == 0 ? 2 : 0;
      evs[n++] = ev;
    }
    for (int i = g; i < g + 50; i++) {
      ev = mk(TURN_EV_TOOL_INPUT, seq++);
      ev.tool_input.id = turn_str_c(nm->id[i]);
      ev.tool_input.tool = turn_str_c(nm->tool[i]);
      ev.tool_input.input.json = TURN_STR("{}");
      evs[n++] = ev;
      if (i % 3 == 0) {
        ev = mk(TURN_EV_APPROVAL, seq++);
        ev.approval.request = turn_str_c(nm->req[i]);
        ev.approval.tool = turn_str_c(nm->tool[i]);
        ev.approval.tier = 2;
        ev.approval.effect = TURN_STR("physical");
        ev.approval.input.json = TURN_STR("{}");
        evs[n++] = ev;
      }
    }
    for (int i = g; i < g + 50; i++) {
      if (i % 3 == 0) {
        ev = mk(TURN_EV_APPROVAL_DECIDED, seq++);
        ev.approval_decided.request = turn_str_c(nm->req[i]);
        ev.approval_decided.decision = TURN_DECISION_APPROVED;
        evs[n++] = ev;
      }
      ev = mk(TURN_EV_TOOL_RESULT, seq++);
      ev.tool_result.id = turn_str_c(nm->id[i]);
      ev.tool_result.tool = turn_str_c(nm->tool[i]);
      ev.tool_result.status = TURN_STATUS_OK;
      ev.tool_result.summary = TURN_STR("ok");
      ev.tool_result.approval = i % 3 == 0 ? TURN_APPROVAL_APPROVED : TURN_APPROVAL_NULL;
      evs[n++] = ev;
    }
  }
  ev = mk(TURN_EV_END, seq++);
  ev.end.stop_reason = TURN_STOP_END_TURN;
  evs[n++] = ev;
  return n;
}

static void test_alloc_order_many_calls(void **state) {
  (void)state;
  size_t cap = 1 + N_CALLS * 5 + 1;
  turn_event *evs = calloc(cap, sizeof *evs);
  struct call_names *nm = calloc(1, sizeof *nm);
  assert_non_null(evs);
  assert_non_null(nm);
  size_t n = order_stream(evs, nm);
  assert_true(n <= cap);

  bool done = false;
  unsigned long fail_at;
  for (fail_at = 1; fail_at < MAX_RUNS && !done; fail_at++) {
    struct support_failmem fm;
    support_failmem_init(&fm, fail_at);
    turn_order *o = turn_order_new(&fm.mem);
    if (o != NULL) {
      /* Two turns: the second reuses what the first grew. */
      int rv = TURN_OK;
      for (int round = 0; round < 2 && rv == TURN_OK; round++) {
        for (size_t i = 0; i < n && rv == TURN_OK; i++) {
          turn_error err;
          rv = turn_order_step(o, &evs[i], &err);
          if (rv != TURN_OK && rv != TURN_E_NOMEM) {
            print_error("fail_at %lu: event %zu refused with %s\n", fail_at, i,
                        turn_errname(rv));
            fail();
          }
        }
      }
      if (rv == TURN_OK) {
        assert_int_equal(turn_order_finish(o, NULL), TURN_OK);
        assert_true(fm.calls < fail_at);
        done = true;
      }
    }
    turn_order_free(o);
    assert_int_equal(fm.live, 0);
  }
  assert_true(done);
  assert_true(fail_at > 8); /* tables and arena did grow */
  free(evs);
  free(nm);
}

/* ----------------------------------------------------------------- input */

static void test_alloc_input_from_json_big(void **state) {
  (void)state;
  struct text json = {0};
  text_puts(&json, "{ \"items\" : [\n");
  for (int i = 0; i < 400; i++)
    text_printf(&json,
                "%s  {\"name\": \"item %d \\u00e9\\n\xe6\x97\xa5\", \"n\": %d.5e1, "
                "\"ok\": true, \"none\": null}\n",
                i > 0 ? "," : "", i, i);
  text_puts(&json, "] , \"tail\" : \"\\ud83d\\ude00\" }");

  /* The reference, with malloc. */
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  turn_input want;
  turn_error err;
  assert_int_equal(turn_input_from_json(&want, &arena, json.p, json.len, &err), TURN_OK);
  assert_true(want.truncated);
  char *want_preview = malloc(want.preview.len + 1);
  assert_non_null(want_preview);
  memcpy(want_preview, want.preview.p, want.preview.len);
  size_t want_len = want.preview.len;
  turn_arena_fini(&arena);

  bool done = false;
  unsigned long n;
  for (n = 1; n < MAX_RUNS && !done; n++) {
    struct support_failmem fm;
    support_failmem_init(&fm, n);
    turn_arena_init(&arena, &fm.mem);
    turn_input out;
    memset(&out, 0xA5, sizeof out);
    turn_input untouched = out;
    int rv = turn_input_from_json(&out, &arena, json.p, json.len, &err);
    if (rv == TURN_OK) {
      done = true;
      assert_true(fm.calls < n);
      assert_true(out.truncated);
      assert_int_equal(out.preview.len, want_len);
      assert_memory_equal(out.preview.p, want_preview, want_len);
    } else {
      assert_int_equal(rv, TURN_E_NOMEM);
      assert_memory_equal(&out, &untouched, sizeof out); /* outputs untouched */
    }
    turn_arena_fini(&arena);
    assert_int_equal(fm.live, 0);
  }
  assert_true(done);
  assert_true(n > 2);
  free(want_preview);
  free(json.p);
}

/* --------------------------------------------------------------- history */

struct blocks {
  size_t n, bad;
  struct text log;
  turn_buf enc;
};

static int on_block(void *ctx, size_t index, const turn_block *b, const turn_error *err) {
  struct blocks *s = ctx;
  assert_int_equal(index, s->n);
  s->n++;
  if (b == NULL) {
    s->bad++;
    text_printf(&s->log, "%zu %s\n", index, turn_errname(err->code));
    return 0;
  }
  turn_buf_reset(&s->enc);
  assert_int_equal(turn_block_encode(b, &s->enc), TURN_OK);
  text_put(&s->log, s->enc.data, s->enc.len);
  text_puts(&s->log, "\n");
  return 0;
}

static void history_doc(struct text *t) {
  text_puts(t, "{\"session\": {\"id\": \"s-1\", \"title\": \"x\"}, \"blocks\": [");
  for (int i = 0; i < 12; i++) {
    if (i > 0) text_puts(t, ",");
    text_puts(t, "{\"type\":\"user\",\"text\":\"hello "
                 "\\u00e9\",\"at\":\"2026-10-01T08:00:00Z\"},");
    text_puts(t, "{\"type\":\"assistant\",\"text\":\"");
    for (int k = 0; k < 400 * (i + 1); k++)
      text_puts(t, k % 5 == 0 ? "\\\"q\\\"" : "word ");
    text_puts(t, "\",\"at\":null},");
    text_printf(t,
                "{\"type\":\"tool\",\"id\":\"u%d\",\"tool\":\"lamp_set\",\"tier\":2,"
                "\"input\":{\"name\":\"desk\",\"n\":[1,2,3]},\"truncated\":false,"
                "\"status\":\"ok\",\"summary\":null,\"approval\":\"approved\","
                "\"duration_ms\":%d,\"at\":\"2026-10-01T08:00:01.5+02:00\"},",
                i, i * 10);
    text_printf(t,
                "{\"type\":\"widget\",\"id\":\"w%d\",\"title\":\"t\",\"html\":\"<b>"
                "</b>\",\"at\":null},",
                i);
    text_puts(t, "{\"type\":\"nope\"},");
    text_puts(t, "{\"type\":\"notice\",\"text\":\"n\",\"at\":null}");
  }
  text_puts(t, "]}");
}

static void test_alloc_history_parse(void **state) {
  (void)state;
  struct text doc = {0};
  history_doc(&doc);

  struct blocks ref;
  memset(&ref, 0, sizeof ref);
  turn_buf_init(&ref.enc, 1u << 22, NULL);
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  turn_error err;
  assert_int_equal(turn_history_parse(doc.p, doc.len, &arena, on_block, &ref, &err),
                   TURN_OK);
  turn_arena_fini(&arena);
  assert_int_equal(ref.n, 12 * 6);
  assert_int_equal(ref.bad, 12);

  bool done = false;
  unsigned long n;
  for (n = 1; n < MAX_RUNS && !done; n++) {
    struct support_failmem fm;
    support_failmem_init(&fm, n);
    turn_arena_init(&arena, &fm.mem);
    struct blocks s;
    memset(&s, 0, sizeof s);
    turn_buf_init(&s.enc, 1u << 22, NULL);
    int rv = turn_history_parse(doc.p, doc.len, &arena, on_block, &s, &err);
    if (rv == TURN_OK) {
      done = true;
      assert_true(fm.calls < n);
      assert_int_equal(s.log.len, ref.log.len);
      assert_memory_equal(s.log.p, ref.log.p, ref.log.len);
    } else {
      assert_int_equal(rv, TURN_E_NOMEM);
      assert_int_equal(err.code, TURN_E_NOMEM);
      /* The blocks delivered before the failure are the right ones. */
      assert_true(s.log.len <= ref.log.len);
      if (s.log.len > 0) assert_memory_equal(s.log.p, ref.log.p, s.log.len);
    }
    turn_arena_fini(&arena);
    assert_int_equal(fm.live, 0);
    turn_buf_fini(&s.enc);
    free(s.log.p);
  }
  assert_true(done);
  assert_true(n > 2);
  turn_buf_fini(&ref.enc);
  free(ref.log.p);
  free(doc.p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_alloc_reader_split_stream),
      cmocka_unit_test(test_alloc_reader_nomem_is_sticky),
      cmocka_unit_test(test_alloc_reader_nomem_sticky_on_empty_feed),
      cmocka_unit_test(test_alloc_event_encode),
      cmocka_unit_test(test_alloc_order_many_calls),
      cmocka_unit_test(test_alloc_input_from_json_big),
      cmocka_unit_test(test_alloc_history_parse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
