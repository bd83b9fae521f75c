#!/usr/bin/env bash
# Compiles tests/abi/header_check.c against the generated include/mpi.h as C99 and as C++17,
# links both against target/release/libhympi.a and runs them.
#
# Usage: tests/abi/check-header.sh   (from anywhere; runs `cargo build` first)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

# Build (or refresh) the library and the generated header. No lock here: callers that run
# several cargo builds side by side serialise them around this whole script.
cargo build --release --quiet
lib=target/release/libhympi.a

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
libs=(-lhwloc -lpthread -ldl -lm -lrt)

echo "== C99: gcc -std=c99 -Wall -Wextra -pedantic -Werror"
gcc -std=c99 -Wall -Wextra -pedantic -Werror -Iinclude \
    tests/abi/header_check.c "$lib" "${libs[@]}" -o "$out/header_check_c"
"$out/header_check_c"

echo "== C++17: g++ -std=c++17 -Wall -Werror"
g++ -std=c++17 -Wall -Werror -Iinclude \
    -x c++ tests/abi/header_check.c -x none "$lib" "${libs[@]}" -o "$out/header_check_cxx"
"$out/header_check_cxx"

echo "header check: 2 passed, 0 failed"
