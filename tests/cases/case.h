/* What the case runner's parts share: how a case fails, and a trim. A case
 * stops at its first unmet expectation, with the .case file's name and line, so
 * the message points at the line to read; nothing after a failure is worth
 * checking. */
#ifndef CASE_H
#define CASE_H

#include <stddef.h>

/* Wait this long for any one thing (an answer, a line, turnd's exit) before the
 * case fails: far past anything a case does, so it only turns a hang into a
 * failure and never measures time. */
#define CASE_SAFETY_MS 30000

/* Prints "FILE:LINE: message", stops turnd and removes the case's temporary
 * files, and exits 1. line_no 0 means the whole file. */
_Noreturn void case_fail(unsigned line_no, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Keeps lines (borrowed, labelled) to be printed after the message of a failure
 * that follows, so the message comes with what was received. */
void case_show_lines(const char *label, char *const *lines, size_t n);

/* s without its leading and trailing spaces and tabs; cuts s (case_request.c). */
char *case_trim(char *s);

#endif
