/* The tools file (src/turnd/run/tools_config.c): every check both ways, defaults,
 * paths resolved against the file's folder and cwd, and the two promises of its
 * errors: they name the file, the tool and the field, and they never carry a
 * value from the file. Each test writes its file into a fresh folder that holds
 * an executable tool, a file that is not executable and a subfolder. */
#define _XOPEN_SOURCE 700 /* realpath */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "turnd/run/tools_config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fixture {
  char dir[64];        /* the folder, as mkdtemp made it */
  char real[PATH_MAX]; /* ... and resolved */
  char file[128];      /* dir/tools.json */
  char err[512];
};

static void write_file(const char *path, const char *text, size_t len, mode_t mode) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(text, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
  assert_int_equal(chmod(path, mode), 0);
}

static void in_dir(char *out, size_t cap, const struct fixture *fx, const char *name) {
  snprintf(out, cap, "%s/%s", fx->dir, name);
}

static int setup(void **state) {
  struct fixture *fx = calloc(1, sizeof *fx);
  if (fx == NULL) return -1;
  snprintf(fx->dir, sizeof fx->dir, "/tmp/tools_config_XXXXXX");
  if (mkdtemp(fx->dir) == NULL || realpath(fx->dir, fx->real) == NULL) return -1;
  snprintf(fx->file, sizeof fx->file, "%s/tools.json", fx->dir);
  char path[256];
  in_dir(path, sizeof path, fx, "tool.sh");
  write_file(path, "#!/bin/sh\n", 10, 0755);
  in_dir(path, sizeof path, fx, "plain.txt");
  write_file(path, "not a program\n", 14, 0644);
  in_dir(path, sizeof path, fx, "sub");
  if (mkdir(path, 0755) != 0) return -1;
  in_dir(path, sizeof path, fx, "sub/inner.sh");
  write_file(path, "#!/bin/sh\n", 10, 0755);
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  struct fixture *fx = *state;
  static const char *const files[] = {"tools.json", "tool.sh", "plain.txt",
                                      "sub/inner.sh"};
  char path[256];
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    in_dir(path, sizeof path, fx, files[i]);
    unlink(path);
  }
  in_dir(path, sizeof path, fx, "sub");
  rmdir(path);
  rmdir(fx->dir);
  free(fx);
  return 0;
}

/* Writes text as the tools file and loads it. */
static int load(struct fixture *fx, struct tools_config *c, const char *text) {
  write_file(fx->file, text, strlen(text), 0644);
  memset(fx->err, 0, sizeof fx->err);
  return tools_config_load(c, fx->file, fx->err, sizeof fx->err);
}

static void expect_ok(struct fixture *fx, struct tools_config *c, const char *text) {
  if (load(fx, c, text) != 0) fail_msg("refused: %s\nfile: %s", fx->err, text);
}

/* Refused with a message holding each of the given parts (NULL-terminated),
 * the file's path first; *c stays untouched. */
static void expect_refused(struct fixture *fx, const char *text, ...) {
  struct tools_config c = {(struct tool_config *)&c, 42}; /* a sentinel */
  if (load(fx, &c, text) != -1) fail_msg("accepted: %s", text);
  assert_ptr_equal(c.tools, (struct tool_config *)&c);
  assert_int_equal(c.n, 42);
  char prefix[200];
  snprintf(prefix, sizeof prefix, "tools file %s: ", fx->file);
  if (strncmp(fx->err, prefix, strlen(prefix)) != 0)
    fail_msg("no file in \"%s\"", fx->err);
  va_list ap;
  va_start(ap, text);
  for (const char *part; (part = va_arg(ap, const char *)) != NULL;)
    if (strstr(fx->err, part) == NULL)
      fail_msg("\"%s\" not in \"%s\"\nfile: %s", part, fx->err, text);
  va_end(ap);
}

/* One tool's JSON with `fields` in place of the usual ones it names. */
#define SCHEMA      "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}"
#define NAME        "\"name\": \"weather\""
#define DESC        "\"description\": \"The weather in a city\""
#define INPUT       "\"input_schema\": " SCHEMA
#define TIER        "\"tier\": 0"
#define EXEC        "\"exec\": [\"tool.sh\", \"--city\"]"
#define TOOLS(list) "{\"tools\": [" list "]}" /* list: TOOL(...) ", " TOOL(...) */
#define TOOL(...)   "{" __VA_ARGS__ "}"
#define BASIC       NAME ", " DESC ", " INPUT ", " TIER ", " EXEC

