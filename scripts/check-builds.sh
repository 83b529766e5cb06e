#!/usr/bin/env bash
# Builds everything (daemon, tools, tests, bench) in each standard build type with
# gcc and with clang, each in its own folder PREFIX-COMPILER-TYPE, so that a warning
# (an error here) that only one optimiser or one compiler sees is found before a
# packager finds it. Builds only; ctest is not run. Usage:
#   scripts/check-builds.sh [PREFIX]     (default PREFIX: build-check; JOBS=N to limit)
# Prints one line per build; the full output of a failed one is in its build.log.
set -uo pipefail
cd "$(dirname "$0")/.."

prefix=${1:-build-check}
jobs=${JOBS:-$(nproc)}
compilers=(gcc clang)
types=(Debug Release RelWithDebInfo MinSizeRel)

for cc in "${compilers[@]}"; do
  if ! command -v "$cc" >/dev/null; then
    echo "check-builds: $cc is not installed (scripts/deps.sh fuzz installs clang)" >&2
    exit 2
  fi
done

failed=()
for cc in "${compilers[@]}"; do
  for type in "${types[@]}"; do
    dir="$prefix-$cc-$type"
    mkdir -p "$dir"
    log="$dir/build.log"
    # The compiler is in the folder's name: CMake cannot switch a configured folder.
    if cmake -S . -B "$dir" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE="$type" >"$log" 2>&1 &&
      cmake --build "$dir" -j "$jobs" >>"$log" 2>&1; then
      echo "check-builds: $cc $type: ok"
    else
      echo "check-builds: $cc $type: FAILED, see $log"
      grep -E '(error|warning):' "$log" | head -n 5 | sed 's/^/  /'
      failed+=("$cc $type")
    fi
  done
done

if [ ${#failed[@]} -ne 0 ]; then
  echo "check-builds: ${#failed[@]} of $((${#compilers[@]} * ${#types[@]})) builds failed" >&2
  exit 1
fi
echo "check-builds: all $((${#compilers[@]} * ${#types[@]})) builds are free of warnings"
