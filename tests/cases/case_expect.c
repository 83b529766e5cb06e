/* See case_expect.h. A clause is checked on a "view": the lines of the subject's
 * answers joined in order, which is what a client that re-attached holds. Body
 * and header clauses need a subject of one answer. */
#include "case_expect.h"

#include "case.h"
#include "case_check.h"
#include "turn/turn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum clause_kind {
  CLAUSE_LINES,      /* lines N */
  CLAUSE_TYPES,      /* types T T ... (with * and ...) */
  CLAUSE_SEQ,        /* seq N.. */
  CLAUSE_COUNT,      /* count T=N */
  CLAUSE_TURNCHECK,  /* turncheck */
  CLAUSE_SAME,       /* same NAME[+NAME...] [after N] */
  CLAUSE_BLOCKS,     /* blocks T T ... (history block types, with * and ...) */
  CLAUSE_BLOCKCHECK, /* blockcheck */
  CLAUSE_BODY,       /* body CHECK... */
  CLAUSE_HEADER,     /* header CHECK */
  CLAUSE_EVENT       /* TYPE[#K] CHECK... */
};

#define TYPE_ANY  (-2) /* "*": one line of any type */
#define TYPE_RUN  (-3) /* "...": any number of lines, none included */
#define MAX_TYPES 128

struct clause {
  enum clause_kind kind;
  unsigned long n;          /* lines, first seq, count, or K of TYPE#K (0: every) */
  int type;                 /* count and event clauses: the event type */
  int types[MAX_TYPES];     /* types clause */
  size_t n_types;           /* ... */
  size_t same_from, same_n; /* same: its names in case_expect.names */
  bool same_after;          /* same ... after N: only their lines past seq n */
  struct case_check *checks;
  size_t n_checks;
};

/* ------------------------------------------------------------------ parse */

static const char *skip_ws(const char *p) {
  while (*p == ' ' || *p == '\t')
    p++;
  return p;
}

static bool clause_end(const char *p) {
  p = skip_ws(p);
  return *p == ';' || *p == '\0';
}

/* The next run of characters up to a space or ';', copied into out. */
static const char *token(const char *p, char *out, size_t cap) {
  p = skip_ws(p);
  size_t n = 0;
  while (p[n] != '\0' && p[n] != ' ' && p[n] != '\t' && p[n] != ';')
    n++;
  snprintf(out, cap, "%.*s", (int)n, p);
  return p + n;
}

static bool valid_name(const char *s) {
  if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z'))) return false;
  for (; *s != '\0'; s++)
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
          (*s >= '0' && *s <= '9') || *s == '_'))
      return false;
  return true;
}

/* "A+B+C" into ex->names. */
static int add_names(struct case_expect *ex, char *list, char *err, size_t cap) {
  for (char *part = list; part != NULL;) {
    char *plus = strchr(part, '+');
    if (plus != NULL) *plus = '\0';
    if (!valid_name(part) || ex->n_names == CASE_EXPECT_NAMES) {
      snprintf(err, cap, "\"%s\" is not a stream name", part);
      return -1;
    }
    snprintf(ex->names[ex->n_names++], sizeof ex->names[0], "%s", part);
    part = plus != NULL ? plus + 1 : NULL;
  }
  return 0;
}

static int parse_type(const char *name, char *err, size_t cap) {
  int t = turn_event_type_from_name(turn_str_c(name));
  if (t < 0) snprintf(err, cap, "\"%s\" is not an event type", name);
  return t;
}

/* A history block type: user, assistant, reasoning, tool, widget, notice. */
static int parse_block_type(const char *name, char *err, size_t cap) {
  for (int t = 0; t < TURN_BLOCK__COUNT; t++)
    if (strcmp(name, turn_block_type_name((turn_block_type)t)) == 0) return t;
  snprintf(err, cap, "\"%s\" is not a history block type", name);
  return -1;
}

static bool parse_ulong(const char *s, unsigned long *out) {
  char *end;
  if (*s < '0' || *s > '9') return false;
  *out = strtoul(s, &end, 10);
  return *end == '\0';
}

