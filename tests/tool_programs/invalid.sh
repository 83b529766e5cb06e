#!/bin/sh
# Writes something that is not the protocol ($1 says what), then a valid result
# and a long sleep: turnd must stop at the bad line and kill the group.
cat >/dev/null
case "$1" in
notjson) printf 'hello\n' ;;
progress-number) printf '{"progress": 5}\n' ;;
progress-extra) printf '{"progress": "a", "ok": true}\n' ;;
result-extra) printf '{"ok": true, "summary": "x", "extra": 1}\n' ;;
result-no-summary) printf '{"ok": true}\n' ;;
result-ok-string) printf '{"ok": "yes", "summary": "x"}\n' ;;
array) printf '[{"progress": "a"}]\n' ;;
duplicate) printf '{"ok": true, "ok": false, "summary": "x"}\n' ;;
nul) printf '{"progress": "a\\u0000b"}\n' ;;
after-progress) printf '{"progress": "fine so far"}\nnot json\n' ;;
big-integer) printf '{"ok": true, "summary": "x", "result": {"id": 18446744073709551616}}\n' ;;
esac
printf '{"ok": true, "summary": "too late"}\n'
sleep 1000
