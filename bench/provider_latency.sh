#!/usr/bin/env bash
# bench/provider_latency.sh BUILD_DIR: how long a provider's text delta takes to
# leave turnd as a `text` line, with 100 turns streaming at once. The fake
# provider's "timed" scenario stamps each delta with the time it writes it to its
# socket (CLOCK_MONOTONIC, ns); bench-provider-latency reads turnd's streams on
# the same machine and records, for every delta, the kernel's receive stamp of
# its line on the bench's socket minus that stamp: the delta's stay in turnd,
# both loopback hops included, and none of the bench's own wake-up (it also
# reports its read time minus the stamp: what a client sees). For each provider
# shape (anthropic:, openai:) against a fresh turnd (port 0, a temporary data
# folder, --coalesce-ms left at its default): the turns at once, the turns'
# starts spread out, then one turn alone (turnd's floor); then the same streams
# read from the fake provider directly, without turnd (one hop): the floor of
# the method; and the same streams through bench-relay, a process that only
# copies bytes between the two sockets on one libevent loop: what any hop on
# an event loop costs on this machine under the same load, the floor of a
# design like turnd's. About a minute and a half in all. It builds nothing: `make bench-provider`
# builds first. Prints each report, then the figures beside the target, with
# turnd's CPU time per delta (its threads' run time from /proc) and the share of
# the machine's CPU time the hypervisor took during each run (steal, from
# /proc/stat): on a small virtual machine that share, not turnd, decides much of
# the tail. Exit status: 1 if a turn failed (or, with LATENCY_STRICT=1, the
# target was missed), else 0.
#
# Knobs (environment): LATENCY_TURNS (turns at once, 100), LATENCY_DELTAS (per
# turn, 200, 20 ms apart: ~4 s a run), LATENCY_SPREAD_MS (the turns' starts
# spread over this many ms in the second run; 20 by default, 0: no such run),
# LATENCY_STRICT=1 to fail on a missed target.
set -euo pipefail

build=${1:?usage: bench/provider_latency.sh BUILD_DIR}
turnd=$build/turnd
fake=$build/fake-provider
bench=$build/bench-provider-latency
relay=$build/bench-relay
for bin in "$turnd" "$fake" "$bench" "$relay"; do
  [[ -x $bin ]] || {
    echo "provider_latency.sh: $bin is missing; run 'make bench-provider'" >&2
    exit 2
  }
done

