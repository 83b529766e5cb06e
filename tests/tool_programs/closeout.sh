#!/bin/sh
# Closes its output before any result and runs on: no result can come now.
cat >/dev/null
printf '{"progress": "going quiet"}\n'
exec >&-
sleep 60
