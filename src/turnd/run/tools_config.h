/* --tools FILE: the tools the owner configures, each a program turnd runs (see
 * tool_proc.h). Read once at start-up and checked in full, so that a typo or a
 * missing program stops turnd there rather than failing a model's call later.
 * Error texts name the file, the tool and the field, never a value from the
 * file: it may hold arguments the owner would not want in a log. */
#ifndef TURND_TOOLS_CONFIG_H
#define TURND_TOOLS_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define TOOLS_CONFIG_FILE_MAX    (1u << 20) /* bytes of a tools file */
#define TOOLS_CONFIG_NAME_MAX    64         /* bytes of a tool's name */
#define TOOLS_CONFIG_TIMEOUT_S   30         /* timeout_s when it is not given */
#define TOOLS_CONFIG_TIMEOUT_MAX 3600       /* the largest timeout_s */

/* One tool. Every pointer is owned by the tools_config that holds it. */
struct tool_config {
  char *name;         /* [a-zA-Z0-9_-]{1,64}, unique in the file */
  char *description;  /* for the model; not empty */
  char *input_schema; /* compact JSON, an object that schema_check() accepts,
                         with "type": "object" at its root */
  char *effect;       /* not empty; "read" when the file does not say */
  int tier;           /* 0, 1 or 2 */
  /* NULL-terminated, at least one element. argv[0] is an absolute path to an
   * executable regular file (a relative exec[0] was resolved against cwd when
   * loaded); the other elements are the file's exec[1..], as they are. */
  char **argv;
  char *cwd;           /* absolute, an existing directory when loaded */
  uint32_t timeout_ms; /* 1 s to 1 h, a whole number of seconds */
};

/* A value the caller embeds. Invariant: tools == NULL iff n == 0. */
struct tools_config {
  struct tool_config *tools; /* owned, n of them, in the file's order */
  size_t n;
};

/* Reads and checks the tools file at path. Borrows path. The file is
 *   {"tools": [{"name", "description", "input_schema", "tier", "effect"?,
 *               "exec", "cwd"?, "timeout_s"?}, ...]}
 * at most TOOLS_CONFIG_FILE_MAX bytes of JSON; any other key, at either level, is
 * refused. "tier" must be present (0, 1 or 2: a tool's tier decides whether the
 * owner is asked, so it is never guessed, and null is refused); "effect" defaults to
 * "read"; "cwd" defaults to the file's own folder, and a relative one is taken from
 * there; "exec" is [argv0, args...] with argv0 absolute or relative to cwd, which must be
 * an executable regular file now; "timeout_s" is an integer from 1 to 3600, default 30.
 * An empty "tools" list is allowed.
 *
 * Returns 0 with *c filled (free it with tools_config_free), or -1 with *c
 * untouched and a reason in err[0..cap) (NUL-terminated when cap > 0) such as
 *   "tools file /etc/turnd/tools.json: tools[2] (\"weather\"): timeout_s: must be
 *    an integer from 1 to 3600"
 * The tool is named only once its name has been checked; an unknown key is
 * quoted only when it looks like a key ([a-zA-Z0-9_-], at most 64 bytes). */
int tools_config_load(struct tools_config *c, const char *path, char *err, size_t cap);

/* Frees what tools_config_load filled and zeroes *c. Accepts a zeroed struct,
 * and may be called twice. */
void tools_config_free(struct tools_config *c);

/* The tool of that name, or NULL. Borrows name; the result is valid until
 * tools_config_free(c). */
const struct tool_config *tools_config_find(const struct tools_config *c,
                                            const char *name);

#endif
