/* Answering an approval from the terminal: the y/n question, the decision posted
 * to turnd, and the PIN when approving needs a step-up. */
#ifndef TURN_CLI_APPROVAL_H
#define TURN_CLI_APPROVAL_H

#include "http.h"
#include "turn/turn.h"

/* Asks the owner about ev (a TURN_EV_APPROVAL; borrowed) on stderr, reads the
 * answer's whole line from stdin ("y" or "yes" approves; anything else, end of
 * input too, is no) and posts it. When turnd wants the PIN to
 * approve, asks for it (GUARD_PIN_TRIES tries); when turnd has no PIN yet, says
 * how to set one and asks again whether to approve with it. If no PIN is
 * accepted the answer becomes no, so the turn goes on rather than waiting for an owner
 * who has given up; but a locked turnd takes no answer at all, and the call waits, and
 * one decided meanwhile (expired) is left as it is. Problems are told on stderr; the
 * turn's stream shows the outcome. */
void approval_answer(const struct http_server *s, const turn_event *ev);

#endif
