#!/usr/bin/env bash
# Builds, on the development machine (no GPU needed), the binaries tests/gpu/run_all.sh runs with
# PREBUILT, for Hopper only (sm_90 machine code, no PTX: the H100 and H200 the device tool lends),
# in build-sm90/ and build-sm90-profile/ (so the default build/ keeps its own configuration), and
# packs them as build/... and build-profile/... into build/prebuilt.tgz: the GPU suite,
# codec_perf, sendrecv_perf, oneway_perf, copy_perf and a PROFILE=1 sendrecv_perf, without their
# debug sections, about 40 MB: under the device call's 64 MiB with the tree and .deps.
# A device call then spends no minutes building:
#   AUTHORS_GIT=<clone of the authors' repo> bash tests/gpu/fetch_deps.sh && bash tests/gpu/prebuild.sh
#   run: PREBUILT=build/prebuilt.tgz bash tests/gpu/run_all.sh --close   carry: [".deps", "build/prebuilt.tgz"]
# (".authors" too: fetch_deps.sh copies the authors' codec_gpu.py there for perf/authors_codec.py).
# On 2 cores the first build takes about 20 minutes; the objects are kept for the next.
set -euo pipefail
cd "$(dirname "$0")/../.."
BINS="tests/splitzip_gpu_tests perf/codec_perf perf/sendrecv_perf perf/oneway_perf perf/copy_perf"
export NVCC_GENCODE="-gencode arch=compute_90,code=sm_90"
make -j"$(nproc)" BUILD=build-sm90 $(for b in $BINS; do echo build-sm90/$b; done)
make -j"$(nproc)" BUILD=build-sm90-profile PROFILE=1 build-sm90-profile/perf/sendrecv_perf
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
put() {  # put FROM TO: a stripped copy at TO in the tar
  mkdir -p "$stage/$(dirname "$2")"
  cp "$1" "$stage/$2"
  strip --strip-debug "$stage/$2"
}
for b in $BINS; do put "build-sm90/$b" "build/$b"; done
put build-sm90-profile/perf/sendrecv_perf build-profile/perf/sendrecv_perf
mkdir -p build
tar -czf build/prebuilt.tgz -C "$stage" build build-profile
ls -la build/prebuilt.tgz
