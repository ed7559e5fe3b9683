#!/usr/bin/env bash
# Builds, on the development machine (no GPU needed), the binaries tests/gpu/run_all.sh runs with
# PREBUILT, as `make` builds them here (without a GPU: sm_90 and PTX, so Hopper runs them; an
# NVCC_GENCODE or IBVERBS in the environment is make's too), and packs them into build/prebuilt.tgz: the GPU suite, codec_perf,
# sendrecv_perf, oneway_perf, copy_perf and a PROFILE=1 sendrecv_perf (build-profile/), without
# their debug sections, about 40 MB: under the device call's 64 MiB with the tree and .deps.
# A device call then spends no minutes building:
#   AUTHORS_GIT=<clone of the authors' repo> bash tests/gpu/fetch_deps.sh && bash tests/gpu/prebuild.sh
#   run: PREBUILT=build/prebuilt.tgz bash tests/gpu/run_all.sh --close   carry: [".deps", "build/prebuilt.tgz"]
# (".authors" too: fetch_deps.sh copies the authors' codec_gpu.py there for perf/authors_codec.py).
# On 2 cores the first build takes about 20 minutes; the objects are kept for the next.
set -euo pipefail
cd "$(dirname "$0")/../.."
BINS="build/tests/splitzip_gpu_tests build/perf/codec_perf build/perf/sendrecv_perf build/perf/oneway_perf build/perf/copy_perf"
make -j"$(nproc)" $BINS
make -j"$(nproc)" BUILD=build-profile PROFILE=1 build-profile/perf/sendrecv_perf
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
for f in $BINS build-profile/perf/sendrecv_perf; do
  mkdir -p "$stage/$(dirname "$f")"
  cp "$f" "$stage/$f"
  strip --strip-debug "$stage/$f"
done
tar -czf build/prebuilt.tgz -C "$stage" build build-profile
ls -la build/prebuilt.tgz