/* ------------------------------------------------------------ accepted */

static void test_tools_config_minimal_tool_and_defaults(void **state) {
  struct fixture *fx = *state;
  struct tools_config c;
  expect_ok(fx, &c, TOOLS(TOOL(BASIC)));
  assert_int_equal(c.n, 1);
  const struct tool_config *t = &c.tools[0];
  assert_string_equal(t->name, "weather");
  assert_string_equal(t->description, "The weather in a city");
  assert_string_equal(t->input_schema, SCHEMA);
  assert_string_equal(t->effect, "read");
  assert_int_equal(t->tier, 0);
  assert_string_equal(t->cwd, fx->real); /* the file's own folder */
  char argv0[PATH_MAX + 16];
  snprintf(argv0, sizeof argv0, "%s/tool.sh", fx->real);
  assert_string_equal(t->argv[0], argv0);
  assert_string_equal(t->argv[1], "--city");
  assert_null(t->argv[2]);
  assert_int_equal(t->timeout_ms, 30000);
  assert_ptr_equal(tools_config_find(&c, "weather"), t);
  assert_null(tools_config_find(&c, "other"));
  tools_config_free(&c);
  assert_null(c.tools);
  assert_int_equal(c.n, 0);
  tools_config_free(&c); /* twice is fine */
}

static void test_tools_config_every_field(void **state) {
  struct fixture *fx = *state;
  struct tools_config c;
  expect_ok(
      fx, &c,
      TOOLS(TOOL(BASIC) ", " TOOL(
          "\"name\": \"Lamp_set-2\", " DESC ", " INPUT ", \"tier\": 0, "
          "\"effect\": \"physical\", \"exec\": [\"inner.sh\"], "
          "\"cwd\": \"sub\", \"timeout_s\": 3600") ", " TOOL("\"name\": \"t2\", " DESC
                                                             ", " INPUT ", \"tier\": 2, "
                                                             "\"exec\": [\"/bin/true\"], "
                                                             "\"cwd\": \"/\", "
                                                             "\"timeout_s\": 1") ","
                                                                                 " " TOOL(
                                                                                     "\"n"
                                                                                     "ame"
                                                                                     "\":"
                                                                                     " \""
                                                                                     "t1"
                                                                                     "\","
                                                                                     " " DESC
                                                                                     ","
                                                                                     " " INPUT
                                                                                     ", "
                                                                                     "\"t"
                                                                                     "ier"
                                                                                     "\":"
                                                                                     " 1,"
                                                                                     " "
                                                                                     "\"e"
                                                                                     "xec"
                                                                                     "\":"
                                                                                     " ["
                                                                                     "\"."
                                                                                     "./"
                                                                                     "too"
                                                                                     "l."
                                                                                     "sh"
                                                                                     "\"]"
                                                                                     ", "
                                                                                     "\"c"
                                                                                     "wd"
                                                                                     "\":"
                                                                                     " \""
                                                                                     "sub"
                                                                                     "/"
                                                                                     "\"")));
  assert_int_equal(c.n, 4);
  char path[PATH_MAX + 32];
  const struct tool_config *lamp = &c.tools[1];
  assert_string_equal(lamp->name, "Lamp_set-2");
  assert_int_equal(lamp->tier, 0);
  assert_string_equal(lamp->effect, "physical");
  snprintf(path, sizeof path, "%s/sub", fx->real);
  assert_string_equal(lamp->cwd, path); /* relative to the file's folder */
  snprintf(path, sizeof path, "%s/sub/inner.sh", fx->real);
  assert_string_equal(lamp->argv[0], path); /* relative to cwd */
  assert_null(lamp->argv[1]);
  assert_int_equal(lamp->timeout_ms, 3600u * 1000u);
  assert_int_equal(c.tools[2].tier, 2);
  assert_string_equal(c.tools[2].cwd, "/");
  assert_string_equal(c.tools[2].argv[0], "/bin/true");
  assert_int_equal(c.tools[2].timeout_ms, 1000);
  assert_int_equal(c.tools[3].tier, 1);
  snprintf(path, sizeof path, "%s/sub/../tool.sh", fx->real);
  assert_string_equal(c.tools[3].argv[0], path);
  tools_config_free(&c);
}

