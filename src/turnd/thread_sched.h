/* How Linux schedules turnd's threads. The event loop alone carries a delta
 * from a provider to a reader; the other threads (the store's writer and
 * checkpointer, the request builder, a PIN check) do work that may take a few
 * milliseconds and that no delta waits for. On a small machine the loop shares
 * its CPUs with them and with everything else, and a delta waits for as long as
 * the loop, woken by its bytes, waits for a CPU. Both calls change a thread only
 * while it has the normal policy: one an operator chose (chrt, systemd's
 * CPUSchedulingPolicy=) stays. A refusal (an older kernel, a sandbox) is
 * ignored: the threads then run as they would without these calls. */
#ifndef TURND_THREAD_SCHED_H
#define TURND_THREAD_SCHED_H

/* Called by the loop's thread before the loop starts: a short time slice
 * (100 us; Linux 6.12 and later), so that when the loop wakes on a CPU where
 * another thread runs, the scheduler may run it at once instead of after the
 * rest of that thread's slice (about a millisecond here). The loop keeps its
 * fair share of CPU time, no more; in turn, when it runs long it may be
 * preempted after 100 us instead of a millisecond. Threads and processes it
 * starts afterwards (tools) get the default slice, and a negative nice value is
 * not passed on to them. */
void loop_thread_begin(void);

/* Called first by each other thread: names it "turnd-NAME" (NAME at most 9
 * characters; seen in top -H, ps -L and perf) and puts it under SCHED_BATCH: a
 * batch thread that wakes never preempts the thread running, as a normal one
 * may, and the writer wakes for every commit. It keeps its fair share of CPU
 * time, so the store does not fall behind under load. */
void background_thread_begin(const char *name);

#endif
