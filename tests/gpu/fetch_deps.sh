#!/usr/bin/env bash
# Fills .deps/ (git-ignored) with what the device machine's image lacks, for run_all.sh: the
# Debian packages of isal, gtest, fmt, CLI11 and nlohmann-json as .deb files (run_all.sh unpacks
# them into /tmp/szdeps there) and a copy of ../shared's tinystories model (the hand-off test's).
# Run it here (Debian's mirrors are reachable from this machine, not from the device), then
# pass carry: [".deps"] to the device tool's run.
set -euo pipefail
[ -n "${AUTHORS_GIT:-}" ] && AUTHORS_GIT=$(cd "$AUTHORS_GIT" && pwd)  # a relative path is the caller's
cd "$(dirname "$0")/../.."
mkdir -p .deps
(cd .deps && apt-get download libisal-dev libisal2 libgtest-dev libfmt-dev libfmt9 libcli11-dev nlohmann-json3-dev)
if [ -d ../shared/data/models/tinystories-656k ] && [ ! -d .deps/model ]; then
  cp -r ../shared/data/models/tinystories-656k .deps/model
fi
# AUTHORS_GIT=DIR: a clone (or bare mirror) of github.com/Intelligent-Microsystems-Lab/SplitZip;
# its codec_gpu.py is copied into the git-ignored .authors/ for perf/authors_codec.py (carry
# ".authors" too). Their code is run side by side only, never committed.
if [ -n "${AUTHORS_GIT:-}" ]; then
  mkdir -p .authors
  git --git-dir="$(git -C "$AUTHORS_GIT" rev-parse --absolute-git-dir)" show HEAD:codec_gpu.py >.authors/codec_gpu.py.part
  mv .authors/codec_gpu.py.part .authors/codec_gpu.py  # never an empty file where git failed
  echo "authors' codec: .authors/codec_gpu.py from $AUTHORS_GIT ($(git -C "$AUTHORS_GIT" rev-parse --short HEAD))"
fi
du -sh .deps
