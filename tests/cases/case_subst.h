/* Placeholders in a case's lines: %TURN, %SESSION, %REQUEST (the latest of each
 * received, or with (NAME) the latest on that stream), %LASTSEQ(NAME), %PORT,
 * %TOKEN(NAME), %PAIRCODE, %STARTCODE (case_auth.h), %REPEAT(TEXT,N) and %% for
 * a literal %. They keep case files stable across runs. */
#ifndef CASE_SUBST_H
#define CASE_SUBST_H

#include "case_net.h"

#include <stdbool.h>

struct case_subst {
  bool dry;     /* the first reading: ids are stand-ins, names are only checked */
  bool model;   /* a [model] line: turnd has not started, only %REPEAT and %% */
  bool running; /* turnd has started (or, on the first reading, would have) */
  const struct case_net *net;         /* where ids come from on the second reading */
  unsigned port;                      /* turnd's port on the second reading */
  bool (*declared)(const char *name); /* first reading: is name a stream yet */
};

/* in with its placeholders replaced: owned text. Fails the case on an unknown
 * placeholder, a name no request has, or an id that has not come yet. */
char *case_subst(const char *in, unsigned line_no, const struct case_subst *ctx);

#endif