turns=${LATENCY_TURNS:-100}
deltas=${LATENCY_DELTAS:-200}
spread=${LATENCY_SPREAD_MS:-20}
target_ms=1
text="timed:$deltas"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/turnd-latency.XXXXXX")
turnd_pid=""
fake_pid=""
relay_pid=""
stop() { # pid
  kill -TERM "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() {
  if [[ -n $turnd_pid ]]; then stop "$turnd_pid"; fi
  if [[ -n $relay_pid ]]; then stop "$relay_pid"; fi
  if [[ -n $fake_pid ]]; then stop "$fake_pid"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# await_listen FILE NAME: the URL of a "listening on URL" line, once printed.
await_listen() {
  for _ in $(seq 100); do
    if grep -q '^listening on ' "$1"; then
      sed -n 's/^listening on //p' "$1"
      return 0
    fi
    sleep 0.05
  done
  echo "provider_latency.sh: $2 did not start:" >&2
  cat "${1%.out}.err" >&2
  exit 2
}

"$fake" --listen 127.0.0.1:0 >"$tmp/fake.out" 2>"$tmp/fake.err" &
fake_pid=$!
fake_url=$(await_listen "$tmp/fake.out" fake-provider)
"$relay" --listen 127.0.0.1:0 --to "${fake_url#http://}" >"$tmp/relay.out" 2>"$tmp/relay.err" &
relay_pid=$!
relay_url=$(await_listen "$tmp/relay.out" bench-relay)

coalesce="--coalesce-ms not offered"
if "$turnd" --help 2>&1 | grep -q -- '--coalesce-ms'; then
  coalesce="--coalesce-ms at its default"
fi
echo "fake provider at $fake_url; turnd with $coalesce; $turns turns of $deltas deltas" \
  "20 ms apart"

start_turnd() { # provider
  local p=$1 env=()
  if [[ $p == anthropic ]]; then
    env=(ANTHROPIC_BASE_URL="$fake_url" ANTHROPIC_API_KEY=test-key)
  else
    env=(OPENAI_BASE_URL="$fake_url/v1" OPENAI_API_KEY=test-key)
  fi
  TURN_TOKEN=$("$turnd" pair --data "$tmp/data-$p" --name bench)
  export TURN_TOKEN
  env "${env[@]}" "$turnd" --listen 127.0.0.1:0 --data "$tmp/data-$p" \
    --model "$p:fake-model" >"$tmp/turnd-$p.out" 2>"$tmp/turnd-$p.err" &
  turnd_pid=$!
  turnd_url=$(await_listen "$tmp/turnd-$p.out" turnd)
}

kv() { sed -n "s/^$2=//p" "$tmp/$1.kv" 2>/dev/null || true; } # empty if the run broke
# The machine's steal and all CPU time, in ticks: on a virtual machine the
# hypervisor's share (steal) is time no process here ran, whatever it was due.
# (user, nice, system, idle, iowait, irq, softirq and steal: guest time is
# already in user and nice).
cpu_ticks() { awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print $9, t }' /proc/stat; }
# The CPU time turnd's threads have used, in microseconds (0 once it is gone:
# the run's failure is reported, not this).
turnd_cpu_us() {
  { cat /proc/"$turnd_pid"/task/*/schedstat 2>/dev/null || true; } |
    awk '{ s += $1 } END { printf "%d\n", s / 1000 }'
}

failed=0
measure() { # name label bench-options...
  local name=$1 label=$2 before after used=""
  shift 2
  echo
  before=$(cpu_ticks)
  if [[ -n $turnd_pid ]]; then used=$(turnd_cpu_us); fi
  "$bench" --text "$text" --kv "$tmp/$name.kv" --label "$label" "$@" || failed=1
  after=$(cpu_ticks)
  awk -v b="$before" -v a="$after" 'BEGIN {
    split(b, x, " "); split(a, y, " ")
    printf "steal_pct=%.0f\n", (y[2] > x[2]) ? 100 * (y[1] - x[1]) / (y[2] - x[2]) : 0
  }' >>"$tmp/$name.kv"
  if [[ -n $used ]]; then
    used=$(($(turnd_cpu_us) - used))
    awk -v u="$used" -v n="$(kv "$name" stamps)" \
      'BEGIN { if (n > 0) printf "turnd_us_per_delta=%.0f\n", u / n }' >>"$tmp/$name.kv"
  fi
  echo "machine      $(kv "$name" steal_pct)% of CPU time taken by the hypervisor (steal)" \
    "${used:+; turnd used $(kv "$name" turnd_us_per_delta) us of CPU per delta}"
}

# at_once_and_spread SUFFIX HEAD WHERE bench-options...: the turns started at
# once, then (with LATENCY_SPREAD_MS) over that many ms; runs p$SUFFIX and
# p-spread$SUFFIX, labelled "HEAD ... WHERE".
at_once_and_spread() {
  local sfx=$1 head=$2 where=$3
  shift 3
  measure "$p$sfx" "$head $turns turns at once $where" "$@" --turns "$turns"
  if ((spread > 0)); then
    measure "$p-spread$sfx" "$head $turns turns started over $spread ms $where" "$@" \
      --turns "$turns" --spread-ms "$spread"
  fi
}

for p in anthropic openai; do
  start_turnd "$p"
  at_once_and_spread "" "$p:" "through turnd" --url "$turnd_url"
  measure "$p-1" "$p: 1 turn through turnd" --url "$turnd_url" --turns 1
  stop "$turnd_pid"
  turnd_pid=""
  at_once_and_spread -direct "$p baseline:" "from the fake provider" --url "$fake_url" \
    --direct "$p"
  measure "$p-direct-1" "$p baseline: 1 turn from the fake provider" \
    --url "$fake_url" --direct "$p" --turns 1
  at_once_and_spread -relay "$p floor:" "through bench-relay" --url "$relay_url" \
    --direct "$p"
done
stop "$relay_pid"
relay_pid=""
stop "$fake_pid"
fake_pid=""

figures() { # name [prefix]: "p50 / p99 / max ms (deltas)"; prefix read_, mid_, read_mid_
  echo "$(kv "$1" "${2:-}p50_ms") / $(kv "$1" "${2:-}p99_ms") / $(kv "$1" "${2:-}max_ms") ms" \
    "($(kv "$1" "${2:-}stamps"))"
}
missed=0
verdict() { # name label
  local p99
  p99=$(kv "$1" p99_ms)
  if [[ $(awk -v v="$p99" -v t="$target_ms" 'BEGIN { print (v != "" && v < t) }') == 1 ]]; then
    echo "  met     $2: $(figures "$1")"
  else
    echo "  MISSED  $2: $(figures "$1")"
    missed=1
  fi
  echo "            $(kv "$1" within_1ms_pct)% of the deltas under $target_ms ms;" \
    "mid-run $(figures "$1" mid_)"
  echo "            read by the client $(figures "$1" read_), mid-run" \
    "$(figures "$1" read_mid_)"
  echo "            turnd's CPU $(kv "$1" turnd_us_per_delta) us per delta;" \
    "steal $(kv "$1" steal_pct)% (baseline's run: $(kv "$1-direct" steal_pct)%)"
  echo "            baseline without turnd: $(figures "$1-direct"), mid-run" \
    "$(figures "$1-direct" mid_)"
  echo "            through bench-relay instead: $(figures "$1-relay"), mid-run" \
    "$(figures "$1-relay" mid_); $(kv "$1-relay" within_1ms_pct)% under $target_ms ms;" \
    "steal $(kv "$1-relay" steal_pct)%"
}
echo
echo "== target: a provider's text delta -> turnd's text line, p99 < $target_ms ms with" \
  "$turns turns streaming (p50 / p99 / max (deltas)), from the provider's write to" \
  "the line's arrival on the client's socket; read by the client: to its read;" \
  "mid-run: while every turn streamed; baseline: the same streams read from the" \
  "fake provider directly; bench-relay: read through a process that only copies" \
  "the bytes"
for p in anthropic openai; do
  verdict "$p" "$p, $turns turns at once"
  if ((spread > 0)); then verdict "$p-spread" "$p, $turns turns started over $spread ms"; fi
  echo "          $p, 1 turn alone: $(figures "$p-1"); baseline $(figures "$p-direct-1")"
done

if ((failed)); then exit 1; fi
if ((missed)) && [[ ${LATENCY_STRICT:-0} == 1 ]]; then exit 1; fi
exit 0
