#!/usr/bin/env bash
# scripts/step.sh, which keeps `make run` to one line per step: a step that
# succeeds says `NAME: ok` and nothing of its output, which goes to the log; one
# that fails shows its own output (not the steps' before it), names the log
# and exits with its status; V=1 shows the output as it comes.
set -uo pipefail
step=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
log=$dir/make-run.log
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

out=$(V= "$step" "$log" first sh -c 'echo compiling a.c; echo a warning >&2' 2>"$dir/err")
status=$?
[[ $status -eq 0 ]] || fail "a passing step exits $status"
[[ $out == "first: ok" ]] || fail "a passing step printed: $out"
[[ ! -s $dir/err ]] || fail "a passing step wrote to stderr: $(cat "$dir/err")"
grep -q "compiling a.c" "$log" && grep -q "a warning" "$log" ||
  fail "the log lacks the step's output: $(cat "$log")"

out=$(V= "$step" "$log" second sh -c 'echo linking; echo "undefined reference" >&2; exit 3' \
  2>"$dir/err")
status=$?
[[ $status -eq 3 ]] || fail "a failing step exits $status, want 3"
[[ $out == "second: " ]] || fail "a failing step printed on stdout: $out"
grep -q "failed (exit 3)" "$dir/err" || fail "no failure said: $(cat "$dir/err")"
grep -q "undefined reference" "$dir/err" || fail "its output not shown: $(cat "$dir/err")"
grep -q "linking" "$dir/err" || fail "its stdout not shown: $(cat "$dir/err")"
grep -qF "$log" "$dir/err" || fail "the log is not named: $(cat "$dir/err")"
! grep -q "compiling a.c" "$dir/err" || fail "an earlier step's output was shown"

out=$(V=1 "$step" "$log" third sh -c 'echo every line' 2>&1)
status=$?
[[ $status -eq 0 ]] || fail "a passing step with V=1 exits $status"
[[ $out == *"every line"* && $out == *"third: ok"* ]] || fail "V=1 printed: $out"

"$step" "$log" 2>/dev/null
[[ $? -eq 2 ]] || fail "no command must be a usage error (2)"

[[ $failed -eq 0 ]] && echo "step: all passed"
[[ $failed -eq 0 ]]