static int parse_checks(struct clause *c, const char **p, char *err, size_t cap) {
  while (!clause_end(*p)) {
    struct case_check *grown = realloc(c->checks, (c->n_checks + 1) * sizeof *grown);
    if (grown == NULL) return -1;
    c->checks = grown;
    *p = skip_ws(*p);
    if (case_check_parse(&c->checks[c->n_checks++], p, err, cap) != 0) return -1;
    if (!clause_end(*p) && **p != ' ' && **p != '\t') {
      snprintf(err, cap, "unexpected \"%c\" after a check", **p);
      return -1;
    }
  }
  return 0;
}

static int parse_clause(struct case_expect *ex, struct clause *c, const char **p,
                        char *err, size_t cap) {
  char word[256];
  *p = token(*p, word, sizeof word);
  if (strcmp(word, "lines") == 0 || strcmp(word, "seq") == 0) {
    c->kind = word[0] == 'l' ? CLAUSE_LINES : CLAUSE_SEQ;
    *p = token(*p, word, sizeof word);
    size_t len = strlen(word);
    if (c->kind == CLAUSE_SEQ && (len < 3 || strcmp(word + len - 2, "..") != 0)) {
      snprintf(err, cap, "seq takes N.. (the first seq, then one by one)");
      return -1;
    }
    if (c->kind == CLAUSE_SEQ) word[len - 2] = '\0';
    if (!parse_ulong(word, &c->n)) {
      snprintf(err, cap, "\"%s\" is not a number", word);
      return -1;
    }
  } else if (strcmp(word, "types") == 0 || strcmp(word, "blocks") == 0) {
    c->kind = word[0] == 't' ? CLAUSE_TYPES : CLAUSE_BLOCKS;
    while (!clause_end(*p)) {
      *p = token(*p, word, sizeof word);
      if (c->n_types == MAX_TYPES) {
        snprintf(err, cap, "too many types");
        return -1;
      }
      int t = strcmp(word, "*") == 0     ? TYPE_ANY
              : strcmp(word, "...") == 0 ? TYPE_RUN
              : c->kind == CLAUSE_TYPES  ? parse_type(word, err, cap)
                                         : parse_block_type(word, err, cap);
      if (t == -1) return -1;
      c->types[c->n_types++] = t;
    }
  } else if (strcmp(word, "count") == 0) {
    c->kind = CLAUSE_COUNT;
    *p = token(*p, word, sizeof word);
    char *eq = strchr(word, '=');
    if (eq == NULL || !parse_ulong(eq + 1, &c->n)) {
      snprintf(err, cap, "count takes TYPE=N");
      return -1;
    }
    *eq = '\0';
    if ((c->type = parse_type(word, err, cap)) < 0) return -1;
  } else if (strcmp(word, "turncheck") == 0) {
    c->kind = CLAUSE_TURNCHECK;
  } else if (strcmp(word, "blockcheck") == 0) {
    c->kind = CLAUSE_BLOCKCHECK;
  } else if (strcmp(word, "same") == 0) {
    c->kind = CLAUSE_SAME;
    *p = token(*p, word, sizeof word);
    c->same_from = ex->n_names;
    if (add_names(ex, word, err, cap) != 0) return -1;
    c->same_n = ex->n_names - c->same_from;
    const char *after = token(*p, word, sizeof word);
    if (strcmp(word, "after") == 0) {
      *p = token(after, word, sizeof word);
      if (!parse_ulong(word, &c->n)) {
        snprintf(err, cap, "same NAME after N takes a seq N");
        return -1;
      }
      c->same_after = true;
    }
  } else if (strcmp(word, "body") == 0 || strcmp(word, "header") == 0) {
    c->kind = word[0] == 'b' ? CLAUSE_BODY : CLAUSE_HEADER;
    if (parse_checks(c, p, err, cap) != 0) return -1;
    if (c->kind == CLAUSE_HEADER && c->n_checks != 1) {
      snprintf(err, cap, "header takes one check: header NAME=VALUE");
      return -1;
    }
  } else {
    c->kind = CLAUSE_EVENT;
    char *hash = strchr(word, '#');
    if (hash != NULL) {
      if (!parse_ulong(hash + 1, &c->n) || c->n == 0) {
        snprintf(err, cap, "TYPE#K takes K from 1");
        return -1;
      }
      *hash = '\0';
    }
    if (word[0] == '\0') {
      snprintf(err, cap, "an empty clause");
      return -1;
    }
    if ((c->type = parse_type(word, err, cap)) < 0) return -1;
    if (parse_checks(c, p, err, cap) != 0) return -1;
  }
  if (!clause_end(*p)) {
    snprintf(err, cap, "unexpected \"%.40s\" at the end of a clause", skip_ws(*p));
    return -1;
  }
  return 0;
}

