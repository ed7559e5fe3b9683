#!/usr/bin/env bash
# `make install` into a temporary prefix, then what a user does with it: build tests/install/
# consumer.c with pkg-config and with CMake (find_package(splitzip), splitzip::splitzip) and run
# both with no LD_LIBRARY_PATH; check the SONAME chain and the installed CLI; `make uninstall`
# must leave no file behind. Make variables (CUDA=0, NVCC_GENCODE=...) come from the environment.
# Usage: tests/install/install_test.sh. Exits 0 when every check passed.
set -uo pipefail
cd "$(dirname "$0")/../.."
DIR="$(mktemp -d)"
trap 'rm -rf "$DIR"' EXIT
PREFIX="$DIR/prefix"
failed=0
step() {  # step NAME CMD...: runs CMD, output in $DIR/log
  if "$@" >"$DIR/log" 2>&1; then echo "install_test: ok: $1 ${*:2:3}"; else
    echo "install_test: FAILED: $*"; tail -n 20 "$DIR/log"; failed=$((failed + 1)); fi
}
noenv() { env -u LD_LIBRARY_PATH "$@"; }

step make install PREFIX="$PREFIX"
lib="$PREFIX/lib/libsplitzip.so"
step test "$(readlink "$lib")" = libsplitzip.so.0
step test -f "$PREFIX/lib/$(readlink "$PREFIX/lib/libsplitzip.so.0")"
step sh -c "readelf -d '$lib' | grep -q 'SONAME.*\[libsplitzip.so.0\]'"
step noenv "$PREFIX/bin/splitzip" --version

export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
# shellcheck disable=SC2046
step cc -std=c99 -Wall -Werror -o "$DIR/consumer_pc" tests/install/consumer.c $(pkg-config --cflags --libs splitzip)
step noenv "$DIR/consumer_pc"
step sh -c "pkg-config --modversion splitzip | grep -qx '$(sed -n 's/^#define SZ_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' include/splitzip_base.h | paste -sd.)'"

if command -v cmake >/dev/null; then
  step cmake -S tests/install -B "$DIR/cmake" -DCMAKE_PREFIX_PATH="$PREFIX"
  step cmake --build "$DIR/cmake"
  step noenv "$DIR/cmake/consumer"
else
  echo "install_test: FAILED: cmake is not installed"
  failed=$((failed + 1))
fi

step make uninstall PREFIX="$PREFIX"
left="$(find "$PREFIX" -type f -o -type l)"
step test -z "$left"
[[ -n $left ]] && echo "install_test: left behind: $left"
echo "install_test: $failed failed"
((failed == 0))
