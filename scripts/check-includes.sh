#!/usr/bin/env bash
# No include circle in src/: a module is a .c and its .h (a name_impl.h counts
# as name's own), and an arrow goes from a module to each module whose header
# one of its files includes. Prints a circle and exits 1 if there is one.
set -euo pipefail
cd "$(dirname "$0")/.."

module() { # path -> module name
  local m=${1%.*}
  echo "${m%_impl}"
}

edges=$(
  find src -name '*.[ch]' | sort | while read -r f; do
    from=$(module "$f")
    dir=$(dirname "$f")
    sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while read -r name; do
      for base in "$dir" src src/turnd include; do
        p=$base/$name # no include goes up a folder ("..")
        if [[ -f $p ]]; then
          [[ $p == src/* ]] && [[ $(module "$p") != "$from" ]] && echo "$from $(module "$p")"
          break
        fi
      done
    done
  done | sort -u
)

# Depth-first search; an arrow to a module still on the path closes a circle.
echo "$edges" | awk '
  NF == 2 { out[$1] = out[$1] " " $2; nodes[$1]; nodes[$2] }
  function visit(v,    n, i, list) {
    state[v] = 1; path[++depth] = v
    n = split(out[v], list, " ")
    for (i = 1; i <= n; i++) {
      if (state[list[i]] == 1) { report(list[i]); return 1 }
      if (state[list[i]] == 0 && visit(list[i])) return 1
    }
    state[v] = 2; depth--
    return 0
  }
  function report(w,    i, s) {
    for (i = 1; path[i] != w; i++) ;
    s = path[i]
    for (i++; i <= depth; i++) s = s " -> " path[i]
    print "check-includes: an include circle: " s " -> " w > "/dev/stderr"
  }
  END {
    for (v in nodes) if (state[v] == 0 && visit(v)) exit 1
    n = 0; for (v in nodes) n++
    print "check-includes: " n " modules of src/, no include circle"
  }'
