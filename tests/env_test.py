#!/usr/bin/env python3
"""Every SZ_* variable: documented in docs/ENV.md, and an invalid value reported.

1. Every variable the library reads (getenv("SZ_...") and SZ_PARAM(..., "...") in src/, codec/,
   transport/, kernels/, interpose/) has a row in docs/ENV.md's table.
2. Each variable read on a CPU-only machine, set to an invalid value, is named on stderr by a
   two-rank sendrecv_perf run (a line and the default, or a failed init naming it). The slot
   protocol's (SZ_SLOT_*) are read only with the ipc wire on a GPU, the ib
   wire's (SZ_IB_*) only with that wire on a machine with an RDMA NIC; their numbers go through
   the same reader, which tests/param_test.cc covers.

Usage: tests/env_test.py [path/to/sendrecv_perf]. Exits 0 when every case passed.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PERF = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, os.environ.get("BUILD", "build"), "perf", "sendrecv_perf")

# variable: (invalid value, what stderr must contain)
INVALID = {
    "SZ_DEBUG": ("LOUD", "SZ_DEBUG"),
    "SZ_DEBUG_SUBSYS": ("INIT,FOO", "SZ_DEBUG_SUBSYS"),
    "SZ_CPU_THREADS": ("abc", "SZ_CPU_THREADS"),
    "SZ_CPU_PARALLEL_BYTES": ("1Q", "SZ_CPU_PARALLEL_BYTES"),
    "SZ_CPU_SIMD": ("yes", "SZ_CPU_SIMD"),
    "SZ_SLICE_BYTES": ("4X", "SZ_SLICE_BYTES"),
    "SZ_PIPELINE_DEPTH": ("-1", "SZ_PIPELINE_DEPTH"),
    "SZ_TIMEOUT_MS": ("1e3", "SZ_TIMEOUT_MS"),
    "SZ_CRC": ("on", "SZ_CRC"),
    "SZ_AUTH_DATA": ("yes", "SZ_AUTH_DATA"),
    "SZ_ENCRYPT": ("on", "SZ_ENCRYPT"),
    "SZ_RUNTIME_CONNECT": ("lazy", "SZ_RUNTIME_CONNECT"),
    "SZ_AUTO_MIN_BYTES": ("big", "SZ_AUTO_MIN_BYTES"),
    "SZ_NSOCKS": ("two", "SZ_NSOCKS"),
    "SZ_SOCKET_BUF_BYTES": ("lots", "SZ_SOCKET_BUF_BYTES"),
    "SZ_SOCKET_IFNAME": ("nosuch0", "SZ_SOCKET_IFNAME"),
    "SZ_WIRE": ("pigeon", "SZ_WIRE"),
    "SZ_CODEC": ("maybe", "SZ_CODEC"),
    "SZ_CODEBOOK": ("/nonexistent/sz.codebook", "/nonexistent/sz.codebook"),
    "SZ_COMM_ID": ("no-port", "no-port"),
    "SZ_TCP_LINK_GBPS": ("-3", "SZ_TCP_LINK_GBPS"),
    "SZ_IPC_LINK_GBPS": ("fast", "SZ_IPC_LINK_GBPS"),
}
GPU_ONLY = {"SZ_SLOT_SLICE_BYTES", "SZ_SLOT_BLOCKS", "SZ_SLOT_COUNT", "SZ_CUMEM_HOST"}
# Read by the NCCL interposer alone (interpose/), not by sendrecv_perf: its invalid values are
# checked with the interposer preloaded by tests/interpose_fake_nccl_test.cc (SZ_REAL_NCCL's by
# tests/interpose/pynccl_ctypes_test.py).
INTERPOSER_ONLY = {"SZ_INTERPOSE", "SZ_INTERPOSE_STATS", "SZ_REAL_NCCL"}
# The ib wire's, read only by that wire's connect (a GPU and an RDMA NIC); SZ_IB_HCA's parser is
# covered by tests/ib_pure_test.cc and tests/ib_verbs_test.cc.
IB_ONLY = {"SZ_IB_HCA", "SZ_IB_GID_INDEX", "SZ_IB_TIMEOUT", "SZ_IB_RETRY_CNT", "SZ_IB_GDR"}
NO_INVALID_VALUE = {"SZ_COMM_SECRET"}  # any string is a secret


def library_variables():
    names = set()
    for top in ("src", "codec", "transport", "kernels", "interpose"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                text = open(os.path.join(dirpath, f), errors="replace").read()
                names.update(re.findall(r'getenv\("(SZ_[A-Z0-9_]+)"\)', text))
                names.update("SZ_" + n for n in re.findall(r'SZ_PARAM\(\w+, "([A-Z0-9_]+)"', text))
    return names


def main():
    failures = []
    documented = set(re.findall(r"^\| `(SZ_[A-Z0-9_]+)` \|", open(os.path.join(ROOT, "docs", "ENV.md")).read(), re.M))
    read = library_variables()
    for name in sorted(read - documented):
        failures.append(f"{name} is read by the library but has no row in docs/ENV.md")
    for name in sorted(read - set(INVALID) - GPU_ONLY - IB_ONLY - NO_INVALID_VALUE - INTERPOSER_ONLY):
        failures.append(f"{name}: no invalid-value case in tests/env_test.py")
    base = dict(os.environ, SZ_SOCKET_IFNAME="lo")
    for k in list(base):
        if k.startswith("SZ_") and k != "SZ_SOCKET_IFNAME":
            del base[k]
    for name, (value, want) in INVALID.items():
        env = dict(base, **{name: value})
        # --codec on makes the CPU codec run; the codec's own variables need the default (auto).
        codec = [] if name in ("SZ_CODEC", "SZ_AUTO_MIN_BYTES") else ["--codec", "on"]
        r = subprocess.run([PERF, "-t", "2", "-b", "8M", "-e", "8M", "-n", "1", "-w", "0", "-d", "bfloat16",
                            "--timeout-ms", "20000"] + codec, capture_output=True, text=True, env=env, timeout=120)
        if want not in r.stderr:
            failures.append(f"{name}={value}: stderr does not name {want!r}: {r.stderr.strip()[-300:]!r}")
        else:
            print(f"env_test: ok: {name}={value}: {r.stderr.strip().splitlines()[0][:150]}")
    for f in failures:
        print(f"env_test: FAIL {f}")
    print(f"env_test: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
