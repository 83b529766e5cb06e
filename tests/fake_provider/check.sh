#!/usr/bin/env bash
# A manual smoke test of fake-provider (not run by ctest): starts it on a free
# loopback port, posts a hello request to both endpoints with curl and prints
# the streams. With --all it also walks every scenario, leaves streams midway
# (a stall, a slow stream, "many"), and stops the server with SIGTERM while a
# stream is still open: under an ASan build (-DTURN_SANITIZE=ON) a crash or a
# leak makes the exit status non-zero, which this script reports.
#
#   tests/fake_provider/check.sh [--all] [BUILD_DIR]     (default BUILD_DIR: build)
set -euo pipefail

all=0
if [ "${1:-}" = "--all" ]; then
  all=1
  shift
fi
build=${1:-build}
bin=$build/fake-provider
[ -x "$bin" ] || { echo "check: no $bin; build the fake-provider target" >&2; exit 2; }

tmp=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

"$bin" --listen 127.0.0.1:0 --log "$tmp/log" >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 100); do
  [ -s "$tmp/out" ] && break
  sleep 0.05
done
line=$(head -n1 "$tmp/out")
echo "$line"
base=${line#listening on }
case $base in http://127.0.0.1:*) ;; *) echo "check: no listening line" >&2; exit 1 ;; esac

failures=0
fail() {
  echo "check: FAIL: $*" >&2
  failures=$((failures + 1))
}

# anthropic BODY [CURL ARGS...]: posts BODY to /v1/messages with the test key.
anthropic() {
  local body=$1
  shift
  curl -sN -H 'x-api-key: test-key' -H 'anthropic-version: 2023-06-01' "$@" \
    -d "$body" "$base/v1/messages"
}
openai() {
  local body=$1
  shift
  curl -sN -H 'Authorization: Bearer test-key' "$@" -d "$body" "$base/v1/chat/completions"
}
# user TEXT: a one-message conversation for each endpoint.
a_user() {
  printf '{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"%s"}]}]}' "$1"
}
o_user() {
  printf '{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"%s"}]}' "$1"
}
# expect NAME OUTPUT PATTERN: OUTPUT must match the extended regex PATTERN.
expect() {
  if ! grep -Eq -- "$3" <<<"$2"; then fail "$1: no match for /$3/"; fi
}

echo "=== POST /v1/messages (hello)"
anthropic "$(a_user hello)"
echo "=== POST /v1/chat/completions (hello)"
openai "$(o_user hello)"

if [ $all -eq 1 ]; then
  echo "=== every scenario"
  out=$(anthropic "$(a_user think)")
  expect think "$out" 'signature_delta'
  out=$(openai "$(o_user think)")
  expect think-openai "$out" 'reasoning_content'
  out=$(anthropic "$(a_user maxtokens)")
  expect maxtokens "$out" '"stop_reason":"max_tokens"'
  out=$(openai "$(o_user maxtokens)")
  expect maxtokens-openai "$out" '"finish_reason":"length"'
  out=$(anthropic "$(a_user midstream)")
  expect midstream "$out" 'overloaded_error'
  out=$(openai "$(o_user midstream)")
  expect midstream-openai "$out" 'The server is overloaded'
  out=$(anthropic "$(a_user 'two tools')")
  expect two-tools "$out" '"name":"count_slowly"'
  out=$(openai "$(o_user 'two tools')")
  expect two-tools-openai "$out" '"name":"count_slowly"'
  out=$(anthropic "$(a_user many)")
  expect many "$out" 'word 500'
  out=$(anthropic "$(a_user timed:3)")
  expect timed "$out" '"text":"t=[0-9]+ "'
  out=$(openai "$(o_user timed:3)")
  expect timed-openai "$out" '"content":"t=[0-9]+ "'
  out=$(anthropic "$(a_user cut)" -w '\ncurl=%{exitcode}\n' || true)
  expect cut "$out" 'curl=18'
  out=$(openai "$(o_user cut)" -w '\ncurl=%{exitcode}\n' || true)
  expect cut-openai "$out" 'curl=18'

  # Errors and retries: the status line and the body.
  out=$(anthropic "$(a_user http500)" -i)
  expect http500 "$out" '^HTTP/1.1 500'
  out=$(openai "$(o_user http500)" -i)
  expect http500-openai "$out" '"server_error"'
  out=$(anthropic "$(a_user retry-after)" -i)
  expect retry-after "$out" '^retry-after: 1'
  out=$(anthropic "$(a_user retry-after)")
  expect retry-after-2 "$out" 'message_stop'
  out=$(openai "$(o_user backoff)" -i)
  expect backoff-openai "$out" '^HTTP/1.1 429'
  out=$(anthropic "$(a_user retry-date)" -i)
  expect retry-date "$out" '^retry-after: [A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9:]{8} GMT'
  out=$(anthropic "$(a_user retry-past)" -i)
  expect retry-past "$out" '^retry-after: [A-Z][a-z]{2}, '
  out=$(openai "$(o_user retry-huge)" -i)
  expect retry-huge-openai "$out" '^retry-after: 100000'
  out=$(anthropic "$(a_user keyleak)" -i)
  expect keyleak "$out" 'provided: test-key\. The key test-key is'
  out=$(openai "$(o_user keyleak)" -i)
  expect keyleak-openai "$out" '^HTTP/1.1 401'
  out=$(anthropic "$(a_user streamleak)")
  expect streamleak "$out" 'authentication_error.*provided: test-key'
  out=$(openai "$(o_user streamleak)")
  expect streamleak-openai "$out" 'provided: test-key'
  out=$(anthropic "$(a_user overloaded)" -i)
  expect overloaded "$out" '^HTTP/1.1 529'
  out=$(openai "$(o_user overloaded)" -i)
  expect overloaded-openai "$out" '^HTTP/1.1 503'
  out=$(curl -si -H 'x-api-key: wrong' -H 'anthropic-version: 2023-06-01' \
    -d "$(a_user hello)" "$base/v1/messages")
  expect wrong-key "$out" '^HTTP/1.1 401'
  out=$(curl -si -H 'Authorization: Bearer wrong' -d "$(o_user hello)" \
    "$base/v1/chat/completions")
  expect wrong-key-openai "$out" '^HTTP/1.1 401'
  out=$(curl -si -d "$(o_user hello)" "$base/v1/chat/completions")
  expect no-key-openai "$out" 'data: \[DONE\]'
  out=$(anthropic '{"model":"m","max_tokens":1,"stream":true,"messages":[{"role":"assistant","content":"x"}]}' -i)
  expect first-role "$out" '^HTTP/1.1 400'

  # A tool round trip: the after-tools answer, and a result for an unknown id.
  lamp='{"role":"user","content":"lamp"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"lamp_set","input":{"name":"desk","on":true}}]}'
  out=$(anthropic "{\"model\":\"m\",\"max_tokens\":9,\"stream\":true,\"messages\":[$lamp,{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_1\",\"content\":\"ok\"}]}]}")
  expect lamp-after "$out" '"text":"Done."'
  out=$(anthropic "{\"model\":\"m\",\"max_tokens\":9,\"stream\":true,\"messages\":[$lamp,{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_2\",\"content\":\"ok\"}]}]}" -i)
  expect lamp-bad-id "$out" '^HTTP/1.1 400'
  tool='{"role":"user","content":"tool"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"clock","arguments":"{}"}}]}'
  out=$(openai "{\"model\":\"m\",\"stream\":true,\"messages\":[$tool,{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"noon\"}]}")
  expect tool-after-openai "$out" ' hello\.'
  out=$(openai "{\"model\":\"m\",\"stream\":true,\"messages\":[$tool,{\"role\":\"tool\",\"tool_call_id\":\"call_9\",\"content\":\"noon\"}]}" -i)
  expect tool-bad-id-openai "$out" '^HTTP/1.1 400'

  # Clients that leave: mid-stall, mid-slow, and one left open for SIGTERM.
  anthropic "$(a_user stall)" --max-time 0.5 >/dev/null || true
  openai "$(o_user slow)" --max-time 0.3 >/dev/null || true
  anthropic "$(a_user slow)" --max-time 0.3 >/dev/null || true
  openai "$(o_user stall)" >/dev/null 2>&1 &
  sleep 0.3
  echo "=== log"
  cat "$tmp/log"
fi

kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
if [ $status -ne 0 ]; then
  fail "fake-provider exited with $status"
  cat "$tmp/err" >&2
fi
wait # the curl left open above ends with the server
if [ $failures -ne 0 ]; then
  echo "check: $failures failure(s)" >&2
  exit 1
fi
echo "check: ok"
