/* Reading the tools file (see tools_config.h). The whole file is checked before
 * anything is kept: each tool is built into a local struct and moved into the
 * result only once every tool passed, so on error the caller's struct is as it
 * was. Messages are assembled from the path, the index, a checked name, field
 * names and strerror(); no other byte of the file reaches them. */
#define _XOPEN_SOURCE 700 /* realpath */

#include "tools_config.h"

#include "agent/schema.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What one load is doing, for its error messages. */
struct load {
  const char *path; /* the file, as the caller named it */
  char *err;        /* the caller's buffer, err[0..cap) */
  size_t cap;
  long index;       /* the tool being checked, or -1 before the list */
  const char *name; /* its name once checked (borrowed from the JSON), or NULL */
  char *folder;     /* the file's folder, absolute (owned) */
};

/* Writes "tools file PATH: tools[I] ("NAME"): FIELD: message" into l->err and
 * returns -1, so a check can `return fail(...)`. field may be NULL. */
static int fail(struct load *l, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct load *l, const char *field, const char *fmt, ...) {
  if (l->cap == 0) return -1;
  int used = snprintf(l->err, l->cap, "tools file %s: ", l->path);
  size_t at = used < 0 ? 0 : (size_t)used;
  if (at < l->cap && l->index >= 0) {
    used = l->name != NULL ? snprintf(l->err + at, l->cap - at,
                                      "tools[%ld] (\"%s\"): ", l->index, l->name)
                           : snprintf(l->err + at, l->cap - at, "tools[%ld]: ", l->index);
    at += used < 0 ? 0 : (size_t)used;
  }
  if (at < l->cap && field != NULL) {
    used = snprintf(l->err + at, l->cap - at, "%s: ", field);
    at += used < 0 ? 0 : (size_t)used;
  }
  if (at < l->cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->err + at, l->cap - at, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static int out_of_memory(struct load *l) {
  return fail(l, NULL, "out of memory");
}

/* True for [a-zA-Z0-9_-]{1,max}: a tool's name, and the shape of a key that may
 * be quoted back in an error (anything else could be a secret or a terminal
 * escape). */
static bool plain_word(const char *s, size_t max) {
  size_t n = 0;
  for (; s[n] != '\0'; n++) {
    char ch = s[n];
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
    if (!ok || n >= max) return false;
  }
  return n > 0;
}

/* Refuses any key of obj that is not in allowed (NULL-terminated). */
static int only_keys(struct load *l, json_t *obj, const char *const *allowed) {
  const char *key;
  json_t *value;
  json_object_foreach(obj, key, value) {
    (void)value;
    bool known = false;
    for (size_t i = 0; allowed[i] != NULL && !known; i++)
      known = strcmp(key, allowed[i]) == 0;
    if (known) continue;
    if (plain_word(key, TOOLS_CONFIG_NAME_MAX))
      return fail(l, NULL, "unknown field \"%s\"", key);
    return fail(l, NULL, "an unknown field (its name is not printable)");
  }
  return 0;
}

/* a + "/" + b, owned; NULL when out of memory. */
static char *join_path(const char *a, const char *b) {
  size_t a_len = strlen(a), b_len = strlen(b);
  bool slash = a_len > 0 && a[a_len - 1] == '/';
  char *p = malloc(a_len + !slash + b_len + 1);
  if (p == NULL) return NULL;
  memcpy(p, a, a_len);
  if (!slash) p[a_len] = '/';
  memcpy(p + a_len + !slash, b, b_len + 1);
  return p;
}

/* The absolute folder of path (its part up to the last '/', or "."), owned, or
 * NULL with errno set. */
static char *folder_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (slash == NULL) return realpath(".", NULL);
  if (slash == path) return realpath("/", NULL);
  size_t len = (size_t)(slash - path);
  char *dir = malloc(len + 1);
  if (dir == NULL) return NULL;
  memcpy(dir, path, len);
  dir[len] = '\0';
  char *abs = realpath(dir, NULL);
  int saved = errno;
  free(dir);
  errno = saved;
  return abs;
}

static void tool_free(struct tool_config *t) {
  free(t->name);
  free(t->description);
  free(t->input_schema);
  free(t->effect);
  if (t->argv != NULL) {
    for (size_t i = 0; t->argv[i] != NULL; i++)
      free(t->argv[i]);
    free(t->argv);
  }
  free(t->cwd);
  memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------ the fields */

static int get_name(struct load *l, json_t *j, struct tool_config *t,
                    const struct tool_config *earlier, size_t n_earlier) {
  json_t *v = json_object_get(j, "name");
  if (v == NULL) return fail(l, "name", "is missing");
  const char *s = json_string_value(v);
  if (s == NULL || !plain_word(s, TOOLS_CONFIG_NAME_MAX))
    return fail(l, "name", "must be 1 to 64 of a-z, A-Z, 0-9, _ and -");
  /* The protocol gives render_ui calls a meaning of their own (their html goes
   * out in a widget event, not in tool_input or the approval), which a program
   * of the owner's would not honour. */
  if (strcmp(s, "render_ui") == 0)
    return fail(l, "name", "render_ui is the protocol's widget tool; choose another");
  l->name = s; /* checked: from here on errors may say which tool */
  for (size_t i = 0; i < n_earlier; i++)
    if (strcmp(earlier[i].name, s) == 0)
      return fail(l, "name", "tools[%zu] has the same name", i);
  if ((t->name = strdup(s)) == NULL) return out_of_memory(l);
  return 0;
}

/* A non-empty string field into *out (owned); fallback when missing, or an
 * error when fallback is NULL. */
static int get_text(struct load *l, json_t *j, const char *field, const char *fallback,
                    char **out) {
  json_t *v = json_object_get(j, field);
  if (v == NULL && fallback == NULL) return fail(l, field, "is missing");
  const char *s = v != NULL ? json_string_value(v) : fallback;
  if (s == NULL || s[0] == '\0') return fail(l, field, "must be a non-empty string");
  if ((*out = strdup(s)) == NULL) return out_of_memory(l);
  return 0;
}

static int get_schema(struct load *l, json_t *j, struct tool_config *t) {
  json_t *v = json_object_get(j, "input_schema");
  if (v == NULL) return fail(l, "input_schema", "is missing");
  if (!json_is_object(v)) return fail(l, "input_schema", "must be an object");
  char why[200];
  if (schema_check(v, why, sizeof why) != 0) return fail(l, "input_schema", "%s", why);
  /* The model APIs refuse a tool whose input is not an object schema, and they
   * would refuse it on every call, long after start-up. */
  const char *type = json_string_value(json_object_get(v, "type"));
  if (type == NULL || strcmp(type, "object") != 0)
    return fail(l, "input_schema",
                "must have \"type\": \"object\" at its root (a tool's input is an "
                "object of named arguments)");
  if ((t->input_schema = json_dumps(v, JSON_COMPACT)) == NULL) return out_of_memory(l);
  return 0;
}

static int get_tier(struct load *l, json_t *j, struct tool_config *t) {
  json_t *v = json_object_get(j, "tier");
  if (v == NULL) return fail(l, "tier", "is missing (0, 1 or 2)");
  /* Not null either, though an event may say so: only a tier-2 call is put to
   * the owner, so a tool of no known tier would act unasked. */
  json_int_t tier = json_is_integer(v) ? json_integer_value(v) : -1;
  if (tier < 0 || tier > 2) return fail(l, "tier", "must be 0, 1 or 2");
  t->tier = (int)tier;
  return 0;
}

/* cwd: absolute and resolved, so that HOME and argv[0] never depend on where
 * turnd itself was started. */
static int get_cwd(struct load *l, json_t *j, struct tool_config *t) {
  json_t *v = json_object_get(j, "cwd");
  char *joined = NULL;
  const char *dir = l->folder;
  if (v != NULL) {
    const char *s = json_string_value(v);
    if (s == NULL || s[0] == '\0') return fail(l, "cwd", "must be a non-empty string");
    if (s[0] != '/') {
      if ((joined = join_path(l->folder, s)) == NULL) return out_of_memory(l);
      s = joined;
    }
    dir = s;
  }
  t->cwd = realpath(dir, NULL);
  int saved = errno;
  free(joined);
  if (t->cwd == NULL) {
    if (saved == ENOMEM) return out_of_memory(l);
    return fail(l, "cwd", "cannot be resolved: %s", strerror(saved));
  }
  struct stat st;
  if (stat(t->cwd, &st) != 0) return fail(l, "cwd", "%s", strerror(errno));
  if (!S_ISDIR(st.st_mode)) return fail(l, "cwd", "is not a directory");
  if (access(t->cwd, X_OK) != 0)
    return fail(l, "cwd", "cannot be entered: %s", strerror(errno));
  return 0;
}

/* exec, after cwd: argv[0] is resolved against it and must be runnable now. */
static int get_exec(struct load *l, json_t *j, struct tool_config *t) {
  json_t *v = json_object_get(j, "exec");
  if (v == NULL) return fail(l, "exec", "is missing");
  size_t n = json_array_size(v);
  if (!json_is_array(v) || n == 0)
    return fail(l, "exec", "must be a non-empty array of non-empty strings");
  for (size_t i = 0; i < n; i++) {
    const char *s = json_string_value(json_array_get(v, i));
    if (s == NULL || s[0] == '\0')
      return fail(l, "exec", "element %zu must be a non-empty string", i);
  }
  if ((t->argv = calloc(n + 1, sizeof *t->argv)) == NULL) return out_of_memory(l);
  for (size_t i = 0; i < n; i++) {
    const char *s = json_string_value(json_array_get(v, i));
    t->argv[i] = i == 0 && s[0] != '/' ? join_path(t->cwd, s) : strdup(s);
    if (t->argv[i] == NULL) return out_of_memory(l);
  }
  struct stat st;
  if (stat(t->argv[0], &st) != 0)
    return fail(l, "exec[0]", "%s (an absolute path, or one relative to cwd)",
                strerror(errno));
  if (!S_ISREG(st.st_mode)) return fail(l, "exec[0]", "is not a regular file");
  if (access(t->argv[0], X_OK) != 0)
    return fail(l, "exec[0]", "is not executable: %s", strerror(errno));
  return 0;
}

static int get_timeout(struct load *l, json_t *j, struct tool_config *t) {
  json_t *v = json_object_get(j, "timeout_s");
  json_int_t s = TOOLS_CONFIG_TIMEOUT_S;
  if (v != NULL) s = json_is_integer(v) ? json_integer_value(v) : 0;
  if (s < 1 || s > TOOLS_CONFIG_TIMEOUT_MAX)
    return fail(l, "timeout_s", "must be an integer from 1 to %d",
                TOOLS_CONFIG_TIMEOUT_MAX);
  t->timeout_ms = (uint32_t)s * 1000u;
  return 0;
}

static const char *const tool_keys[] = {"name", "description", "input_schema",
                                        "tier", "effect",      "exec",
                                        "cwd",  "timeout_s",   NULL};

/* One tool into *t; on error *t holds what was filled so far (tool_free it). */
static int load_tool(struct load *l, json_t *j, struct tool_config *t,
                     const struct tool_config *earlier, size_t n_earlier) {
  if (!json_is_object(j)) return fail(l, NULL, "must be an object");
  if (get_name(l, j, t, earlier, n_earlier) != 0 || only_keys(l, j, tool_keys) != 0 ||
      get_text(l, j, "description", NULL, &t->description) != 0 ||
      get_schema(l, j, t) != 0 || get_tier(l, j, t) != 0 ||
      get_text(l, j, "effect", "read", &t->effect) != 0 || get_cwd(l, j, t) != 0 ||
      get_exec(l, j, t) != 0 || get_timeout(l, j, t) != 0)
    return -1;
  return 0;
}

/* ------------------------------------------------------------- the file */

/* The file's bytes (owned, NUL-terminated) and *len, or NULL after fail(). */
static char *read_file(struct load *l, size_t *len) {
  FILE *f = fopen(l->path, "rb");
  if (f == NULL) {
    fail(l, NULL, "cannot be opened: %s", strerror(errno));
    return NULL;
  }
  char *text = malloc(TOOLS_CONFIG_FILE_MAX + 2);
  if (text == NULL) {
    fclose(f);
    out_of_memory(l);
    return NULL;
  }
  *len = fread(text, 1, TOOLS_CONFIG_FILE_MAX + 1, f);
  int read_errno = ferror(f) ? errno : 0;
  fclose(f);
  if (read_errno != 0 || *len > TOOLS_CONFIG_FILE_MAX) {
    if (read_errno != 0)
      fail(l, NULL, "cannot be read: %s", strerror(read_errno));
    else
      fail(l, NULL, "is over 1 MiB");
    free(text);
    return NULL;
  }
  text[*len] = '\0';
  return text;
}

static int load_all(struct load *l, struct tools_config *out) {
  size_t len;
  char *text = read_file(l, &len);
  if (text == NULL) return -1;
  json_error_t jerr;
  /* JSON_REJECT_DUPLICATES: of two "exec" keys, which one runs must not be a
   * guess. jerr.text is not used: it can quote the file. */
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
  free(text);
  if (root == NULL && json_error_code(&jerr) == json_error_numeric_overflow)
    return fail(l, NULL,
                "has a number too big to read exactly, an integer past 64 bits or a "
                "real past 1e308 (line %d, column %d)",
                jerr.line, jerr.column);
  if (root == NULL && json_error_code(&jerr) == json_error_duplicate_key)
    return fail(l, NULL, "repeats a key in an object (line %d, column %d)", jerr.line,
                jerr.column);
  if (root == NULL)
    return fail(l, NULL, "is not valid JSON (line %d, column %d)", jerr.line,
                jerr.column);
  static const char *const root_keys[] = {"tools", NULL};
  json_t *list = json_object_get(root, "tools");
  int rv = 0;
  if (!json_is_object(root))
    rv = fail(l, NULL, "must be a JSON object {\"tools\": [...]}");
  else if (only_keys(l, root, root_keys) != 0)
    rv = -1;
  else if (!json_is_array(list))
    rv = fail(l, "tools", "must be an array");
  size_t n = rv == 0 ? json_array_size(list) : 0;
  struct tool_config *tools = n > 0 ? calloc(n, sizeof *tools) : NULL;
  if (n > 0 && tools == NULL) rv = out_of_memory(l);
  for (size_t i = 0; rv == 0 && i < n; i++) {
    l->index = (long)i;
    l->name = NULL;
    rv = load_tool(l, json_array_get(list, i), &tools[i], tools, i);
  }
  json_decref(root); /* l->name pointed into it: no message is written after */
  l->name = NULL;
  if (rv != 0) {
    for (size_t i = 0; i < n; i++)
      tool_free(&tools[i]);
    free(tools);
    return -1;
  }
  out->tools = tools;
  out->n = n;
  return 0;
}

int tools_config_load(struct tools_config *c, const char *path, char *err, size_t cap) {
  struct load l = {.path = path, .err = err, .cap = cap, .index = -1};
  if (cap > 0) err[0] = '\0';
  if ((l.folder = folder_of(path)) == NULL)
    return fail(&l, NULL, "its folder cannot be resolved: %s", strerror(errno));
  struct tools_config loaded = {NULL, 0};
  int rv = load_all(&l, &loaded);
  free(l.folder);
  if (rv == 0) *c = loaded;
  return rv;
}

void tools_config_free(struct tools_config *c) {
  for (size_t i = 0; i < c->n; i++)
    tool_free(&c->tools[i]);
  free(c->tools);
  c->tools = NULL;
  c->n = 0;
}

const struct tool_config *tools_config_find(const struct tools_config *c,
                                            const char *name) {
  for (size_t i = 0; i < c->n; i++)
    if (strcmp(c->tools[i].name, name) == 0) return &c->tools[i];
  return NULL;
}
