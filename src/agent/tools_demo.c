/* The demo tools: simulated, so the demo and the tests need nothing outside
 * turnd. Inputs are the model's JSON; whatever is missing or ill-typed takes a
 * default instead of failing the call. */
#include "tools_demo.h"

#include "json_short.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const struct demo_tool tools[] = {
    {"clock", 0, "read", "The current date and time (UTC).",
     "{\"type\":\"object\",\"properties\":{}}"},
    {"lamp_set", 2, "physical", "Turns a lamp on or off (simulated).",
     "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\","
     "\"description\":\"which lamp, e.g. desk\"},\"on\":{\"type\":\"boolean\"}},"
     "\"required\":[\"name\",\"on\"]}"},
    {"count_slowly", 0, "read", "Counts from 1 to `to`, reporting each step.",
     "{\"type\":\"object\",\"properties\":{\"to\":{\"type\":\"integer\","
     "\"minimum\":1,\"maximum\":100},\"interval_ms\":{\"type\":\"integer\","
     "\"minimum\":0,\"maximum\":10000}}}"},
    {"fail_tool", 0, "read", "Always fails; for trying out how failures look.",
     "{\"type\":\"object\",\"properties\":{}}"},
    {"render_ui", 0, "ui", "Shows the owner a small HTML widget.",
     "{\"type\":\"object\",\"properties\":{\"title\":{\"type\":\"string\"},"
     "\"html\":{\"type\":\"string\"}},\"required\":[\"title\",\"html\"]}"},
};

const struct demo_tool *demo_tool_find(const char *name) {
  for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
    if (strcmp(tools[i].name, name) == 0) return &tools[i];
  return NULL;
}

const struct demo_tool *demo_tools(size_t *n) {
  *n = sizeof tools / sizeof tools[0];
  return tools;
}

static turn_str arena_str(turn_arena *arena, const char *s, size_t n) {
  char *p = turn_arena_alloc(arena, n + 1);
  if (p == NULL) return (turn_str){NULL, 0};
  memcpy(p, s, n);
  p[n] = '\0';
  return (turn_str){p, n};
}

static json_t *load(const char *input_json) {
  json_error_t e;
  json_t *j = json_loads(input_json, 0, &e);
  return json_is_object(j) ? j : (json_decref(j), json_object());
}

void demo_count_params(const char *input_json, uint32_t *to, uint32_t *interval_ms) {
  json_t *in = load(input_json);
  json_t *t = json_object_get(in, "to");
  json_t *ms = json_object_get(in, "interval_ms");
  *to = json_is_integer(t) && json_integer_value(t) >= 1 && json_integer_value(t) <= 100
            ? (uint32_t)json_integer_value(t)
            : 3;
  *interval_ms = json_is_integer(ms) && json_integer_value(ms) >= 0 &&
                         json_integer_value(ms) <= 10000
                     ? (uint32_t)json_integer_value(ms)
                     : 200;
  json_decref(in);
}

int demo_widget_params(const char *input_json, turn_arena *arena, turn_str *title,
                       turn_str *html) {
  json_t *in = load(input_json);
  const char *t = json_string_value(json_object_get(in, "title"));
  const char *h = json_string_value(json_object_get(in, "html"));
  bool valid = t != NULL && h != NULL;
  *title = arena_str(arena, t != NULL ? t : "", t != NULL ? strlen(t) : 0);
  *html = arena_str(arena, h != NULL ? h : "", h != NULL ? strlen(h) : 0);
  json_decref(in);
  if (title->p == NULL || html->p == NULL) return -1;
  return valid ? 0 : 1;
}

const char *demo_visible_input(const char *name, const char *input_json,
                               turn_arena *arena) {
  if (strcmp(name, "render_ui") != 0) return input_json;
  json_t *in = load(input_json);
  json_object_del(in, "html"); /* the HTML travels in the widget event only */
  char *text = json_dumps_shortest(in, JSON_COMPACT);
  json_decref(in);
  if (text == NULL) return NULL;
  turn_str s = arena_str(arena, text, strlen(text));
  free(text);
  return s.p;
}

void demo_tool_finish(const char *name, const char *input_json, uint64_t now_ms,
                      turn_arena *arena, turn_status *status, turn_str *summary) {
  char buf[160];
  *status = TURN_STATUS_OK;
  if (strcmp(name, "clock") == 0) {
    time_t secs = (time_t)(now_ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(buf, sizeof buf, "it is %H:%M UTC on %Y-%m-%d", &tm);
  } else if (strcmp(name, "lamp_set") == 0) {
    json_t *in = load(input_json);
    const char *lamp = json_string_value(json_object_get(in, "name"));
    bool on = json_is_true(json_object_get(in, "on"));
    snprintf(buf, sizeof buf, "%.60s lamp is %s (simulated)", lamp != NULL ? lamp : "the",
             on ? "on" : "off");
    json_decref(in);
  } else if (strcmp(name, "fail_tool") == 0) {
    *status = TURN_STATUS_ERROR;
    snprintf(buf, sizeof buf, "fail_tool always fails");
  } else {
    *status = TURN_STATUS_ERROR;
    snprintf(buf, sizeof buf, "no such tool: %.60s", name);
  }
  *summary = arena_str(arena, buf, strlen(buf));
}
