/* See case_subst.h. Replacement happens when a line runs, not when the file is
 * read, so %TURN is the turn started by the lines before it; the first reading
 * puts well-formed stand-ins in, so the rest of the line can be parsed. */
#include "case_subst.h"

#include "case.h"
#include "case_auth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPEAT_MAX (10u * 1024 * 1024) /* bytes of one %REPEAT: far past any limit */

struct text {
  char *p;
  size_t len, cap;
};

static void text_add(struct text *t, const char *s, size_t n, unsigned line_no) {
  if (t->len + n + 1 > t->cap) {
    size_t cap = (t->len + n + 1) * 2;
    char *grown = realloc(t->p, cap);
    if (grown == NULL) case_fail(line_no, "out of memory");
    t->p = grown;
    t->cap = cap;
  }
  memcpy(t->p + t->len, s, n);
  t->len += n;
  t->p[t->len] = '\0';
}

static const char *const kinds[] = {"TURN", "SESSION", "REQUEST"};

/* A placeholder's name ends where a word does: %TURNX is a typo, not %TURN
 * then X, while %TURN.a1 is the turn's first approval. */
static bool is_word_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         c == '_';
}

/* The id kind k stands for: the latest of its kind on any stream, or on the
 * stream named (name non-empty). */
static const char *id_of(size_t k, const char *name, unsigned line_no,
                         const struct case_subst *ctx) {
  static const char *const stand_ins[] = {"t-0000000000000000", "20260101-000000-0000",
                                          "t-0000000000000000.a1"};
  if (ctx->dry) {
    if (name[0] != '\0' && !ctx->declared(name))
      case_fail(line_no, "%%%s(%s): no request is named %s", kinds[k], name, name);
    return stand_ins[k];
  }
  const struct case_stream *s = NULL;
  if (name[0] != '\0' && (s = case_net_find(ctx->net, name)) == NULL)
    case_fail(line_no, "no request is named %s", name);
  const char *const ids[] = {s != NULL ? s->turn : ctx->net->turn,
                             s != NULL ? s->session : ctx->net->session,
                             s != NULL ? s->request : ctx->net->request};
  if (ids[k][0] == '\0')
    case_fail(line_no, "%%%s%s%s%s: no such id has come yet", kinds[k],
              name[0] != '\0' ? "(" : "", name, name[0] != '\0' ? ")" : "");
  return ids[k];
}

/* %REPEAT(TEXT,N) at p (past "REPEAT("): TEXT N times, for inputs and bodies
 * past a size limit. Returns where the text goes on. */
static const char *repeat(struct text *out, const char *p, unsigned line_no) {
  const char *comma = strchr(p, ',');
  const char *close = comma != NULL ? strchr(comma, ')') : NULL;
  char *end = NULL;
  unsigned long n = comma != NULL ? strtoul(comma + 1, &end, 10) : 0;
  if (close == NULL || end != close || comma == p || n > REPEAT_MAX / (size_t)(comma - p))
    case_fail(line_no, "%%REPEAT takes (TEXT,N)");
  for (unsigned long i = 0; i < n; i++)
    text_add(out, p, (size_t)(comma - p), line_no);
  return close + 1;
}

/* %LASTSEQ(NAME) at p (past "LASTSEQ("): the seq of the last line answer NAME
 * has received, for a re-attach from where a reader was cut off. Returns where
 * the text goes on. */
static const char *last_seq(struct text *out, const char *p, unsigned line_no,
                            const struct case_subst *ctx) {
  const char *close = strchr(p, ')');
  char name[32];
  if (close == NULL || close == p || (size_t)(close - p) >= sizeof name)
    case_fail(line_no, "%%LASTSEQ takes (NAME)");
  memcpy(name, p, (size_t)(close - p));
  name[close - p] = '\0';
  unsigned long long seq = 0;
  if (ctx->dry) {
    if (!ctx->declared(name)) case_fail(line_no, "no request is named %s", name);
  } else {
    const struct case_stream *s = case_net_find(ctx->net, name);
    if (s == NULL) case_fail(line_no, "no request is named %s", name);
    /* turnd writes "v" and then "seq" first on every line. */
    const char *at = s->n_lines > 0 ? strstr(s->lines[s->n_lines - 1], "\"seq\":") : NULL;
    if (at == NULL) case_fail(line_no, "%%LASTSEQ(%s): it has no line with a seq", name);
    seq = strtoull(at + 6, NULL, 10);
  }
  char text[24];
  snprintf(text, sizeof text, "%llu", seq);
  text_add(out, text, strlen(text), line_no);
  return close + 1;
}

