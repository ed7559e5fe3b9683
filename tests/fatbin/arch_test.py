#!/usr/bin/env python3
"""The GPU architectures in a fat binary, checked against an NVCC_GENCODE (cuobjdump --list-elf
without cuobjdump, which the CUDA toolkit here lacks).

Reads the .nv_fatbin section of each binary (objcopy) and walks its fat binary containers: a
16-byte header (magic 0xBA55ED50, version, header size, payload size), then entries, each with
its kind (1 PTX, 2 ELF), header size, payload size and, at byte 28 of its header, the
architecture (80 for sm_80). Every container must hold exactly the SASS and PTX the gencode asks
for. With --cover, every architecture from sm_80 up that `nvcc --list-gpu-code` knows must be
able to run the binary: SASS for it, or SASS of its major's lower minor (8.7 runs 8.0's code).

Usage: tests/fatbin/arch_test.py [--cover] "GENCODE FLAGS" BINARY... Exits 0 when all match.
"""
import re
import struct
import subprocess
import sys
import tempfile

MAGIC = 0xBA55ED50


def entries(binary):
    with tempfile.NamedTemporaryFile() as out:
        subprocess.run(["objcopy", "-O", "binary", "--only-section=.nv_fatbin", binary, out.name], check=True)
        data = open(out.name, "rb").read()
    containers, off = [], 0
    while off + 16 <= len(data):
        magic, _, header, size = struct.unpack_from("<IHHQ", data, off)
        if magic != MAGIC:  # containers are aligned: skip the padding
            off += 8
            continue
        found, e, end = set(), off + header, off + header + size
        while e + 32 <= end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, e)
            arch = struct.unpack_from("<I", data, e + 28)[0]
            found.add(("ptx" if kind == 1 else "sass" if kind == 2 else f"kind{kind}", arch))
            e += entry_header + payload
        containers.append(found)
        off = end
    return containers


def wanted(gencode):
    out = set()
    for code in re.findall(r"code=([\w,\[\]]+)", gencode):
        for c in code.strip("[]").split(","):
            m = re.fullmatch(r"(sm|compute)_(\d+)", c)
            if m:
                out.add(("sass" if m.group(1) == "sm" else "ptx", int(m.group(2))))
    return out


def main(argv):
    cover = "--cover" in argv
    argv = [a for a in argv if a != "--cover"]
    if len(argv) < 2:
        print(__doc__)
        return 2
    want, failed = wanted(argv[0]), 0
    if not want:
        print(f"arch_test: no code=sm_/compute_ in {argv[0]!r}")
        return 1
    for binary in argv[1:]:
        containers = entries(binary)
        if not containers:
            print(f"arch_test: FAIL {binary}: no fat binary")
            failed += 1
        for i, found in enumerate(containers):
            if found != want:
                print(f"arch_test: FAIL {binary} container {i}: {sorted(found)}, expected {sorted(want)}")
                failed += 1
        print(f"arch_test: {binary}: {len(containers)} container(s) of "
              f"{' '.join(f'{k}_{a}' for k, a in sorted(want, key=lambda x: (x[1], x[0])))}")
    if cover:
        known = subprocess.run(["nvcc", "--list-gpu-code"], capture_output=True, text=True, check=True).stdout.split()
        sass = {a for k, a in want if k == "sass"}
        for arch in sorted(int(c[3:]) for c in known if c.startswith("sm_") and int(c[3:]) >= 80):
            if not any(s // 10 == arch // 10 and s <= arch for s in sass):
                print(f"arch_test: FAIL sm_{arch} (known to nvcc) has no SASS it can run")
                failed += 1
    print(f"arch_test: {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
