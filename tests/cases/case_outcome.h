/* Checks on what a program run to its end did, written as [expect]'s checks on
 * {"exit": N, "stdout": "...", "stderr": "..."}: exit=1 stderr~"refusing". The
 * runner's directives that run a program to its end take them: [second],
 * [start], and [admin] and [pair] after " -> ". */
#ifndef CASE_OUTCOME_H
#define CASE_OUTCOME_H

#include "case_check.h"
#include "case_proc.h"

#include <stddef.h>

#define CASE_OUTCOME_CHECKS 8

struct case_outcome {
  struct case_check checks[CASE_OUTCOME_CHECKS]; /* each owned */
  size_t n;                                      /* checks parsed */
};

/* Parses the checks of text (borrowed): at least one. Fails the case at line_no
 * on a bad one. */
void case_outcome_parse(struct case_outcome *o, const char *text, unsigned line_no);
void case_outcome_free(struct case_outcome *o);

/* Fails the case at line_no, naming what ran (label, "the second turnd"), unless
 * every check holds on r. */
void case_outcome_check(const struct case_outcome *o, const struct case_proc_run *r,
                        const char *label, unsigned line_no);

#endif