static void test_tools_config_empty_list(void **state) {
  struct fixture *fx = *state;
  struct tools_config c;
  expect_ok(fx, &c, "{\"tools\": []}");
  assert_int_equal(c.n, 0);
  assert_null(c.tools);
  tools_config_free(&c);
}

/* "tools.json" with no folder in it: the folder is the current one. */
static void test_tools_config_relative_path(void **state) {
  struct fixture *fx = *state;
  char here[PATH_MAX];
  assert_non_null(getcwd(here, sizeof here));
  write_file(fx->file, TOOLS(TOOL(BASIC)), strlen(TOOLS(TOOL(BASIC))), 0644);
  assert_int_equal(chdir(fx->dir), 0);
  struct tools_config c;
  int rv = tools_config_load(&c, "tools.json", fx->err, sizeof fx->err);
  assert_int_equal(chdir(here), 0);
  assert_int_equal(rv, 0);
  assert_string_equal(c.tools[0].cwd, fx->real);
  tools_config_free(&c);
}

/* A file of exactly 1 MiB is read (spaces after the JSON); one byte more is not. */
static void test_tools_config_size_limit(void **state) {
  struct fixture *fx = *state;
  size_t cap = TOOLS_CONFIG_FILE_MAX;
  char *text = malloc(cap + 2);
  assert_non_null(text);
  const char *json = TOOLS(TOOL(BASIC));
  memset(text, ' ', cap + 1);
  memcpy(text, json, strlen(json));
  text[cap] = '\0';
  struct tools_config c;
  expect_ok(fx, &c, text);
  tools_config_free(&c);
  text[cap] = ' ';
  text[cap + 1] = '\0';
  expect_refused(fx, text, "is over 1 MiB", NULL);
  free(text);
}

/* ------------------------------------------------------------- the file */

static void test_tools_config_file_refused(void **state) {
  struct fixture *fx = *state;
  struct tools_config c = {NULL, 0};
  char missing[128];
  in_dir(missing, sizeof missing, fx, "missing.json");
  assert_int_equal(tools_config_load(&c, missing, fx->err, sizeof fx->err), -1);
  assert_non_null(strstr(fx->err, missing));
  assert_non_null(strstr(fx->err, "cannot be opened: No such file or directory"));
  assert_int_equal(tools_config_load(&c, fx->dir, fx->err, sizeof fx->err), -1);
  assert_non_null(strstr(fx->err, "cannot be read"));
  char nowhere[128];
  in_dir(nowhere, sizeof nowhere, fx, "nowhere/tools.json");
  assert_int_equal(tools_config_load(&c, nowhere, fx->err, sizeof fx->err), -1);
  assert_non_null(strstr(fx->err, "its folder cannot be resolved"));
  assert_null(c.tools);

  expect_refused(fx, "", "is not valid JSON (line 1", NULL);
  expect_refused(fx, "{\"tools\": [}", "is not valid JSON (line 1, column", NULL);
  expect_refused(fx, "{\"tools\": [], \"tools\": []}",
                 "repeats a key in an object (line 1", NULL);
  /* Valid JSON that jansson cannot hold exactly says so, not "not valid". */
  expect_refused(fx, "{\"tools\": [{\"n\": 99999999999999999999}]}",
                 "has a number too big to read exactly", "(line 1, column", NULL);
  expect_refused(fx, "{\"tools\": [{\"n\": 1e400}]}",
                 "has a number too big to read exactly", NULL);
  expect_refused(fx, "[]", "must be a JSON object", NULL);
  expect_refused(fx, "{}", "tools: must be an array", NULL);
  expect_refused(fx, "{\"tools\": {}}", "tools: must be an array", NULL);
  expect_refused(fx, "{\"tools\": [], \"tool\": []}", "unknown field \"tool\"", NULL);
  expect_refused(fx, TOOLS(TOOL(BASIC) ", 3"), "tools[1]: must be an object", NULL);
}

