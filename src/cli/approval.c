/* See approval.h. The stream waits while we ask: turnd holds the call in its
 * await-decision state, and the events it sends meanwhile (the guard's step_up,
 * a failed PIN) are read and shown once the answer is in. */
#include "approval.h"

#include "guard.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
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
 * code ("" for none). Anything but a step-up request is reported here. */
static long post_decision(const struct http_server *s, const char *path, const char *body,
                          char *code, size_t cap) {
  struct http_answer a;
  http_answer_init(&a, ANSWER_MAX);
  long status = http_call(s, "POST", path, body, &a);
  http_error_part(&a, "code", code, cap);
  bool ok = status >= 200 && status < 300;
  if (!ok && !(status == 403 && strcmp(code, "step_up_required") == 0)) {
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
  if (rc == GUARD_TAKEN) return;
  if (rc == GUARD_WAITING) {
    explain_waiting();
    return;
  }
  fprintf(stderr, "turn: not approved; answering no so that the turn goes on\n");
  char code[64];
  post_decision(s, path, rejected, code, sizeof code);
}

void approval_answer(const struct http_server *s, const turn_event *ev) {
  const turn_input *in = &ev->approval.input;
  turn_str shown = in->truncated ? in->preview : in->json;
  printf("? run %.*s (%.*s) with %.*s%s [y/n] ", (int)ev->approval.tool.len,
         ev->approval.tool.p, (int)ev->approval.effect.len, ev->approval.effect.p,
         (int)shown.len, shown.p, in->truncated ? "..." : "");
  fflush(stdout);
  char answer[16] = "";
  bool yes = fgets(answer, sizeof answer, stdin) != NULL &&
             (answer[0] == 'y' || answer[0] == 'Y');
  if (!isatty(STDIN_FILENO)) putchar('\n');
  fflush(stdout);
  char request[256], path[512];
  snprintf(request, sizeof request, "%.*s", (int)ev->approval.request.len,
           ev->approval.request.p);
  char *escaped = curl_easy_escape(NULL, request, 0);
  if (escaped == NULL) return;
  snprintf(path, sizeof path, "/api/approvals/%s", escaped);
  curl_free(escaped);
  char code[64];
  long status = post_decision(s, path, yes ? approved : rejected, code, sizeof code);
  if (yes && status == 403 && strcmp(code, "step_up_required") == 0) step_up(s, path);
}
