#!/bin/sh
# Reports what a tool could learn of turnd, its parent: whether a provider's key
# shows in turnd's environment (/proc/PPID/environ, which turnd's user may read
# unless turnd forbids it), and whether the tool has a session of its own (and
# so no controlling terminal of turnd's).
cat >/dev/null
if tr '\0' '\n' </proc/$PPID/environ 2>/dev/null | grep -q '_API_KEY=.'; then
  key=seen
else
  key=unseen
fi
set -- $(cat /proc/$$/stat)
if [ "$1" = "$6" ]; then session=own; else session=shared; fi
printf '{"ok": true, "summary": "KEY=%s SESSION=%s"}\n' "$key" "$session"
