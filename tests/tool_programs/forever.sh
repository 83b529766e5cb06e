#!/bin/sh
# Never ends: starts a sleep in the background (so that its group holds two
# processes by the time it speaks), says its pid (its group's id), then sleeps.
cat >/dev/null
sleep 1000 &
printf '{"progress": "pid %s"}\n' $$
sleep 1000
