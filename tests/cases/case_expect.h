/* An [expect] line of a case: a subject (one answer, or several answers' lines
 * joined) and clauses, each a check on its lines, its JSON body or its headers.
 * Lines are parsed before turnd starts, so a typo fails at once, and checked
 * when their turn comes; tests/cases/README.md is the grammar. */
#ifndef CASE_EXPECT_H
#define CASE_EXPECT_H

#include "case_net.h"

#include <stddef.h>

#define CASE_EXPECT_NAMES 16

struct clause;

struct case_expect {
  /* Every stream name the line uses: the subject's first (n_subject of them; none
   * means the last request), then those of "same" clauses. */
  char names[CASE_EXPECT_NAMES][32];
  size_t n_names;
  size_t n_subject;
  struct clause *clauses; /* owned */
  size_t n;
};

/* Parses text (borrowed; placeholders already replaced). Returns 0, or -1 with a
 * message in err; either way case_expect_free releases *ex. */
int case_expect_parse(struct case_expect *ex, const char *text, char *err, size_t cap);
void case_expect_free(struct case_expect *ex);

/* Checks every clause; fails the case at the first that does not hold. The names
 * are looked up in net; last is the subject when the line names none. */
void case_expect_check(const struct case_expect *ex, unsigned line_no,
                       const struct case_net *net, struct case_stream *last);

#endif
