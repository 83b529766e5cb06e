#!/usr/bin/env bash
# `make run`: the first start as a new user sees it. Installs what is missing,
# configures and builds, one line each (their output goes to BUILD/make-run.log;
# with V=1 to the terminal too), asks for the owner's PIN while none is set and
# this runs at a terminal, then starts turnd on the demo, whose pairing link
# comes last.
#   usage: scripts/make-run.sh BUILD [JOBS]
# DATA and LISTEN (./data, 127.0.0.1:8080) move it, for a try beside another.
set -euo pipefail
build=${1:-build}
jobs=${2:-2}
data=${DATA:-./data}
listen=${LISTEN:-127.0.0.1:8080}
here=$(dirname "$0")

mkdir -p "$build"
log=$build/make-run.log
: >"$log"
"$here/step.sh" "$log" deps "$here/deps.sh"
"$here/step.sh" "$log" configure cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
"$here/step.sh" "$log" build cmake --build "$build" -j "$jobs"
[[ ${V:-0} == 1 ]] || echo "(their output is in $log; make run V=1 shows it here)"

# The demo's lamp is a physical effect: approving it takes the owner's PIN.
# Only a person at a terminal can choose one; otherwise turnd's start-up line
# says how to set it later (no restart needed).
if [[ -t 0 && -t 2 ]]; then
  "./$build/turnd" set-pin --data "$data" --if-unset || true
fi

cat <<TEXT
turnd: the demo model and demo tools, data in $data; Ctrl-C stops it.
Talk to it from another terminal: pair the turn client with the code of the link
below, \`$build/turn pair http://$listen CODE\`, then \`$build/turn hello\`;
or with curl, as README.md's "Set up" shows.
TEXT
exec "./$build/turnd" --listen "$listen" --data "$data"
