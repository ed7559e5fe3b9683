#!/usr/bin/env bash
# The interposer and its test program build against an NCCL header older than the toolkit's:
# this makes one from the installed nccl.h by taking out what came after 2.28.3 (the H200 image's
# release, which has no ncclCommRevoke) and compiling every interposer file and fake_app.cc
# against it with the Makefile's own flags. Usage: tests/interpose/old_nccl_header_test.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
nvcc="$(make -s print-nvcc)"
if [[ -z $nvcc ]]; then echo "old_nccl_header_test: SKIPPED: no CUDA toolkit (the interposer needs one)"; exit 0; fi
header="$(echo '#include <nccl.h>' | g++ -x c++ -E -M -I"$(dirname "$nvcc")/../include" - | tr ' \\' '\n\n' | grep -m1 '/nccl\.h$')"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/include"
sed -e '/^ncclResult_t  *p\{0,1\}ncclCommRevoke(/d' -e '/^#define NCCL_REVOKE_/d' \
    -e 's/^#define NCCL_MINOR .*/#define NCCL_MINOR 28/' -e 's/^#define NCCL_PATCH .*/#define NCCL_PATCH 3/' \
    -e 's/^#define NCCL_VERSION_CODE .*/#define NCCL_VERSION_CODE 22803/' "$header" >"$tmp/include/nccl.h"
if grep -q '^ncclResult_t.*ncclCommRevoke(' "$tmp/include/nccl.h"; then echo "old_nccl_header_test: could not strip $header"; exit 1; fi
objs=()
for f in interpose/*.cc tests/interpose/fake_app.cc; do objs+=("$tmp/build/obj/${f%.cc}.o"); done
make -s BUILD="$tmp/build" CPPFLAGS="-I$tmp/include" "${objs[@]}"
echo "old_nccl_header_test: ${#objs[@]} files compiled against $header without ncclCommRevoke (as NCCL 2.28.3)"
