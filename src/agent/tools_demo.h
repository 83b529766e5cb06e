/* The demo tools (--tools demo), all simulated: what they are (tier, effect) and
 * what a finished call says. */
#ifndef TURND_AGENT_TOOLS_DEMO_H
#define TURND_AGENT_TOOLS_DEMO_H

#include "turn/turn.h"

#include <stddef.h>
#include <stdint.h>

struct demo_tool {
  const char *name;
  int tier;                 /* 0-2 */
  const char *effect;       /* "read", "physical", "ui" */
  const char *description;  /* for the model */
  const char *input_schema; /* JSON Schema of its input, for the model */
};

/* The tool of that name, or NULL. */
const struct demo_tool *demo_tool_find(const char *name);
/* All of them (*n of them). */
const struct demo_tool *demo_tools(size_t *n);

/* count_slowly's input: how many steps and how far apart (defaults 3 and 200 ms,
 * at most 100 steps of at most 10 s). */
void demo_count_params(const char *input_json, uint32_t *to, uint32_t *interval_ms);

/* render_ui's input: title and html, copied into arena. Returns 0, 1 when either
 * is missing or not a string (no widget for an invalid input), or -1 when out of
 * memory. */
int demo_widget_params(const char *input_json, turn_arena *arena, turn_str *title,
                       turn_str *html);

/* The input as it travels in tool_input: render_ui's without its html. Returns
 * text in arena, or NULL when out of memory. */
const char *demo_visible_input(const char *name, const char *input_json,
                               turn_arena *arena);

/* A finished call of a one-shot tool (clock, lamp_set, fail_tool, unknown): its
 * status and a summary in arena. */
void demo_tool_finish(const char *name, const char *input_json, uint64_t now_ms,
                      turn_arena *arena, turn_status *status, turn_str *summary);

#endif
