#!/usr/bin/env bash
# Source hygiene that the compiler does not check: every C file is formatted with
# .clang-format, none calls a function we ban for being unbounded or
# thread-unsafe (sprintf, strcpy, strcat, strtok, atoi, gets), and in turnd only
# conn_watch.c sets a connection's close callback.
set -euo pipefail
cd "$(dirname "$0")/.."

files=$(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' -not -path './build*')
status=0

unformatted=$(for f in $files; do
  if [ -f "$f" ] && ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then echo "$f"; fi
done)
if [ -n "$unformatted" ]; then
  echo "check-source: not formatted with .clang-format (run 'make format'):" >&2
  echo "$unformatted" | sed 's/^/  /' >&2
  status=1
fi

banned='\b(sprintf|vsprintf|strcpy|strcat|strtok|atoi|atol|gets)[[:space:]]*\('
if hits=$(grep -nE "$banned" $files 2>/dev/null); then
  echo "check-source: banned functions (use snprintf, memcpy with a length, strtol):" >&2
  echo "$hits" | sed 's/^/  /' >&2
  status=1
fi

# turnd learns that a connection ended from libevent's close callback, which is
# one per connection: conn_watch.c keeps it, and the rest of turnd sets its own
# through conn_watch_set_closecb (one set directly would go unnoticed, and the
# count of open connections would never come down). Calls only: a comment may
# name the function.
if hits=$(grep -n 'evhttp_connection_set_closecb(' $(echo "$files" | grep '^src/turnd/') 2>/dev/null |
  grep -v '^src/turnd/http/conn_watch\.c:'); then
  echo "check-source: only src/turnd/http/conn_watch.c sets a connection's close callback" \
    "(use conn_watch_set_closecb):" >&2
  echo "$hits" | sed 's/^/  /' >&2
  status=1
fi

[ $status -eq 0 ] && echo "check-source: $(echo "$files" | wc -w) files formatted, no banned calls"
exit $status
