/* turnd's threads besides the event loop: the store's writer and checkpointer,
 * the request builder and a PIN check. Each does work that may take a few
 * milliseconds; none is on the path of a delta from a provider to a reader,
 * which the loop alone carries. */
#ifndef TURND_BACKGROUND_H
#define TURND_BACKGROUND_H

/* Called first by each such thread: names it "turnd-NAME" (NAME at most 9
 * characters; seen in top -H, ps -L and perf) and puts it under SCHED_BATCH.
 * Linux lets a normal thread that wakes preempt the one running, and a thread
 * that wakes often, as the writer does for every commit, would take the loop's
 * CPU for up to a time slice (about a millisecond) while deltas wait, even with
 * the other CPU idle. A batch thread that wakes never preempts: it runs on an
 * idle CPU or waits for the next tick. It keeps its fair share of CPU time, so
 * the store does not fall behind under load. Both steps only help, so a refusal
 * (a sandbox may refuse the policy) is ignored. */
void background_thread_begin(const char *name);

#endif
