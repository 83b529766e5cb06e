#!/bin/sh
# Never reads its stdin (the test gives it 1 MiB), answers, then exits. With
# "close" it first closes its stdin and waits a moment, so that turnd's next
# write meets a pipe with no reader (EPIPE, and SIGPIPE unless turnd guards);
# with "linger" it stays on after its result until the group is killed.
if [ "$1" = close ]; then
  exec 0<&-
  sleep 0.2
fi
printf '{"progress": "not reading, pid %s"}\n' $$
printf '{"ok": true, "summary": "did not read"}\n'
if [ "$1" = linger ]; then sleep 1000; fi
