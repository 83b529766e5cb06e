#!/usr/bin/env bash
# Runs each libFuzzer target of a TURN_FUZZ=ON build for SECONDS, seeded with
# fuzz/corpus/<target>/. New inputs go to BUILD_DIR/fuzz/corpus-<target>/ (kept
# between runs, never committed); crashes, leaks and timeouts go to
# fuzz/findings/<target>/ (gitignored). Exits 1 if any target found something.
#
#   scripts/fuzz.sh BUILD_DIR SECONDS [TARGET...]     (default: every target)
#
# A finding is fixed in libturn, then its input, minimized with
#   BUILD_DIR/fuzz/fuzz_<target> -minimize_crash=1 -runs=100000 <crash file>
# and named by its SHA-256, joins fuzz/corpus/<target>/, where ctest replays it.
set -uo pipefail

if [[ $# -lt 2 || ! "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: $0 BUILD_DIR SECONDS [TARGET...]" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd) || exit 2
seconds=$2
shift 2
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(event block reader json_diff sse provider schema recover journal)

# The protocol's words, so the fuzzer need not guess them byte by byte.
# Written aside and renamed, so runs started in parallel never read half a file.
dict="$build/fuzz/turn.dict"
cat >"$dict.$$" <<'EOF'
"{"
"}"
"["
"]"
":"
","
"true"
"false"
"null"
"-0"
"0.5"
"1e308"
"1.7976931348623157e308"
"5e-324"
"9223372036854775807"
"-9223372036854775808"
"\\u"
"\\ud83d\\ude00"
"\\u0000"
"\\\""
"\\\\"
"\x0d\x0a"
"\x0a"
"\xc3\xa9"
"\xf0\x9f\x98\x80"
"\"v\":1"
"\"seq\":"
"\"type\":"
"\"turn\":"
"\"session\":"
"\"delta\":"
"\"id\":"
"\"tool\":"
"\"tier\":"
"\"input\":"
"\"preview\":"
"\"truncated\":"
"\"message\":"
"\"status\":"
"\"summary\":"
"\"approval\":"
"\"request\":"
"\"effect\":"
"\"expires_at\":"
"\"decision\":"
"\"title\":"
"\"html\":"
"\"delay_seconds\":"
"\"text\":"
"\"action\":"
"\"stop_reason\":"
"\"at\":"
"\"duration_ms\":"
"\"blocks\":"
"\"turn\""
"\"text\""
"\"reasoning\""
"\"tool_use\""
"\"tool_input\""
"\"tool_progress\""
"\"tool_result\""
"\"approval\""
"\"approval_decided\""
"\"widget\""
"\"throttled\""
"\"notice\""
"\"guard\""
"\"end\""
"\"error\""
"\"user\""
"\"assistant\""
"\"tool\""
"\"ok\""
"\"rejected\""
"\"approved\""
"\"timeout\""
"\"exempt\""
"\"locked\""
"\"end_turn\""
"\"limit_turns\""
"\"limit_total_tokens\""
"\"max_tokens\""
"\"cancelled\""
"\"interrupt\""
"\"busy\""
"\"render_ui\""
"\"2026-10-01T08:00:00Z\""
"\"2024-02-29T23:59:60.123456+05:30\""
EOF
mv -f "$dict.$$" "$dict"

status=0
for t in "${targets[@]}"; do
  bin="$build/fuzz/fuzz_$t"
  if [[ ! -x "$bin" ]]; then
    echo "fuzz: $bin missing (configure with -DCMAKE_C_COMPILER=clang -DTURN_FUZZ=ON)" >&2
    status=1
    continue
  fi
  work="$build/fuzz/corpus-$t"
  findings="$root/fuzz/findings/$t"
  log="$build/fuzz/fuzz_$t.log"
  mkdir -p "$work" "$findings"

  # The first corpus dir receives new inputs, so the committed seeds stay as they are.
  UBSAN_OPTIONS=print_stacktrace=1 "$bin" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -dict="$dict" -print_final_stats=1 \
    -artifact_prefix="$findings/" "$work" "$root/fuzz/corpus/$t" >"$log" 2>&1
  rc=$?

  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [[ $rc -eq 0 ]]; then
    echo "fuzz_$t: ok, ${execs:-?} executions in ${seconds}s"
  else
    status=1
    echo "fuzz_$t: FOUND something (exit $rc), ${execs:-?} executions; log: $log" >&2
    grep -E 'check failed|ERROR: |SUMMARY: |Test unit written to' "$log" | head -8 |
      sed 's/^/  /' >&2
  fi
done
exit $status
