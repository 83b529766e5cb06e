/* See approval.h. The stream waits while we ask: turnd holds the call in its
 * await-decision state, and the events it sends meanwhile (the guard's step_up,
 * a failed PIN) are read and shown once the answer is in. */
#include "approval.h"

#include "guard.h"
#include "interrupt.h"

#include "shown.h"

#include <ctype.h>
#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <termios.h>
#include <unistd.h>

#define ANSWER_MAX (64u << 10) /* bytes: the answer here is empty or a short error */

static const char approved[] = "{\"decision\":\"approved\"}";
static const char rejected[] = "{\"decision\":\"rejected\"}";

/* turnd could not take the yes now (locked, locked out, no answer), so the call
 * the owner said yes to stays open: say what becomes of it rather than leave the
 * owner watching a turn that does not move. (A no would be taken, but it is not
 * what the owner asked for.) */
static void explain_waiting(void) {
  fprintf(stderr, "  The call waits until it is answered (after `turn unlock` if turnd\n"
                  "  is locked), or until it expires.\n");
}

/* Posts a decision without a PIN. Returns the status; code gets turnd's error
 * code ("" for none). Anything but a step-up request (or turnd having no PIN to
 * ask for, see no_pin_yet) is reported here. */
static long post_decision(const struct http_server *s, const char *path, const char *body,
                          char *code, size_t cap) {
  struct http_answer a;
  http_answer_init(&a, ANSWER_MAX);
  long status = http_call(s, "POST", path, body, &a);
  http_error_part(&a, "code", code, cap);
  bool ok = status >= 200 && status < 300;
  if (!ok && !(status == 403 && strcmp(code, "step_up_required") == 0) &&
      !(status == 409 && strcmp(code, "pin_not_set") == 0)) {
    http_report_answer(s, "the answer", &a);
    if (status == 423) explain_waiting();
  }
  http_answer_fini(&a);
  return status;
}

/* Approving needs the PIN: ask for it; when no PIN is taken, say no instead, so
 * the turn goes on rather than wait for an owner who has given up. */
static void step_up(const struct http_server *s, const char *path) {
  json_t *body = json_pack("{s:s}", "decision", "approved");
  int rc =
      body != NULL ? guard_post_with_pin(s, path, body, "the approval") : GUARD_REFUSED;
  json_decref(body);
  if (rc == GUARD_TAKEN || interrupt_seen()) return; /* ^C: the turn is cancelled */
  if (rc == GUARD_WAITING) {
    explain_waiting();
    return;
  }
  if (rc == GUARD_GONE) {
    fprintf(stderr, "  The call was already decided (or its approval expired): the\n"
                    "  turn's stream says how.\n");
    return;
  }
  fprintf(stderr, "turn: not approved; answering no so that the turn goes on\n");
  char code[64];
  post_decision(s, path, rejected, code, sizeof code);
}

/* Reads the owner's whole answer line: yes is "y" or "yes", in any case, and
 * nothing else (end of input too is a no). On a terminal, what was typed before
 * the question is dropped first, so a keystroke meant for something else does
 * not answer it; and the whole line is read, so its rest cannot answer the next
 * question (or the PIN). */
static bool read_yes(void) {
  if (isatty(STDIN_FILENO)) tcflush(STDIN_FILENO, TCIFLUSH);
  char *line = NULL;
  size_t cap = 0;
  ssize_t len = getline(&line, &cap, stdin);
  bool yes = false;
  if (len > 0) {
    while (len > 0 && isspace((unsigned char)line[len - 1]))
      line[--len] = '\0';
    yes = strcasecmp(line, "y") == 0 || strcasecmp(line, "yes") == 0;
  }
  free(line);
  return yes;
}

/* Asks a y/n question on stderr and reads its answer; false after ^C too, which
 * is no answer (the turn is being cancelled). */
static bool ask_yes(const char *question) {
  fputs(question, stderr);
  bool yes = read_yes();
  if (!isatty(STDIN_FILENO)) fputc('\n', stderr);
  if (interrupt_seen()) {
    if (isatty(STDIN_FILENO)) fputc('\n', stderr);
    return false;
  }
  return yes;
}

/* The owner said yes, but turnd has no PIN yet to check: the call still waits.
 * Setting one needs no restart, so the owner may set it now and approve with
 * it, rather than lose the call. */
static void no_pin_yet(const struct http_server *s, const char *path) {
  fprintf(stderr, "turn: approving this needs the owner's PIN, and turnd has none yet:\n"
                  "  set one where turnd runs (`turnd set-pin --data DIR`), then\n"
                  "  answer y here to approve with it.\n");
  bool yes = ask_yes("? approve with the PIN [y/n] ");
  if (interrupt_seen()) return;
  char code[64];
  if (yes)
    step_up(s, path);
  else
    post_decision(s, path, rejected, code, sizeof code);
}

void approval_answer(const struct http_server *s, const turn_event *ev) {
  const turn_input *in = &ev->approval.input;
  turn_str shown = in->truncated ? in->preview : in->json;
  /* On stderr, as the PIN's prompt: with stdout sent to a file, the owner still
   * sees what is asked. */
  fflush(stdout);
  fputs("? run ", stderr);
  shown_write(stderr, ev->approval.tool);
  fputs(" (", stderr);
  shown_write(stderr, ev->approval.effect);
  fputs(") with ", stderr);
  shown_write(stderr, shown);
  fputs(in->truncated ? "..." : "", stderr);
  bool yes = ask_yes(" [y/n] ");
  if (interrupt_seen()) return;
  char request[256], path[512];
  snprintf(request, sizeof request, "%.*s", (int)ev->approval.request.len,
           ev->approval.request.p);
  char *escaped = curl_easy_escape(NULL, request, 0);
  if (escaped == NULL) return;
  snprintf(path, sizeof path, "/api/approvals/%s", escaped);
  curl_free(escaped);
  char code[64];
  long status = post_decision(s, path, yes ? approved : rejected, code, sizeof code);
  if (yes && status == 403 && strcmp(code, "step_up_required") == 0 && !interrupt_seen())
    step_up(s, path);
  else if (yes && status == 409 && strcmp(code, "pin_not_set") == 0 && !interrupt_seen())
    no_pin_yet(s, path);
}
