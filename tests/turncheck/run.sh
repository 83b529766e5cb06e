#!/usr/bin/env bash
# run.sh TURNCHECK DIR [STREAM...]: runs turncheck on every case file in DIR:
# valid-*.ndjson / valid-*.json must exit 0 with no output; invalid-*.ndjson /
# invalid-*.json must exit 1 and print exactly the lines of the matching .expected
# file. Files named *.json are checked with --blocks. Each STREAM (a fixture kept
# elsewhere) is an .ndjson that must pass too.
set -uo pipefail
turncheck=$1
dir=$2
shift 2
failed=0
count=0
for f in "$dir"/*.ndjson "$dir"/*.json; do
  [ -e "$f" ] || continue
  count=$((count + 1))
  name=$(basename "$f")
  args=()
  [[ $f == *.json ]] && args=(--blocks)
  out=$("$turncheck" "${args[@]}" "$f")
  status=$?
  case $name in
  valid-*)
    if [ $status -ne 0 ] || [ -n "$out" ]; then
      echo "FAIL $name: exit $status, want 0 and no output; got:"; echo "$out"
      failed=$((failed + 1))
    fi ;;
  invalid-*)
    want=$(cat "${f%.*}.expected")
    if [ $status -ne 1 ] || [ "$out" != "$want" ]; then
      echo "FAIL $name: exit $status, want 1 and:"; echo "$want"; echo "got:"; echo "$out"
      failed=$((failed + 1))
    fi ;;
  esac
done
for f in "$@"; do
  count=$((count + 1))
  out=$("$turncheck" "$f")
  status=$?
  if [ $status -ne 0 ] || [ -n "$out" ]; then
    echo "FAIL $f: exit $status, want 0 and no output; got:"; echo "$out"
    failed=$((failed + 1))
  fi
done
# An empty standard input is no turn either, read without a file or through "-".
want=$(cat "$dir/invalid-empty.expected")
for how in stdin dash; do
  args=()
  [ $how = dash ] && args=(-)
  out=$("$turncheck" "${args[@]}" </dev/null)
  status=$?
  if [ $status -ne 1 ] || [ "$out" != "$want" ]; then
    echo "FAIL empty input on $how: exit $status, want 1 and:"; echo "$want"; echo "got:"; echo "$out"
    failed=$((failed + 1))
  fi
done
# A missing file is a usage error (2), not a verdict on a stream.
"$turncheck" "$dir/no-such-file.ndjson" 2>/dev/null
if [ $? -ne 2 ]; then echo "FAIL: missing file must exit 2"; failed=$((failed + 1)); fi
# A report that cannot be written is an I/O error (2), not a verdict.
if [ -w /dev/full ]; then
  "$turncheck" "$dir/invalid-problems.ndjson" >/dev/full 2>/dev/null
  if [ $? -ne 2 ]; then echo "FAIL: an unwritable report must exit 2"; failed=$((failed + 1)); fi
fi
echo "turncheck cases: $((count - failed)) passed, $failed failed"
[ $failed -eq 0 ]