/* Whether p starts with the placeholder name word, and no more of a name. */
static bool is_word(const char *p, const char *word) {
  size_t n = strlen(word);
  return strncmp(p, word, n) == 0 && !is_word_char(p[n]);
}

/* %TOKEN(NAME) at p (past "TOKEN("): the token of the device the case named so.
 * Returns where the text goes on. */
static const char *token(struct text *out, const char *p, unsigned line_no) {
  const char *close = strchr(p, ')');
  char name[72];
  if (close == NULL || close == p || (size_t)(close - p) >= sizeof name)
    case_fail(line_no, "%%TOKEN takes (NAME)");
  memcpy(name, p, (size_t)(close - p));
  name[close - p] = '\0';
  const char *t = case_auth_placeholder("TOKEN", name, line_no);
  text_add(out, t, strlen(t), line_no);
  return close + 1;
}

char *case_subst(const char *in, unsigned line_no, const struct case_subst *ctx) {
  struct text out = {0};
  text_add(&out, "", 0, line_no);
  for (const char *p = in; *p != '\0';) {
    const char *pct = strchr(p, '%');
    if (pct == NULL) {
      text_add(&out, p, strlen(p), line_no);
      break;
    }
    text_add(&out, p, (size_t)(pct - p), line_no);
    p = pct + 1;
    if (*p == '%') {
      text_add(&out, "%", 1, line_no);
      p++;
      continue;
    }
    if (strncmp(p, "REPEAT(", 7) == 0) {
      p = repeat(&out, p + 7, line_no);
      continue;
    }
    if (ctx->model) case_fail(line_no, "only %%REPEAT and %%%% have a value in [model]");
    if (strncmp(p, "LASTSEQ(", 8) == 0) {
      p = last_seq(&out, p + 8, line_no, ctx);
      continue;
    }
    if (strncmp(p, "TOKEN(", 6) == 0) {
      p = token(&out, p + 6, line_no);
      continue;
    }
    bool port = is_word(p, "PORT"), start = is_word(p, "STARTCODE");
    if ((port || start) && !ctx->running)
      case_fail(line_no, "%%%s before turnd has started", port ? "PORT" : "STARTCODE");
    if (start || is_word(p, "PAIRCODE")) {
      const char *code =
          case_auth_placeholder(start ? "STARTCODE" : "PAIRCODE", NULL, line_no);
      text_add(&out, code, strlen(code), line_no);
      p += start ? 9 : 8;
      continue;
    }
    if (port) {
      char num[16];
      snprintf(num, sizeof num, "%u", ctx->dry ? 1u : ctx->port);
      text_add(&out, num, strlen(num), line_no);
      p += 4;
      continue;
    }
    size_t k = 0;
    while (k < 3 && !(strncmp(p, kinds[k], strlen(kinds[k])) == 0 &&
                      !is_word_char(p[strlen(kinds[k])])))
      k++;
    if (k == 3) case_fail(line_no, "unknown placeholder %%%.12s (%%%% is a %%)", p);
    p += strlen(kinds[k]);
    char name[32] = "";
    if (*p == '(') {
      const char *close = strchr(p, ')');
      if (close == NULL || (size_t)(close - p - 1) >= sizeof name)
        case_fail(line_no, "%%%s( without its )", kinds[k]);
      memcpy(name, p + 1, (size_t)(close - p - 1));
      name[close - p - 1] = '\0';
      p = close + 1;
    }
    const char *id = id_of(k, name, line_no, ctx);
    text_add(&out, id, strlen(id), line_no);
  }
  return out.p;
}