/* Nothing of the file reaches a message but field names: not its bad JSON,
 * not a value, not a key that does not look like one. */
static void test_tools_config_errors_carry_no_values(void **state) {
  struct fixture *fx = *state;
  expect_refused(fx, "{\"tools\": [SECRET-TOKEN]}", "not valid JSON", NULL);
  assert_null(strstr(fx->err, "SECRET"));
  expect_refused(fx, TOOLS(TOOL(BASIC ", \"timeout_s\": \"SECRET-TOKEN\"")), "timeout_s",
                 NULL);
  assert_null(strstr(fx->err, "SECRET"));
  expect_refused(
      fx,
      TOOLS(TOOL(NAME ", " DESC ", " INPUT ", " TIER ", \"exec\": [\"SECRET-TOKEN\"]")),
      "exec[0]: No such file or directory", NULL);
  assert_null(strstr(fx->err, "SECRET"));
  expect_refused(fx, TOOLS(TOOL(BASIC ", \"cwd\": \"/SECRET-TOKEN\"")),
                 "cwd: cannot be resolved", NULL);
  assert_null(strstr(fx->err, "SECRET"));
  expect_refused(fx, TOOLS(TOOL(BASIC ", \"SECRET TOKEN\": 1")),
                 "tools[0] (\"weather\"): an unknown field (its name is not printable)",
                 NULL);
  assert_null(strstr(fx->err, "SECRET"));
  expect_refused(fx, TOOLS(TOOL("\"name\": \"SECRET TOKEN\"")), "tools[0]: name: must be",
                 NULL);
  assert_null(strstr(fx->err, "SECRET"));
}

/* -------------------------------------------------------------- fields */

