#!/usr/bin/env bash
# One step of `make run`, told in one line: runs COMMAND with its output (stdout
# and stderr) appended to LOG and says `NAME: ok`. When it fails, says `NAME:
# failed`, shows what it wrote, names LOG and exits with its status. With V=1
# its output also goes to the terminal as it comes.
#   usage: scripts/step.sh LOG NAME COMMAND [ARG...]
set -uo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: scripts/step.sh LOG NAME COMMAND [ARG...]" >&2
  exit 2
fi
log=$1
name=$2
shift 2

if [[ ${V:-0} == 1 ]]; then
  echo "$name:"
  "$@" 2>&1 | tee -a "$log"
  status=${PIPESTATUS[0]}
  [[ $status -eq 0 ]] && echo "$name: ok" || echo "$name: failed (exit $status)"
  exit "$status"
fi

# The step's own part of the log, to show alone if it fails.
start=1
[[ -f $log ]] && start=$(($(wc -c <"$log") + 1))
printf '%s: ' "$name"
"$@" >>"$log" 2>&1
status=$?
if [[ $status -eq 0 ]]; then
  echo ok
  exit 0
fi
{
  echo "failed (exit $status); what it wrote:"
  tail -c +"$start" "$log"
  echo "$name: failed; the whole log is $log"
} >&2
exit "$status"