int case_expect_parse(struct case_expect *ex, const char *text, char *err, size_t cap) {
  memset(ex, 0, sizeof *ex);
  const char *p = skip_ws(text);
  char word[256];
  const char *after = token(p, word, sizeof word);
  size_t len = strlen(word);
  if (len > 1 && word[len - 1] == ':') {
    word[len - 1] = '\0';
    if (add_names(ex, word, err, cap) != 0) return -1;
    ex->n_subject = ex->n_names;
    p = after;
  }
  while (!clause_end(p) || *skip_ws(p) == ';') {
    p = skip_ws(p);
    if (*p == ';') {
      p++;
      continue;
    }
    struct clause *grown = realloc(ex->clauses, (ex->n + 1) * sizeof *grown);
    if (grown == NULL) return -1;
    ex->clauses = grown;
    memset(&ex->clauses[ex->n], 0, sizeof ex->clauses[0]);
    if (parse_clause(ex, &ex->clauses[ex->n++], &p, err, cap) != 0) return -1;
  }
  if (ex->n == 0) {
    snprintf(err, cap, "an [expect] line with no clause");
    return -1;
  }
  return 0;
}

void case_expect_free(struct case_expect *ex) {
  for (size_t i = 0; i < ex->n; i++) {
    for (size_t k = 0; k < ex->clauses[i].n_checks; k++)
      case_check_free(&ex->clauses[i].checks[k]);
    free(ex->clauses[i].checks);
  }
  free(ex->clauses);
  memset(ex, 0, sizeof *ex);
}

/* ------------------------------------------------------------------ check */

/* Some answers' lines, joined. Borrows the streams' lines. */
struct view {
  char **lines;
  int *types;
  size_t n;
  struct case_stream *one; /* the answer, when the view is exactly one */
  char label[128];         /* how messages name it: "A", "A+B", "the last request" */
};

static void view_build(struct view *v, struct case_stream *const *parts, size_t n_parts) {
  memset(v, 0, sizeof *v);
  size_t total = 0;
  for (size_t i = 0; i < n_parts; i++)
    total += parts[i]->n_lines;
  v->lines = calloc(total + 1, sizeof *v->lines);
  v->types = calloc(total + 1, sizeof *v->types);
  if (v->lines == NULL || v->types == NULL) case_fail(0, "out of memory");
  for (size_t i = 0; i < n_parts; i++) {
    for (size_t k = 0; k < parts[i]->n_lines; k++) {
      v->lines[v->n] = parts[i]->lines[k];
      v->types[v->n++] = parts[i]->types[k];
    }
    size_t used = strlen(v->label);
    snprintf(v->label + used, sizeof v->label - used, "%s%s", i > 0 ? "+" : "",
             parts[i]->name[0] != '\0' ? parts[i]->name : "the last request");
  }
  v->one = n_parts == 1 ? parts[0] : NULL;
}

static void view_free(struct view *v) {
  free(v->lines);
  free(v->types);
}

static const char *type_name(int t) {
  if (t == TYPE_ANY) return "*";
  if (t == TYPE_RUN) return "...";
  const char *name = t >= 0 ? turn_event_type_name((turn_event_type)t) : NULL;
  return name != NULL ? name : "(not an event)";
}

/* Whether types[0..n) match the pattern, "..." any run and "*" any one: the
 * usual wildcard walk, going back to the last "..." on a mismatch. */
static bool types_match(const int *pat, size_t n_pat, const int *types, size_t n) {
  size_t p = 0, i = 0, star_p = SIZE_MAX, star_i = 0;
  while (i < n) {
    if (p < n_pat && pat[p] == TYPE_RUN) {
      star_p = p++;
      star_i = i;
    } else if (p < n_pat && (pat[p] == TYPE_ANY || pat[p] == types[i])) {
      p++;
      i++;
    } else if (star_p != SIZE_MAX) {
      p = star_p + 1;
      i = ++star_i;
    } else {
      return false;
    }
  }
  while (p < n_pat && pat[p] == TYPE_RUN)
    p++;
  return p == n_pat;
}

_Noreturn static void fail_on(const struct view *v, unsigned line_no, const char *what) {
  case_show_lines(v->label, v->lines, v->n);
  case_fail(line_no, "%s: %s", v->label, what);
}

