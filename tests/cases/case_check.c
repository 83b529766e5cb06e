/* See case_check.h. Values are compared the way a reader of the case means
 * them: tier=2 is the number 2, summary="x y" the text, input={"a": 1} the JSON
 * whatever its spacing, and a missing field never equals anything. */
#include "case_check.h"

#include "turn/turn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[CASE_KIND__COUNT] = {
    [CASE_KIND_NONE] = "",         [CASE_KIND_NUMBER] = "number",
    [CASE_KIND_STRING] = "string", [CASE_KIND_BOOL] = "bool",
    [CASE_KIND_NULL] = "null",     [CASE_KIND_OBJECT] = "object",
    [CASE_KIND_ARRAY] = "array",   [CASE_KIND_ISO8601] = "iso8601"};

static bool is_path_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '.' || c == '-';
}

/* The end of a JSON string starting at p (on its opening quote), or NULL. */
static const char *string_end(const char *p) {
  for (p++; *p != '\0'; p++) {
    if (*p == '\\' && p[1] != '\0')
      p++;
    else if (*p == '"')
      return p + 1;
  }
  return NULL;
}

/* The end of an object or array starting at p, strings skipped, or NULL. */
static const char *nested_end(const char *p) {
  int depth = 0;
  while (*p != '\0') {
    if (*p == '"') {
      p = string_end(p);
      if (p == NULL) return NULL;
      continue;
    }
    if (*p == '{' || *p == '[') depth++;
    if (*p == '}' || *p == ']') depth--;
    p++;
    if (depth == 0) return p;
  }
  return NULL;
}

int case_value_parse(const char **p, char **text, json_t **json, bool *quoted, char *err,
                     size_t cap) {
  const char *s = *p;
  *text = NULL;
  *json = NULL;
  *quoted = false;
  json_error_t je;
  if (*s == '"' || *s == '{' || *s == '[') {
    const char *end = *s == '"' ? string_end(s) : nested_end(s);
    json_t *v =
        end != NULL ? json_loadb(s, (size_t)(end - s), JSON_DECODE_ANY, &je) : NULL;
    if (v == NULL) {
      snprintf(err, cap, "a value that starts with %c is not valid JSON", *s);
      return -1;
    }
    *p = end;
    if (json_is_string(v)) {
      *text = strdup(json_string_value(v));
      *quoted = true;
      json_decref(v);
    } else {
      *json = v;
      *text = json_dumps(v, JSON_COMPACT);
    }
    return *text != NULL ? 0 : -1;
  }
  const char *end = s;
  while (*end != '\0' && *end != ' ' && *end != '\t' && *end != ';')
    end++;
  if (end == s) {
    snprintf(err, cap, "a value is missing");
    return -1;
  }
  *text = strndup(s, (size_t)(end - s));
  *p = end;
  return *text != NULL ? 0 : -1;
}

int case_check_parse(struct case_check *c, const char **p, char *err, size_t cap) {
  memset(c, 0, sizeof *c);
  const char *s = *p;
  bool negated = *s == '!';
  if (negated) s++;
  if (strncmp(s, "len(", 4) == 0) {
    c->len = true;
    s += 4;
  }
  size_t n = 0;
  while (is_path_char(s[n]))
    n++;
  if (n == 0 || n >= sizeof c->path) {
    snprintf(err, cap, "a field name is missing or too long");
    return -1;
  }
  memcpy(c->path, s, n);
  s += n;
  if (c->len && *s++ != ')') {
    snprintf(err, cap, "len( without its )");
    return -1;
  }
  if (negated && s[0] == '=') {
    c->op = CASE_CHECK_NE;
    s++;
  } else if (negated && s[0] == '~') {
    c->op = CASE_CHECK_HASNT;
    s++;
  } else if (negated) {
    c->op = CASE_CHECK_ABSENT;
  } else if (s[0] == '=' || s[0] == '~') {
    c->op = s[0] == '=' ? CASE_CHECK_EQ : CASE_CHECK_HAS;
    s++;
  } else if (s[0] == '!' && (s[1] == '=' || s[1] == '~')) {
    c->op = s[1] == '=' ? CASE_CHECK_NE : CASE_CHECK_HASNT;
    s += 2;
  } else {
    c->op = CASE_CHECK_PRESENT;
  }
  if (c->len && (c->op != CASE_CHECK_EQ && c->op != CASE_CHECK_NE)) {
    snprintf(err, cap, "len(%s) takes = or !=", c->path);
    return -1;
  }
  if (c->op != CASE_CHECK_PRESENT && c->op != CASE_CHECK_ABSENT &&
      case_value_parse(&s, &c->text, &c->json, &c->quoted, err, cap) != 0)
    return -1;
  if (c->text != NULL && !c->quoted && c->json == NULL && c->text[0] == '@') {
    while (c->kind < CASE_KIND__COUNT && strcmp(c->text + 1, kind_names[c->kind]) != 0)
      c->kind++;
    if (c->kind == CASE_KIND__COUNT || c->kind == CASE_KIND_NONE) {
      snprintf(err, cap,
               "unknown kind %.40s (@number, @string, @bool, @null, @object, @array, "
               "@iso8601)",
               c->text);
      return -1;
    }
    if (c->len || (c->op != CASE_CHECK_EQ && c->op != CASE_CHECK_NE)) {
      snprintf(err, cap, "a kind takes = or !=: %s=%s", c->path, c->text);
      return -1;
    }
  }
  *p = s;
  return 0;
}

