#!/bin/sh
# Output that is the protocol but needs care ($1): unsafe characters, texts
# over the limit, CRLF and blank lines, a last line without its newline.
cat >/dev/null
case "$1" in
controls)
  printf '{"ok": true, "summary": "a\\u0001b\\tc\\nd\\u2028e\\u202ef\\u0085g\\u007fh"}\n' ;;
long)
  a=$(printf '%999s' '' | tr ' ' a)
  printf '{"progress": "%s\\u00e9zz"}\n' "$a"
  printf '{"ok": false, "summary": "%s\\u00e9zz"}\n' "$a" ;;
crlf)
  printf '\r\n{"progress": "p"}\r\n\n   \n{"ok": true, "summary": "crlf", "result": null}\r\n' ;;
no-newline)
  printf '{"ok": false, "summary": "no newline", "result": [1, 2.5, "x"]}' ;;
esac
