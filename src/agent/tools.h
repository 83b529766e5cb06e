/* The tools a turn's model may call: the demo tools and the owner's (from a
 * tools file), each with what the model is told (name, description, input
 * schema) and what turnd needs (tier, effect, how it runs). The agent core
 * checks a call's input against the schema before anything runs or is asked;
 * an owner's tool is run by the shell. No I/O. */
#ifndef TURND_AGENT_TOOLS_H
#define TURND_AGENT_TOOLS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum tool_kind {
  TOOL_DEMO,    /* simulated by the agent core (tools_demo.h) */
  TOOL_EXTERNAL /* run by the shell; the core asks with AGENT_RUN_TOOL */
};

struct tool_def {
  char *name, *description, *effect;
  char *input_schema; /* JSON Schema as compact JSON text */
  json_t *schema;     /* the same, parsed once */
  int tier;           /* 0-2, or TURN_TIER_NULL */
  enum tool_kind kind;
  size_t shell_index; /* TOOL_EXTERNAL: the shell's own number for it */
};

struct toolset {
  struct tool_def *defs; /* owned */
  size_t n, cap;
};

void toolset_init(struct toolset *ts);
void toolset_fini(struct toolset *ts);
/* Adds a tool (copies the strings). Returns 0, or -1 when the name is taken,
 * the schema is not a JSON object, or memory ran out. */
int toolset_add(struct toolset *ts, const char *name, const char *description,
                const char *input_schema, int tier, const char *effect,
                enum tool_kind kind, size_t shell_index);
/* Adds every demo tool. Returns 0 or -1 as toolset_add. */
int toolset_add_demo(struct toolset *ts);
/* The tool of that name, or NULL. */
const struct tool_def *toolset_find(const struct toolset *ts, const char *name);

#endif