static void test_tools_config_name(void **state) {
  struct fixture *fx = *state;
  struct tools_config c;
  static const char name64[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";
  assert_int_equal(strlen(name64), 64);
  char text[1024];
  snprintf(text, sizeof text,
           TOOLS(TOOL("\"name\": \"%s\", " DESC ", " INPUT ", " TIER ", " EXEC)), name64);
  expect_ok(fx, &c, text);
  assert_string_equal(c.tools[0].name, name64);
  tools_config_free(&c);
  snprintf(text, sizeof text,
           TOOLS(TOOL("\"name\": \"%sx\", " DESC ", " INPUT ", " TIER ", " EXEC)),
           name64);
  expect_refused(fx, text, "tools[0]: name: must be 1 to 64 of", NULL);

  expect_refused(fx, TOOLS(TOOL(DESC ", " INPUT ", " TIER ", " EXEC)),
                 "tools[0]: name: is missing", NULL);
  expect_refused(fx, TOOLS(TOOL("\"name\": \"\", " DESC)), "tools[0]: name: must be",
                 NULL);
  expect_refused(fx, TOOLS(TOOL("\"name\": 7, " DESC)), "tools[0]: name: must be", NULL);
  expect_refused(fx, TOOLS(TOOL("\"name\": \"a.b\", " DESC)), "tools[0]: name: must be",
                 NULL);
  expect_refused(fx, TOOLS(TOOL("\"name\": \"caf\\u00e9\", " DESC)),
                 "tools[0]: name: must be", NULL);
  expect_refused(fx, TOOLS(TOOL(BASIC) ", " TOOL(BASIC)),
                 "tools[1] (\"weather\"): name: tools[0] has the same name", NULL);
  /* The protocol's widget tool: its html would be kept from the approver. */
  expect_refused(fx, TOOLS(TOOL("\"name\": \"render_ui\", " DESC)),
                 "tools[0]: name: render_ui is the protocol's widget tool", NULL);
  /* Names differ by case: two tools. */
  expect_ok(fx, &c,
            TOOLS(TOOL(BASIC) ", " TOOL("\"name\": \"Weather\", " DESC ", " INPUT
                                        ", " TIER ", " EXEC)));
  assert_int_equal(c.n, 2);
  tools_config_free(&c);
}

static void test_tools_config_unknown_keys(void **state) {
  struct fixture *fx = *state;
  expect_refused(fx, TOOLS(TOOL(BASIC ", \"timeout\": 5")),
                 "tools[0] (\"weather\"): unknown field \"timeout\"", NULL);
  expect_refused(fx,
                 TOOLS(TOOL(BASIC) ", " TOOL("\"name\": \"other\", " DESC ", " INPUT
                                             ", " TIER ", " EXEC ", \"Tier\": 1")),
                 "tools[1] (\"other\"): unknown field \"Tier\"", NULL);
  expect_refused(fx,
                 TOOLS(TOOL("\"name\": \"x\", " DESC ", " INPUT ", " TIER ", " EXEC
                            ", \"exe\": []")),
                 "tools[0] (\"x\"): unknown field \"exe\"", NULL);
}

static void test_tools_config_description(void **state) {
  struct fixture *fx = *state;
  expect_refused(fx, TOOLS(TOOL(NAME ", " INPUT ", " TIER ", " EXEC)),
                 "tools[0] (\"weather\"): description: is missing", NULL);
  expect_refused(fx,
                 TOOLS(TOOL(NAME ", \"description\": \"\", " INPUT ", " TIER ", " EXEC)),
                 "description: must be a non-empty string", NULL);
  expect_refused(
      fx, TOOLS(TOOL(NAME ", \"description\": [\"x\"], " INPUT ", " TIER ", " EXEC)),
      "description: must be a non-empty string", NULL);
}

static void test_tools_config_input_schema(void **state) {
  struct fixture *fx = *state;
  struct tools_config c;
  expect_ok(fx, &c,
            TOOLS(TOOL(NAME ", " DESC ", \"input_schema\": {\"type\": \"object\"}, " TIER
                            ", " EXEC)));
  assert_string_equal(c.tools[0].input_schema, "{\"type\":\"object\"}");
  tools_config_free(&c);
  /* Kept compact, in the file's order. */
  expect_ok(fx, &c,
            TOOLS(TOOL(NAME ", " DESC ", \"input_schema\": { \"type\" : \"object\", "
                            "\"required\" : [ \"b\", \"a\" ] }, " TIER ", " EXEC)));
  assert_string_equal(c.tools[0].input_schema,
                      "{\"type\":\"object\",\"required\":[\"b\",\"a\"]}");
  tools_config_free(&c);

  expect_refused(fx, TOOLS(TOOL(NAME ", " DESC ", " TIER ", " EXEC)),
                 "input_schema: is missing", NULL);
  expect_refused(fx,
                 TOOLS(TOOL(NAME ", " DESC ", \"input_schema\": true, " TIER ", " EXEC)),
                 "input_schema: must be an object", NULL);
  expect_refused(
      fx,
      TOOLS(TOOL(NAME ", " DESC ", \"input_schema\": {\"type\": 5}, " TIER ", " EXEC)),
      "tools[0] (\"weather\"): input_schema: ", NULL);
  expect_refused(fx,
                 TOOLS(TOOL(NAME ", " DESC ", \"input_schema\": {\"properties\": {\"n\": "
                                 "{\"minimum\": \"1\"}}}, " TIER ", " EXEC)),
                 "input_schema: /properties/n/minimum: ", NULL);
  expect_refused(
      fx,
      TOOLS(TOOL(NAME ", " DESC ", \"input_schema\": {\"$ref\": \"#/x\"}, " TIER
                      ", " EXEC)),
      "input_schema: ", NULL);

  /* The model APIs take only an object schema for a tool's input: any other
   * root would fail every model call, so it fails at start-up instead. */
  static const char *const not_an_object_schema[] = {
      "{}",
      "{\"properties\": {\"city\": {\"type\": \"string\"}}}",
      "{\"type\": \"string\"}",
      "{\"type\": [\"object\", \"null\"]}",
      "{\"type\": \"array\", \"items\": {\"type\": \"object\"}}",
  };
  char file[512];
  for (size_t i = 0; i < sizeof not_an_object_schema / sizeof not_an_object_schema[0];
       i++) {
    snprintf(file, sizeof file,
             TOOLS(TOOL(NAME ", " DESC ", \"input_schema\": %s, " TIER ", " EXEC)),
             not_an_object_schema[i]);
    expect_refused(fx, file,
                   "tools[0] (\"weather\"): input_schema: must have \"type\": \"object\" "
                   "at its root",
                   NULL);
  }
}

static void test_tools_config_tier(void **state) {
  struct fixture *fx = *state;
  struct tools_config c;
  static const char *const good[] = {"0", "1", "2"};
  static const int want[] = {0, 1, 2};
  char text[1024];
  for (size_t i = 0; i < 3; i++) {
    snprintf(text, sizeof text,
             TOOLS(TOOL(NAME ", " DESC ", " INPUT ", \"tier\": %s, " EXEC)), good[i]);
    expect_ok(fx, &c, text);
    assert_int_equal(c.tools[0].tier, want[i]);
    tools_config_free(&c);
  }
  /* null too: a tool of no known tier could act without the owner being asked. */
  static const char *const bad[] = {"3", "-1", "\"1\"", "1.0", "true", "[]", "null"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(text, sizeof text,
             TOOLS(TOOL(NAME ", " DESC ", " INPUT ", \"tier\": %s, " EXEC)), bad[i]);
    expect_refused(fx, text, "tools[0] (\"weather\"): tier: must be 0, 1 or 2", NULL);
  }
  expect_refused(fx, TOOLS(TOOL(NAME ", " DESC ", " INPUT ", " EXEC)),
                 "tier: is missing (0, 1 or 2)", NULL);
}

static void test_tools_config_effect(void **state) {
  struct fixture *fx = *state;
  struct tools_config c;
  expect_ok(fx, &c, TOOLS(TOOL(BASIC ", \"effect\": \"ui\"")));
  assert_string_equal(c.tools[0].effect, "ui");
  tools_config_free(&c);
  expect_refused(fx, TOOLS(TOOL(BASIC ", \"effect\": \"\"")),
                 "effect: must be a non-empty string", NULL);
  expect_refused(fx, TOOLS(TOOL(BASIC ", \"effect\": null")),
                 "effect: must be a non-empty string", NULL);
}

static void test_tools_config_exec(void **state) {
  struct fixture *fx = *state;
  struct tools_config c;
  char abs_tool[PATH_MAX + 16], text[PATH_MAX + 512];
  snprintf(abs_tool, sizeof abs_tool, "%s/tool.sh", fx->real);
  snprintf(
      text, sizeof text,
      TOOLS(TOOL(NAME ", " DESC ", " INPUT ", " TIER ", \"exec\": [\"%s\", \"\\u00e9\", "
                      "\"a b\"], \"cwd\": \"/\"")),
      abs_tool);
  expect_ok(fx, &c, text);
  assert_string_equal(c.tools[0].argv[0], abs_tool); /* absolute: as it is */
  assert_string_equal(c.tools[0].argv[1], "\xc3\xa9");
  assert_string_equal(c.tools[0].argv[2], "a b");
  assert_null(c.tools[0].argv[3]);
  tools_config_free(&c);
  expect_ok(
      fx, &c,
      TOOLS(TOOL(NAME ", " DESC ", " INPUT ", " TIER ", \"exec\": [\"sub/inner.sh\"]")));
  tools_config_free(&c);

#define WITH_EXEC(e) TOOLS(TOOL(NAME ", " DESC ", " INPUT ", " TIER ", \"exec\": " e))
  expect_refused(fx, TOOLS(TOOL(NAME ", " DESC ", " INPUT ", " TIER)),
                 "tools[0] (\"weather\"): exec: is missing", NULL);
  expect_refused(fx, WITH_EXEC("[]"), "exec: must be a non-empty array", NULL);
  expect_refused(fx, WITH_EXEC("\"tool.sh\""), "exec: must be a non-empty array", NULL);
  expect_refused(fx, WITH_EXEC("[\"\"]"), "exec: element 0 must be a non-empty string",
                 NULL);
  expect_refused(fx, WITH_EXEC("[\"tool.sh\", 1]"),
                 "exec: element 1 must be a non-empty string", NULL);
  expect_refused(fx, WITH_EXEC("[\"tool.sh\", \"\"]"),
                 "exec: element 1 must be a non-empty string", NULL);
  expect_refused(fx, WITH_EXEC("[\"missing.sh\"]"),
                 "exec[0]: No such file or directory (an absolute path, or one relative "
                 "to cwd)",
                 NULL);
  expect_refused(fx, WITH_EXEC("[\"inner.sh\"]"), /* in sub/, not in cwd */
                 "exec[0]: No such file or directory", NULL);
  expect_refused(fx, WITH_EXEC("[\"sub\"]"), "exec[0]: is not a regular file", NULL);
  expect_refused(fx, WITH_EXEC("[\"plain.txt\"]"), "exec[0]: is not executable", NULL);
#undef WITH_EXEC
}

static void test_tools_config_cwd(void **state) {
  struct fixture *fx = *state;
  struct tools_config c;
  char text[PATH_MAX + 512];
  snprintf(text, sizeof text, TOOLS(TOOL(BASIC ", \"cwd\": \"%s/sub/..\"")), fx->dir);
  expect_ok(fx, &c, text);
  assert_string_equal(c.tools[0].cwd, fx->real); /* resolved */
  tools_config_free(&c);
  expect_refused(fx, TOOLS(TOOL(BASIC ", \"cwd\": \"nowhere\"")),
                 "tools[0] (\"weather\"): cwd: cannot be resolved: No such file", NULL);
  expect_refused(fx, TOOLS(TOOL(BASIC ", \"cwd\": \"plain.txt\"")),
                 "cwd: is not a directory", NULL);
  expect_refused(fx, TOOLS(TOOL(BASIC ", \"cwd\": \"\"")),
                 "cwd: must be a non-empty string", NULL);
  expect_refused(fx, TOOLS(TOOL(BASIC ", \"cwd\": 1")), "cwd: must be a non-empty string",
                 NULL);
}

static void test_tools_config_timeout(void **state) {
  struct fixture *fx = *state;
  struct tools_config c;
  expect_ok(fx, &c, TOOLS(TOOL(BASIC ", \"timeout_s\": 1")));
  assert_int_equal(c.tools[0].timeout_ms, 1000);
  tools_config_free(&c);
  expect_ok(fx, &c, TOOLS(TOOL(BASIC ", \"timeout_s\": 3600")));
  assert_int_equal(c.tools[0].timeout_ms, 3600000);
  tools_config_free(&c);
  static const char *const bad[] = {
      "0", "-5", "3601", "1.5", "\"30\"", "null", "99999999999999999"};
  char text[1024];
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(text, sizeof text, TOOLS(TOOL(BASIC ", \"timeout_s\": %s")), bad[i]);
    expect_refused(fx, text,
                   "tools[0] (\"weather\"): timeout_s: must be an integer from 1 to 3600",
                   NULL);
  }
}

