/* See case_outcome.h. The outcome is made a JSON object so that its checks are
 * exactly [expect]'s, with the same messages. */
#include "case_outcome.h"

#include "case.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void case_outcome_parse(struct case_outcome *o, const char *text, unsigned line_no) {
  o->n = 0;
  char err[256];
  for (const char *p = text + strspn(text, " \t"); *p != '\0'; p += strspn(p, " \t")) {
    if (o->n == CASE_OUTCOME_CHECKS)
      case_fail(line_no, "too many checks on exit and outputs");
    int rc = case_check_parse(&o->checks[o->n++], &p, err, sizeof err);
    if (rc == 0 && *p != '\0' && *p != ' ' && *p != '\t') {
      snprintf(err, sizeof err, "unexpected \"%c\" after a check", *p);
      rc = -1;
    }
    if (rc != 0) case_fail(line_no, "%s", err);
  }
  if (o->n == 0) case_fail(line_no, "checks on exit, stdout and stderr, such as exit=1");
}

void case_outcome_free(struct case_outcome *o) {
  for (size_t i = 0; i < o->n; i++)
    case_check_free(&o->checks[i]);
  o->n = 0;
}

void case_outcome_check(const struct case_outcome *o, const struct case_proc_run *r,
                        const char *label, unsigned line_no) {
  json_t *got =
      json_pack("{s:i, s:s, s:s}", "exit", r->status, "stdout", r->out, "stderr", r->err);
  if (got == NULL) case_fail(line_no, "out of memory");
  for (size_t i = 0; i < o->n; i++) {
    char why[512];
    if (case_check_holds(&o->checks[i], got, why, sizeof why)) continue;
    static char *dump; /* shown after the message; the case ends there */
    dump = json_dumps(got, JSON_COMPACT);
    if (dump != NULL) case_show_lines(label, &dump, 1);
    case_fail(line_no, "%s: %s", label, why);
  }
  json_decref(got);
}
