/* The script (script.h) played as the model: each step of the reply the script
 * gives a call becomes the model event a provider would stream, taken as an
 * external model's are (agent_reply.c). */
#include "agent_impl.h"

#include <stdio.h>
#include <string.h>

/* The text of a step with "{{input}}" replaced by the user's text, in the arena. */
static turn_str expand(struct agent *a, const char *text) {
  static const char marker[] = "{{input}}";
  size_t n_marks = 0;
  for (const char *p = strstr(text, marker); p != NULL; p = strstr(p + 1, marker))
    n_marks++;
  size_t len = strlen(text) + n_marks * strlen(a->user_text);
  char *out = turn_arena_alloc(&a->arena, len + 1);
  if (out == NULL) return str_of("");
  size_t w = 0;
  for (const char *p = text; *p != '\0';) {
    if (strncmp(p, marker, sizeof marker - 1) == 0) {
      size_t u = strlen(a->user_text);
      memcpy(out + w, a->user_text, u);
      w += u;
      p += sizeof marker - 1;
    } else {
      out[w++] = *p++;
    }
  }
  out[w] = '\0';
  return (turn_str){out, w};
}

/* The script's next model event for this call, or a wait. */
void agent_script_step(struct agent *a, uint64_t now_ms, struct agent_action *out) {
  struct model_event ev;
  memset(&ev, 0, sizeof ev);
  if (a->step == a->reply->n) {
    ev.kind = MODEL_EV_STOP;
    ev.stop = a->n_calls > 0 ? MODEL_STOP_TOOL_USE : MODEL_STOP_END_TURN;
    agent_reply_take(a, &ev, now_ms, out);
    return;
  }
  const struct script_step *st = &a->reply->steps[a->step];
  switch (st->kind) {
  case SCRIPT_TEXT:
  case SCRIPT_REASONING: {
    turn_str text = expand(a, st->text);
    ev.kind = st->kind == SCRIPT_TEXT ? MODEL_EV_TEXT : MODEL_EV_REASONING;
    ev.text = text.p;
    ev.len = text.len;
    a->step++;
    break;
  }
  case SCRIPT_TOOL_USE:
    /* Two model events, as a provider streams them: the call starts, then its
     * input is complete. The step is done after the second. */
    if (!a->step_begun) {
      char id[32];
      snprintf(id, sizeof id, "u%zu", ++a->tools_used);
      ev.kind = MODEL_EV_TOOL_START;
      ev.id = id;
      ev.name = st->text;
      ev.index = a->n_calls;
      a->step_begun = true;
      agent_reply_take(a, &ev, now_ms, out);
      return;
    }
    a->step_begun = false;
    ev.kind = MODEL_EV_TOOL_END;
    ev.index = a->n_calls - 1;
    ev.text = st->input;
    ev.len = strlen(st->input);
    a->step++;
    break;
  case SCRIPT_DELAY:
    a->step++;
    out->kind = AGENT_WAIT;
    out->wait_ms = st->ms;
    return;
  case SCRIPT_THROTTLE:
    a->step++; /* the retry goes on after it: a script never throttles forever */
    ev.kind = MODEL_EV_ERROR;
    ev.throttled = true;
    ev.retry_after_s = st->seconds;
    a->retries = 0; /* the script's throttles are not the provider's retries */
    break;
  case SCRIPT_FAIL:
    a->step++;
    ev.kind = MODEL_EV_ERROR;
    ev.text = st->text;
    ev.len = strlen(st->text);
    break;
  case SCRIPT_STOP:
    a->step++;
    a->stop = (turn_stop_reason)st->stop_reason;
    a->explicit_stop = true;
    agent_go_on(out);
    return;
  }
  agent_reply_take(a, &ev, now_ms, out);
}
