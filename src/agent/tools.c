/* The tools a model may call (see tools.h). */
#include "tools.h"

#include "tools_demo.h"
#include "turn/turn.h"

#include <stdlib.h>
#include <string.h>

void toolset_init(struct toolset *ts) {
  memset(ts, 0, sizeof *ts);
}

static void def_fini(struct tool_def *d) {
  free(d->name);
  free(d->description);
  free(d->effect);
  free(d->input_schema);
  json_decref(d->schema);
}

void toolset_fini(struct toolset *ts) {
  for (size_t i = 0; i < ts->n; i++)
    def_fini(&ts->defs[i]);
  free(ts->defs);
  memset(ts, 0, sizeof *ts);
}

int toolset_add(struct toolset *ts, const char *name, const char *description,
                const char *input_schema, int tier, const char *effect,
                enum tool_kind kind, size_t shell_index) {
  if (toolset_find(ts, name) != NULL) return -1;
  struct tool_def *grown = turn_grow(ts->defs, ts->n, &ts->cap, sizeof *grown, 8);
  if (grown == NULL) return -1;
  ts->defs = grown;
  struct tool_def *d = &ts->defs[ts->n];
  memset(d, 0, sizeof *d);
  d->name = strdup(name);
  d->description = strdup(description);
  d->effect = strdup(effect);
  d->schema = json_loads(input_schema, 0, NULL);
  d->input_schema = d->schema != NULL ? json_dumps(d->schema, JSON_COMPACT) : NULL;
  d->tier = tier;
  d->kind = kind;
  d->shell_index = shell_index;
  if (d->name == NULL || d->description == NULL || d->effect == NULL ||
      !json_is_object(d->schema) || d->input_schema == NULL) {
    def_fini(d);
    return -1;
  }
  ts->n++;
  return 0;
}

int toolset_add_demo(struct toolset *ts) {
  size_t n;
  const struct demo_tool *demo = demo_tools(&n);
  for (size_t i = 0; i < n; i++)
    if (toolset_add(ts, demo[i].name, demo[i].description, demo[i].input_schema,
                    demo[i].tier, demo[i].effect, TOOL_DEMO, 0) != 0)
      return -1;
  return 0;
}

const struct tool_def *toolset_find(const struct toolset *ts, const char *name) {
  for (size_t i = 0; i < ts->n; i++)
    if (strcmp(ts->defs[i].name, name) == 0) return &ts->defs[i];
  return NULL;
}
