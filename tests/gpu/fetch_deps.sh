#!/usr/bin/env bash
# Fills .deps/ (git-ignored) with what the device machine's image lacks, for run_all.sh: the
# Debian packages of isal, gtest, fmt, CLI11 and nlohmann-json as .deb files (run_all.sh unpacks
# them into /tmp/szdeps there) and a copy of ../shared's tinystories model (the hand-off test's).
# Run it here (Debian's mirrors are reachable from this machine, not from the device), then
# pass carry: [".deps"] to the device tool's run.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .deps
(cd .deps && apt-get download libisal-dev libisal2 libgtest-dev libfmt-dev libfmt9 libcli11-dev nlohmann-json3-dev)
if [ -d ../shared/data/models/tinystories-656k ] && [ ! -d .deps/model ]; then
  cp -r ../shared/data/models/tinystories-656k .deps/model
fi
du -sh .deps