static void check_types(const struct clause *c, const struct view *v, unsigned line_no) {
  if (types_match(c->types, c->n_types, v->types, v->n)) return;
  char msg[4096];
  size_t len = (size_t)snprintf(msg, sizeof msg, "types differ\n  want:");
  for (size_t i = 0; i < c->n_types && len < sizeof msg; i++)
    len += (size_t)snprintf(msg + len, sizeof msg - len, " %s", type_name(c->types[i]));
  if (len < sizeof msg) len += (size_t)snprintf(msg + len, sizeof msg - len, "\n  got: ");
  for (size_t i = 0; i < v->n && len < sizeof msg; i++)
    len += (size_t)snprintf(msg + len, sizeof msg - len, " %s", type_name(v->types[i]));
  fail_on(v, line_no, msg);
}

static void check_seq(const struct clause *c, const struct view *v, unsigned line_no) {
  for (size_t i = 0; i < v->n; i++) {
    json_error_t je;
    json_t *j = json_loads(v->lines[i], 0, &je);
    json_int_t seq = json_integer_value(json_object_get(j, "seq"));
    json_decref(j);
    if (seq != (json_int_t)(c->n + i)) {
      char msg[160];
      snprintf(msg, sizeof msg, "line %zu has seq %lld, want %lu", i + 1, (long long)seq,
               c->n + (unsigned long)i);
      fail_on(v, line_no, msg);
    }
  }
  if (v->n == 0) fail_on(v, line_no, "no lines, so no seq");
}

/* libturn's order checker over the lines, as turncheck runs it: every line
 * parses, the rules hold at each step, and the view ends with the turn's end. */
static void check_order(const struct view *v, unsigned line_no) {
  turn_order *order = turn_order_new(NULL);
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  if (order == NULL) case_fail(line_no, "out of memory");
  turn_error err = {0};
  int rv = TURN_OK;
  size_t i = 0;
  for (; i < v->n && rv == TURN_OK; i++) {
    turn_event ev;
    turn_arena_reset(&arena);
    rv = turn_event_parse(&ev, &arena, v->lines[i], strlen(v->lines[i]), &err);
    if (rv == TURN_OK) rv = turn_order_step(order, &ev, &err);
  }
  if (rv == TURN_OK) rv = turn_order_finish(order, &err);
  turn_order_free(order);
  turn_arena_fini(&arena);
  if (rv == TURN_OK) return;
  err.line = i;
  char msg[256];
  size_t len = (size_t)snprintf(msg, sizeof msg, "turncheck refuses it: ");
  turn_error_format(&err, msg + len, sizeof msg - len);
  fail_on(v, line_no, msg);
}

/* The body of the subject's one answer as JSON (owned), or a failure. */
static json_t *body_of(const struct view *v, unsigned line_no) {
  if (v->one == NULL) fail_on(v, line_no, "a body is of one answer, not joined");
  json_error_t je;
  json_t *j = json_loads(v->one->raw != NULL ? v->one->raw : "", 0, &je);
  if (j == NULL)
    case_fail(line_no, "%s: the body is not JSON:\n%.2000s", v->label,
              v->one->raw != NULL ? v->one->raw : "");
  return j;
}

static const char *block_type_name(int t) {
  if (t == TYPE_ANY) return "*";
  if (t == TYPE_RUN) return "...";
  return t >= 0 && t < TURN_BLOCK__COUNT ? turn_block_type_name((turn_block_type)t)
                                         : "(not a block)";
}

