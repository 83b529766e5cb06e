#!/bin/sh
# Never ends: starts a sleep in the background (so that its group holds two
# processes by the time it speaks, with its shepherd three), says its group's
# id, then sleeps in the foreground.
cat >/dev/null
sleep 1000 &
set -- $(cat /proc/$$/stat)
printf '{"progress": "group %s"}\n' "$5"
sleep 1000
