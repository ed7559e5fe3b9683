#!/usr/bin/env bash
# Fetches nvCOMP (NVIDIA's proprietary GPU compression library, not redistributed by this repo)
# from its PyPI wheel into .nvcomp/ at the repository root, or into $1: include/ and
# lib64/libnvcomp.so.6 only, which is all build.sh needs (the CPU library and the CMake files are
# left out). Needs python3 with pip and network access to PyPI; runs on any Linux x86-64 machine,
# no GPU needed.
set -euo pipefail

version=6.0.0.12
root="$(cd "$(dirname "$0")/../.." && pwd)"
dest="${1:-$root/.nvcomp}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The wheel is py3-none (no Python code we use), so the Python version and platform given here
# only tell pip which file to pick; they need not match this machine's Python.
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
  --platform manylinux_2_28_x86_64 -d "$tmp" "nvidia-libnvcomp-cu13==$version"
python3 -m zipfile -e "$tmp"/nvidia_libnvcomp_cu13-"$version"-*.whl "$tmp/wheel"

src="$tmp/wheel/nvidia/libnvcomp"
rm -rf "$dest"
mkdir -p "$dest/lib64"
cp -r "$src/include" "$dest/include"
cp "$src/lib64/libnvcomp.so.6" "$dest/lib64/"
# The wheel ships only the versioned name; the linker's -lnvcomp looks for libnvcomp.so.
ln -s libnvcomp.so.6 "$dest/lib64/libnvcomp.so"
echo "nvCOMP $version in $dest ($(du -sh "$dest" | cut -f1))"