/* blocks T T ...: the types of the body's "blocks", in order. */
static void check_blocks(const struct clause *c, const struct view *v, unsigned line_no) {
  json_t *j = body_of(v, line_no);
  json_t *blocks = json_object_get(j, "blocks");
  if (!json_is_array(blocks)) {
    json_decref(j);
    case_fail(line_no, "%s: the body has no \"blocks\" array:\n%.2000s", v->label,
              v->one->raw);
  }
  size_t n = json_array_size(blocks);
  int *types = calloc(n + 1, sizeof *types);
  if (types == NULL) case_fail(line_no, "out of memory");
  for (size_t i = 0; i < n; i++) {
    const char *name =
        json_string_value(json_object_get(json_array_get(blocks, i), "type"));
    char ignored[64];
    types[i] = name != NULL ? parse_block_type(name, ignored, sizeof ignored) : -1;
  }
  bool same = types_match(c->types, c->n_types, types, n);
  if (!same) {
    char msg[4096];
    size_t len =
        (size_t)snprintf(msg, sizeof msg, "%s: blocks differ\n  want:", v->label);
    for (size_t i = 0; i < c->n_types && len < sizeof msg; i++)
      len += (size_t)snprintf(msg + len, sizeof msg - len, " %s",
                              block_type_name(c->types[i]));
    if (len < sizeof msg)
      len += (size_t)snprintf(msg + len, sizeof msg - len, "\n  got: ");
    for (size_t i = 0; i < n && len < sizeof msg; i++)
      len +=
          (size_t)snprintf(msg + len, sizeof msg - len, " %s", block_type_name(types[i]));
    if (len < sizeof msg)
      snprintf(msg + len, sizeof msg - len, "\nthe body:\n%.3000s", v->one->raw);
    free(types);
    json_decref(j);
    case_fail(line_no, "%s", msg);
  }
  free(types);
  json_decref(j);
}

/* The first problem turn_history_parse reports. */
struct block_problem {
  char msg[256];
  bool found;
};

static int on_block(void *ctx, size_t index, const turn_block *b, const turn_error *err) {
  (void)b;
  struct block_problem *pr = ctx;
  if (err == NULL || pr->found) return 0;
  size_t len = (size_t)snprintf(pr->msg, sizeof pr->msg, "block %zu: ", index);
  turn_error_format(err, pr->msg + len, sizeof pr->msg - len);
  pr->found = true;
  return 1;
}

/* blockcheck: libturn's history parser accepts the body, as turncheck --blocks. */
static void check_history(const struct view *v, unsigned line_no) {
  if (v->one == NULL) fail_on(v, line_no, "a body is of one answer, not joined");
  const char *doc = v->one->raw != NULL ? v->one->raw : "";
  turn_arena arena;
  turn_arena_init(&arena, NULL);
  struct block_problem pr = {.found = false};
  turn_error err = {0};
  int rv = turn_history_parse(doc, strlen(doc), &arena, on_block, &pr, &err);
  turn_arena_fini(&arena);
  if (rv == TURN_OK && !pr.found) return;
  if (!pr.found) turn_error_format(&err, pr.msg, sizeof pr.msg);
  case_fail(line_no, "%s: turncheck --blocks refuses it: %s\nthe body:\n%.3000s",
            v->label, pr.msg, doc);
}

/* The lines of other whose seq is above after, for same ... after N. */
static void view_after(struct view *other, unsigned long after) {
  size_t kept = 0;
  for (size_t i = 0; i < other->n; i++) {
    json_error_t je;
    json_t *j = json_loads(other->lines[i], 0, &je);
    json_t *seq = json_object_get(j, "seq");
    bool keep = json_is_integer(seq) && json_integer_value(seq) > (json_int_t)after;
    json_decref(j);
    if (!keep) continue;
    other->lines[kept] = other->lines[i];
    other->types[kept++] = other->types[i];
  }
  other->n = kept;
  size_t used = strlen(other->label);
  snprintf(other->label + used, sizeof other->label - used, " after %lu", after);
}

static void check_same(const struct view *v, const struct view *other, unsigned line_no) {
  for (size_t i = 0; i < v->n || i < other->n; i++) {
    if (i < v->n && i < other->n && strcmp(v->lines[i], other->lines[i]) == 0) continue;
    case_show_lines(other->label, other->lines, other->n);
    char msg[512];
    snprintf(
        msg, sizeof msg,
        "not the same as %s: line %zu is the first to differ (%zu lines, %s has %zu)",
        other->label, i + 1, v->n, other->label, other->n);
    fail_on(v, line_no, msg);
  }
}

static void check_all(const struct clause *c, json_t *j, const struct view *v,
                      const char *what, unsigned line_no) {
  for (size_t k = 0; k < c->n_checks; k++) {
    char why[512];
    if (case_check_holds(&c->checks[k], j, why, sizeof why)) continue;
    char msg[768];
    snprintf(msg, sizeof msg, "%s: %s", what, why);
    fail_on(v, line_no, msg);
  }
}

