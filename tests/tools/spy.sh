#!/bin/sh
# Reports what a tool could learn of turnd, its parent's parent (the parent is
# turnd's child, the tool's shepherd): whether a provider's key shows in turnd's
# environment, or its shepherd's (/proc/PID/environ, which turnd's user may read
# unless turnd forbids it), and whether the tool's session is other than
# turnd's (and so has no controlling terminal of turnd's).
cat >/dev/null
set -- $(cat /proc/$PPID/stat)
turnd=$4
key=unseen
for pid in $PPID $turnd; do
  if tr '\0' '\n' </proc/$pid/environ 2>/dev/null | grep -q '_API_KEY=.'; then
    key=seen
  fi
done
set -- $(cat /proc/$turnd/stat)
turnd_sid=$6
set -- $(cat /proc/$$/stat)
if [ "$6" = "$PPID" ] && [ "$6" != "$turnd_sid" ]; then session=own; else session=shared; fi
printf '{"ok": true, "summary": "KEY=%s SESSION=%s"}\n' "$key" "$session"
