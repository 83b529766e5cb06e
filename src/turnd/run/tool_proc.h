/* One tool call run as a program (a tool of tools_config.h) on turnd's libevent
 * loop: no thread, no blocking call. The program gets the call's input on stdin
 * and answers in NDJSON on stdout:
 *   {"progress": "text"}                                  0 to 1000 times, then
 *   {"ok": true|false, "summary": "text", "result": any}  once ("result" optional)
 * and then exits. Whatever it does instead (bad output, too much output, an exit
 * or crash before its result, closing stdout with no result and not exiting
 * within TOOL_PROC_GRACE_MS, running past its timeout) ends the call with a
 * failure that says so; turnd carries on.
 *
 * The program runs as tool->argv (execv, no shell) in tool->cwd, in a session and
 * so a process group of its own (which tool_proc_kill and the timeout kill whole,
 * and which does not outlive the call) with no controlling terminal, killed by
 * the kernel if turnd dies first (however it dies: what the program started
 * and left running is the program's own, and a set-user-ID program or one with
 * file capabilities loses the request at its exec), with stderr
 * on /dev/null, no other inherited file
 * descriptor, default signal dispositions, an empty signal mask, and only
 *   PATH=/usr/local/bin:/usr/bin:/bin  HOME=<cwd>  LANG=C.UTF-8
 * in its environment: turnd's own environment holds provider keys, which a tool
 * must not see; PATH lets a script find the usual commands, HOME points at a
 * folder the owner chose for the tool, and LANG makes text UTF-8. A tool that
 * needs more sets it in a wrapper script.
 *
 * Requirements on the process: nothing else may reap turnd's children (no
 * waitpid(-1), SIGCHLD not ignored), since the exit is watched through a pidfd
 * (Linux 5.3 or later). SIGPIPE may be in any state: writing the input never
 * raises it. */
#ifndef TURND_TOOL_PROC_H
#define TURND_TOOL_PROC_H

#include "tools_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct tool_proc;

#define TOOL_PROC_OUTPUT_MAX   (1u << 20) /* bytes of stdout in all */
#define TOOL_PROC_LINE_START   (4u << 10) /* bytes kept for a line at first */
#define TOOL_PROC_PROGRESS_MAX 1000       /* progress lines */
#define TOOL_PROC_TEXT_MAX     1000       /* bytes of a summary or progress message */
#define TOOL_PROC_GRACE_MS     1000       /* after its result, the time to exit */

enum tool_proc_kind { TOOL_PROC_PROGRESS, TOOL_PROC_DONE };

/* What the owner is told. Every string is valid only during the callback. Text
 * (message, summary) is UTF-8 of at most TOOL_PROC_TEXT_MAX bytes, cut on a code
 * point boundary, with control characters (C0, DEL, C1), U+2028, U+2029 and the
 * bidirectional formatting characters replaced by spaces: it reaches the owner's
 * screen and the logs as it is. */
struct tool_proc_event {
  enum tool_proc_kind kind;
  const char *message; /* PROGRESS: the tool's text; NULL for DONE */
  bool ok;             /* DONE: the tool's own "ok"; false on any failure */
  const char *summary; /* DONE: the tool's summary, or what went wrong */
  /* DONE: the tool's "result" as compact JSON ("null" when it said null), NULL
   * when it gave none or failed. Not cut or changed. */
  const char *result_json;
};

/* Called with PROGRESS 0 to TOOL_PROC_PROGRESS_MAX times, then DONE exactly
 * once, always from the loop (never from inside tool_proc_start). DONE comes
 * only once the program is gone and reaped and its group killed, so no part of
 * it still runs when the owner reports the result; the tool_proc is freed as
 * soon as cb returns from DONE. From PROGRESS, cb may call tool_proc_kill.
 *
 * Lines may end in CRLF; blank lines are skipped; a last line without its
 * newline counts once the program closed stdout or exited. A result line is
 * final: what the program does after it (its exit status, a crash, lingering
 * past TOOL_PROC_GRACE_MS and being killed) does not change it. On a failure
 * DONE has ok false, result_json NULL, and one of these summaries:
 *   "the tool could not start: <strerror>"
 *   "the tool wrote something that is not its protocol"   (a line that is not
 *       JSON, or not one of the two shapes exactly, or has a duplicate key)
 *   "the tool wrote too much"   (stdout over TOOL_PROC_OUTPUT_MAX, which one
 *       result line may fill, or more than TOOL_PROC_PROGRESS_MAX progress lines)
 *   "the tool exited with status N before giving a result"
 *   "the tool was killed by signal N before giving a result"
 *   "the tool exited before giving a result"   (its status was lost)
 *   "the tool did not finish within N s"   (tool->timeout_ms; "0.2 s" for 200)
 *   "turnd ran out of memory reading the tool's result" */
typedef void tool_proc_cb(void *ctx, const struct tool_proc_event *ev);

/* Starts tool as a program with input_json (followed by a newline, so a script
 * can `read` one line; pass compact JSON) on its stdin, then EOF. Borrows base
 * (it must outlive the call), tool (it must stay valid until DONE or
 * tool_proc_kill) and input_json (copied). Returns the call, or NULL when it
 * could not be set up at all (out of memory, or libevent refused to watch an fd;
 * a program already started is then killed, and reaped on the loop): cb is never
 * called. Every other failure, including a program that cannot be executed, is
 * reported as DONE with ok false, e.g. "the tool could not start: Permission
 * denied". */
struct tool_proc *tool_proc_start(struct event_base *base, const struct tool_config *tool,
                                  const char *input_json, tool_proc_cb *cb, void *ctx);

/* The owner is going (cancel, shutdown): the program's process group gets
 * SIGKILL, cb is never called again, and the tool_proc is freed (when called
 * from cb, as soon as cb returns). Not after DONE has begun. The program is
 * reaped later on the loop, with nothing for the owner to free; if the loop
 * never runs again, it ends as a zombie that only turnd's exit clears. */
void tool_proc_kill(struct tool_proc *p);

#endif