void case_check_free(struct case_check *c) {
  free(c->text);
  json_decref(c->json);
  c->text = NULL;
  c->json = NULL;
}

/* The field at a dotted path, or NULL. */
static json_t *lookup(json_t *root, const char *path) {
  char seg[128];
  json_t *v = root;
  for (const char *p = path; v != NULL && *p != '\0';) {
    const char *dot = strchr(p, '.');
    size_t n = dot != NULL ? (size_t)(dot - p) : strlen(p);
    snprintf(seg, sizeof seg, "%.*s", (int)n, p);
    if (json_is_array(v)) {
      char *end;
      unsigned long i = strtoul(seg, &end, 10);
      v = *end == '\0' && n > 0 ? json_array_get(v, i) : NULL;
    } else {
      v = json_object_get(v, seg);
    }
    p = dot != NULL ? dot + 1 : p + n;
  }
  return v;
}

/* A field as text: a string's own text, anything else its compact JSON. */
static char *as_text(json_t *v) {
  if (json_is_string(v)) return strdup(json_string_value(v));
  return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

static size_t code_points(const char *s) {
  size_t n = 0;
  for (; *s != '\0'; s++)
    n += ((unsigned char)*s & 0xC0) != 0x80;
  return n;
}

static bool of_kind(int kind, json_t *v) {
  switch (kind) {
  case CASE_KIND_NUMBER:
    return json_is_number(v);
  case CASE_KIND_STRING:
    return json_is_string(v);
  case CASE_KIND_BOOL:
    return json_is_boolean(v);
  case CASE_KIND_NULL:
    return json_is_null(v);
  case CASE_KIND_OBJECT:
    return json_is_object(v);
  case CASE_KIND_ARRAY:
    return json_is_array(v);
  case CASE_KIND_ISO8601:
    return json_is_string(v) &&
           turn_iso8601_valid((turn_str){json_string_value(v), json_string_length(v)});
  default:
    return false;
  }
}

static bool equals(const struct case_check *c, json_t *v) {
  if (c->kind != CASE_KIND_NONE) return of_kind(c->kind, v);
  if (c->json != NULL) return json_equal(c->json, v);
  if (c->quoted) return json_is_string(v) && strcmp(json_string_value(v), c->text) == 0;
  if (json_is_number(v)) {
    char *end;
    double want = strtod(c->text, &end);
    if (*end == '\0' && end != c->text) return json_number_value(v) == want;
  }
  char *have = as_text(v);
  bool same = have != NULL && strcmp(have, c->text) == 0;
  free(have);
  return same;
}

/* How a check's wanted value reads in a message: "=ok", "~\"lamp\"". */
static void describe_want(const struct case_check *c, char *out, size_t cap) {
  static const char *const ops[] = {"", "", "=", "!=", "~", "!~"};
  json_t *s = c->quoted ? json_string(c->text) : NULL;
  char *quoted = s != NULL ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
  snprintf(out, cap, "%s%.300s", ops[c->op], quoted != NULL ? quoted : c->text);
  free(quoted);
  json_decref(s);
}

bool case_check_holds(const struct case_check *c, json_t *root, char *why, size_t cap) {
  json_t *v = lookup(root, c->path);
  if (c->op == CASE_CHECK_ABSENT) {
    snprintf(why, cap, "%s is there, want it absent", c->path);
    return v == NULL;
  }
  if (v == NULL) {
    snprintf(why, cap, "%s is missing", c->path);
    return false;
  }
  char want[400];
  describe_want(c, want, sizeof want);
  char *shown = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
  size_t shown_len = shown != NULL ? strlen(shown) : 0;
  snprintf(why, cap, "%s is %.300s%s, want %s", c->path, shown != NULL ? shown : "?",
           shown_len > 300 ? "..." : "", want);
  free(shown);
  if (c->len) {
    size_t len = json_is_string(v)   ? code_points(json_string_value(v))
                 : json_is_array(v)  ? json_array_size(v)
                 : json_is_object(v) ? json_object_size(v)
                                     : (size_t)-1;
    char num[32];
    snprintf(num, sizeof num, "%zu", len);
    snprintf(why, cap, "len(%s) is %s, want %s", c->path,
             len == (size_t)-1 ? "undefined" : num, want);
    char *end;
    double want_len = strtod(c->text, &end);
    bool same = *end == '\0' && end != c->text && (double)len == want_len;
    return len != (size_t)-1 && same == (c->op == CASE_CHECK_EQ);
  }
  if (c->op == CASE_CHECK_EQ || c->op == CASE_CHECK_NE)
    return equals(c, v) == (c->op == CASE_CHECK_EQ);
  if (c->op == CASE_CHECK_HAS || c->op == CASE_CHECK_HASNT) {
    char *have = as_text(v);
    bool holds =
        have != NULL && (strstr(have, c->text) != NULL) == (c->op == CASE_CHECK_HAS);
    free(have);
    return holds;
  }
  return true; /* CASE_CHECK_PRESENT */
}
