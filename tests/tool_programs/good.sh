#!/bin/sh
# A well-behaved tool: reads its input ({"city": "..."}), reports two steps and
# answers with part of the input and a temperature (a real number, which must
# come back as written: 21.1, not 21.100000000000001).
read -r input
city=$(printf '%s\n' "$input" | sed -n 's/.*"city": *"\([^"]*\)".*/\1/p')
printf '{"progress": "looking up %s"}\n' "$city"
printf '{"progress": "reading the sky"}\n'
printf '{"ok": true, "summary": "sunny in %s", "result": {"city": "%s", "sky": "clear", "temp": 21.1}}\n' \
  "$city" "$city"