/* A later tool's error names it by index and name, after earlier good ones. */
static void test_tools_config_error_names_the_right_tool(void **state) {
  struct fixture *fx = *state;
  expect_refused(fx,
                 TOOLS(TOOL(BASIC) ", " TOOL(
                     "\"name\": \"second\", " DESC ", " INPUT ", " TIER
                     ", " EXEC) ", " TOOL("\"name\": \"third\", " DESC ", " INPUT
                                          ", \"tier\": 9, " EXEC)),
                 "tools[2] (\"third\"): tier:", NULL);
}

int main(void) {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
  const struct CMUnitTest tests[] = {
      T(test_tools_config_minimal_tool_and_defaults),
      T(test_tools_config_every_field),
      T(test_tools_config_empty_list),
      T(test_tools_config_relative_path),
      T(test_tools_config_size_limit),
      T(test_tools_config_file_refused),
      T(test_tools_config_errors_carry_no_values),
      T(test_tools_config_name),
      T(test_tools_config_unknown_keys),
      T(test_tools_config_description),
      T(test_tools_config_input_schema),
      T(test_tools_config_tier),
      T(test_tools_config_effect),
      T(test_tools_config_exec),
      T(test_tools_config_cwd),
      T(test_tools_config_timeout),
      T(test_tools_config_error_names_the_right_tool),
  };
#undef T
  return cmocka_run_group_tests(tests, NULL, NULL);
}
