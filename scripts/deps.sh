#!/usr/bin/env bash
# Installs the Debian packages that turnd builds, tests and fuzzes with.
# Idempotent and fast when everything is there: apt runs only for what is missing.
set -euo pipefail

# build + test: compiler, CMake, cmocka (unit tests), jansson (the JSON oracle and
# the parser of non-hot-path JSON), clang-format (the style check), locales (the
# definitions test_locale builds a decimal-comma locale from).
# turnd: libevent (event loop, HTTP server, timers), SQLite (the store); its tests
# drive it over HTTP with libcurl. libsodium: device tokens (CSPRNG, hashing,
# constant-time comparison) and the slow hash of the owner's PIN.
packages=(build-essential cmake pkg-config libcmocka-dev libjansson-dev clang-format locales
          libevent-dev libsqlite3-dev libcurl4-openssl-dev libsodium-dev)
# `scripts/deps.sh fuzz` adds clang and its runtime for libFuzzer.
if [[ "${1:-}" == "fuzz" ]]; then
  packages+=(clang libclang-rt-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
    missing+=("$p")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
echo "deps: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
