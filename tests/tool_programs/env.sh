#!/bin/sh
# Reports what the program was given: its environment, its folder, whether fd
# 100 (which the test leaves open without close-on-exec) reached it, where
# stderr goes, its process group and session, and the signals it ignores.
cat >/dev/null
if [ -e /proc/$$/fd/100 ]; then fd100=leaked; else fd100=closed; fi
set -- $(cat /proc/$$/stat)
if [ "$1" = "$5" ]; then group=own; else group=shared; fi
if [ "$1" = "$6" ]; then session=own; else session=shared; fi
ign=$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status)
n=$(env | wc -l)
printf '{"ok": true, "summary": "PATH=%s HOME=%s LANG=%s VARS=%s PWD=%s FD100=%s STDERR=%s GROUP=%s SESSION=%s SIGIGN=%s"}\n' \
  "$PATH" "$HOME" "$LANG" "$n" "$(pwd)" "$fd100" "$(readlink /proc/$$/fd/2)" "$group" "$session" "$ign"
