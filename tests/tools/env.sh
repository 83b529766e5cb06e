#!/bin/sh
# Reports what the program was given: its environment, its folder, whether fd
# 100 (which the test leaves open without close-on-exec) reached it, where
# stderr goes, its process group and session, and the signals it ignores. Its
# group and session are its own when its parent (turnd's child, its shepherd)
# leads them, and the host (turnd, or the test) is in others.
cat >/dev/null
if [ -e /proc/$$/fd/100 ]; then fd100=leaked; else fd100=closed; fi
set -- $(cat /proc/$$/stat)
shepherd=$4 pgrp=$5 sid=$6
set -- $(cat /proc/$shepherd/stat)
set -- $(cat /proc/$4/stat)
if [ "$pgrp" = "$shepherd" ] && [ "$pgrp" != "$5" ]; then group=own; else group=shared; fi
if [ "$sid" = "$shepherd" ] && [ "$sid" != "$6" ]; then session=own; else session=shared; fi
ign=$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status)
n=$(env | wc -l)
printf '{"ok": true, "summary": "PATH=%s HOME=%s LANG=%s VARS=%s PWD=%s FD100=%s STDERR=%s GROUP=%s SESSION=%s SIGIGN=%s"}\n' \
  "$PATH" "$HOME" "$LANG" "$n" "$(pwd)" "$fd100" "$(readlink /proc/$$/fd/2)" "$group" "$session" "$ign"
