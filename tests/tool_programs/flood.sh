#!/bin/sh
# Writes far too much ($1): "yes" is not even the protocol; "progress" is 5 MB of
# progress lines; "long" is one 5 MB line; "total" is 900 progress lines of 1200
# bytes, more than 1 MiB in all; "bigresult" is no flood: one result line of
# 900,000 bytes, within the 1 MiB a tool may write.
cat >/dev/null
case "$1" in
bigresult)
  x=$(head -c 900000 /dev/zero | tr '\0' x)
  printf '{"ok": true, "summary": "big", "result": "%s"}\n' "$x"
  exit 0 ;;
yes) yes | head -c 5000000 ;;
progress) yes '{"progress": "tick"}' | head -c 5000000 ;;
long) head -c 5000000 /dev/zero | tr '\0' a ;;
total)
  x=$(printf '%1183s' '' | tr ' ' x)
  i=0
  while [ $i -lt 900 ]; do
    printf '{"progress": "%s"}\n' "$x"
    i=$((i + 1))
  done ;;
esac
printf '{"ok": true, "summary": "flood over"}\n'
