#!/bin/sh
# A slow tool: progress, a pause, progress, a pause, then its result.
cat >/dev/null
printf '{"progress": "step 1 of 2"}\n'
sleep 0.3
printf '{"progress": "step 2 of 2"}\n'
sleep 0.3
printf '{"ok": true, "summary": "done slowly"}\n'
