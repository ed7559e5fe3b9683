#!/usr/bin/env bash
# Builds build/perf/nvcomp_perf against an unpacked nvCOMP: $1 (default .nvcomp, as made by
# fetch.sh) holds include/ and lib64/libnvcomp.so.6. Kept out of the Makefile, which compiles every
# perf/*.cu, because CI has no nvCOMP.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
nvcomp="$(realpath "${1:-$root/.nvcomp}")"
out="$root/build/perf"
if [[ ! -f $nvcomp/include/nvcomp.hpp || ! -f $nvcomp/lib64/libnvcomp.so.6 ]]; then
  echo "no nvCOMP in $nvcomp (want include/ and lib64/libnvcomp.so.6; perf/nvcomp/fetch.sh makes one)" >&2
  exit 1
fi
# The wheel ships only the versioned name; -lnvcomp looks for libnvcomp.so.
[[ -e $nvcomp/lib64/libnvcomp.so ]] || ln -s libnvcomp.so.6 "$nvcomp/lib64/libnvcomp.so"

# Two run paths: the absolute one for running where it was built, and one relative to the binary
# for a tree copied elsewhere (e.g. to the GPU machine) with nvCOMP at the same place in it.
mkdir -p "$out"
origin_rel="\$ORIGIN/$(realpath --relative-to="$out" "$nvcomp/lib64")"
# -isystem: warnings are errors here, but only for our code, not for nvCOMP's headers.
nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 \
  -Xcompiler -Wall,-Wextra -Werror all-warnings -isystem "$nvcomp/include" \
  "$root/perf/nvcomp/nvcomp_perf.cu" -o "$out/nvcomp_perf" \
  -L"$nvcomp/lib64" -lnvcomp \
  -Xlinker -rpath -Xlinker "$nvcomp/lib64" -Xlinker -rpath -Xlinker "$origin_rel"
echo "built $out/nvcomp_perf"