static void check_events(const struct clause *c, const struct view *v, unsigned line_no) {
  size_t seen = 0;
  for (size_t i = 0; i < v->n; i++) {
    if (v->types[i] != c->type) continue;
    seen++;
    if (c->n != 0 && seen != c->n) continue;
    json_error_t je;
    json_t *j = json_loads(v->lines[i], 0, &je);
    char what[64];
    snprintf(what, sizeof what, "%s#%zu (line %zu)", type_name(c->type), seen, i + 1);
    check_all(c, j, v, what, line_no);
    json_decref(j);
  }
  if (seen == 0 || seen < c->n) {
    char msg[128];
    snprintf(msg, sizeof msg, "%zu %s line%s, want at least %lu", seen,
             type_name(c->type), seen == 1 ? "" : "s", c->n != 0 ? c->n : 1);
    fail_on(v, line_no, msg);
  }
}

static void check_one_answer(const struct clause *c, const struct view *v,
                             unsigned line_no) {
  if (v->one == NULL) fail_on(v, line_no, "body and header take one answer, not joined");
  json_t *j;
  if (c->kind == CLAUSE_BODY) {
    j = body_of(v, line_no);
  } else {
    char value[1024];
    j = json_object();
    if (case_stream_header(v->one, c->checks[0].path, value, sizeof value))
      json_object_set_new(j, c->checks[0].path, json_string(value));
  }
  check_all(c, j, v, c->kind == CLAUSE_BODY ? "body" : "header", line_no);
  json_decref(j);
}

/* The named answers, each read to its end: an expectation on an answer still
 * coming would depend on how far it has come. */
static void resolve(const char (*names)[32], size_t n, const struct case_net *net,
                    unsigned line_no, struct case_stream **parts) {
  for (size_t i = 0; i < n; i++) {
    parts[i] = case_net_find(net, names[i]);
    if (parts[i] == NULL) case_fail(line_no, "no request is named %s", names[i]);
    if (!parts[i]->done)
      case_fail(line_no, "%s is still being read: [await] %s done first", names[i],
                names[i]);
  }
}

static void check_clause(const struct case_expect *ex, const struct clause *c,
                         const struct view *v, const struct case_net *net,
                         unsigned line_no) {
  char msg[128];
  switch (c->kind) {
  case CLAUSE_LINES:
    if (v->n == c->n) return;
    snprintf(msg, sizeof msg, "%zu lines, want %lu", v->n, c->n);
    fail_on(v, line_no, msg);
  case CLAUSE_TYPES:
    check_types(c, v, line_no);
    return;
  case CLAUSE_SEQ:
    check_seq(c, v, line_no);
    return;
  case CLAUSE_COUNT: {
    size_t n = 0;
    for (size_t i = 0; i < v->n; i++)
      n += v->types[i] == c->type;
    if (n == c->n) return;
    snprintf(msg, sizeof msg, "%zu %s lines, want %lu", n, type_name(c->type), c->n);
    fail_on(v, line_no, msg);
  }
  case CLAUSE_TURNCHECK:
    check_order(v, line_no);
    return;
  case CLAUSE_SAME: {
    struct case_stream *parts[CASE_EXPECT_NAMES];
    resolve(ex->names + c->same_from, c->same_n, net, line_no, parts);
    struct view other;
    view_build(&other, parts, c->same_n);
    if (c->same_after) view_after(&other, c->n);
    check_same(v, &other, line_no);
    view_free(&other);
    return;
  }
  case CLAUSE_BLOCKS:
    check_blocks(c, v, line_no);
    return;
  case CLAUSE_BLOCKCHECK:
    check_history(v, line_no);
    return;
  case CLAUSE_BODY:
  case CLAUSE_HEADER:
    check_one_answer(c, v, line_no);
    return;
  case CLAUSE_EVENT:
    check_events(c, v, line_no);
    return;
  }
}

void case_expect_check(const struct case_expect *ex, unsigned line_no,
                       const struct case_net *net, struct case_stream *last) {
  struct case_stream *parts[CASE_EXPECT_NAMES];
  size_t n_parts = ex->n_subject;
  resolve(ex->names, n_parts, net, line_no, parts);
  if (n_parts == 0) {
    if (last == NULL) case_fail(line_no, "[expect] before any [request]");
    if (!last->done) case_fail(line_no, "the last request is still being read");
    parts[n_parts++] = last;
  }
  struct view v;
  view_build(&v, parts, n_parts);
  for (size_t i = 0; i < ex->n; i++)
    check_clause(ex, &ex->clauses[i], &v, net, line_no);
  view_free(&v);
}
