#!/bin/sh
# A well-behaved tool: reads its input ({"city": "..."}), reports two steps and
# answers with part of the input.
read -r input
city=$(printf '%s\n' "$input" | sed -n 's/.*"city": *"\([^"]*\)".*/\1/p')
printf '{"progress": "looking up %s"}\n' "$city"
printf '{"progress": "reading the sky"}\n'
printf '{"ok": true, "summary": "sunny in %s", "result": {"city": "%s", "sky": "clear"}}\n' \
  "$city" "$city"
