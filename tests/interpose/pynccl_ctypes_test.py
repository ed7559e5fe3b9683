#!/usr/bin/env python3
"""The interposer as vLLM's NCCL (VLLM_NCCL_SO_PATH): loaded with ctypes.CDLL, as vLLM's pynccl
wrapper loads its NCCL, it must export every function of NCCL's host API (the nccl.h it was built
against) and forward the ones pynccl declares, with pynccl's argument types, to the real NCCL
that SZ_REAL_NCCL names: here the fake NCCL of tests/interpose/, whose log shows what arrived.
No GPU is visible (CUDA_VISIBLE_DEVICES is empty), so the communicator is NCCL's alone and every
call is forwarded; data through SplitZip is tests/gpu/run_all.sh's.

Usage: tests/interpose/pynccl_ctypes_test.py INTERPOSER FAKE_NCCL   (prints "pynccl_ctypes_test: ok")
"""
import ctypes
import os
import re
import shutil
import subprocess
import sys

# The calls vLLM's pynccl wrapper (vllm/distributed/device_communicators/pynccl_wrapper.py)
# declares, with its ctypes types: name -> (restype, argtypes).
c_int, c_size_t, c_void_p = ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p


class ncclUniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_byte * 128)]


PYNCCL = {
    "ncclGetErrorString": (ctypes.c_char_p, [c_int]),
    "ncclGetVersion": (c_int, [ctypes.POINTER(c_int)]),
    "ncclGetUniqueId": (c_int, [ctypes.POINTER(ncclUniqueId)]),
    "ncclCommInitRank": (c_int, [ctypes.POINTER(c_void_p), c_int, ncclUniqueId, c_int]),
    "ncclAllReduce": (c_int, [c_void_p, c_void_p, c_size_t, c_int, c_int, c_void_p, c_void_p]),
    "ncclReduce": (c_int, [c_void_p, c_void_p, c_size_t, c_int, c_int, c_int, c_void_p, c_void_p]),
    "ncclAllGather": (c_int, [c_void_p, c_void_p, c_size_t, c_int, c_void_p, c_void_p]),
    "ncclReduceScatter": (c_int, [c_void_p, c_void_p, c_size_t, c_int, c_int, c_void_p, c_void_p]),
    "ncclSend": (c_int, [c_void_p, c_size_t, c_int, c_int, c_void_p, c_void_p]),
    "ncclRecv": (c_int, [c_void_p, c_size_t, c_int, c_int, c_void_p, c_void_p]),
    "ncclBroadcast": (c_int, [c_void_p, c_void_p, c_size_t, c_int, c_int, c_void_p, c_void_p]),
    "ncclCommDestroy": (c_int, [c_void_p]),
    "ncclGroupStart": (c_int, []),
    "ncclGroupEnd": (c_int, []),
    "ncclCommWindowRegister": (c_int, [c_void_p, c_void_p, c_size_t, ctypes.POINTER(c_void_p), c_int]),
    "ncclCommWindowDeregister": (c_int, [c_void_p, c_void_p]),
}
FLOAT, BF16, SUM = 7, 9, 0


def nccl_header():
    nvcc = shutil.which("nvcc") or os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")
    for path in (os.path.join(os.path.dirname(os.path.realpath(nvcc)), "..", "include", "nccl.h"), "/usr/include/nccl.h"):
        if os.path.exists(path):
            return os.path.normpath(path)
    return None


def host_api(header):
    """The functions nccl.h declares (not the pnccl profiler names)."""
    text = open(header).read()
    return set(re.findall(r"^\s*(?:ncclResult_t|const\s+char\s*\*)\s+(nccl[A-Z]\w*)\s*\(", text, re.M))


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.split() and line.split()[-1].startswith("nccl")}


def child(interposer, fake):
    """What pynccl does with its NCCL, through the interposer; exits non-zero on the first miss."""
    lib = ctypes.CDLL(interposer)  # pynccl: ctypes.CDLL(so_file)
    f = {}
    for name, (restype, argtypes) in PYNCCL.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
        f[name] = fn
    log = ctypes.CDLL(fake).fakeNcclLog  # the same library the interposer loaded (one path, one handle)
    log.restype = ctypes.c_char_p

    def ok(name, *args):
        r = f[name](*args)
        assert r == 0, f"{name} -> {r}"

    version = c_int()
    ok("ncclGetVersion", ctypes.byref(version))
    assert version.value >= 21900, version.value
    uid = ncclUniqueId()
    ok("ncclGetUniqueId", ctypes.byref(uid))
    comm = c_void_p()
    ok("ncclCommInitRank", ctypes.byref(comm), 1, uid, 0)
    buf = ctypes.create_string_buffer(1 << 16)
    ok("ncclAllReduce", buf, buf, 1024, FLOAT, SUM, comm, None)
    ok("ncclReduce", buf, buf, 1025, FLOAT, SUM, 0, comm, None)
    ok("ncclAllGather", buf, buf, 1026, FLOAT, comm, None)
    ok("ncclReduceScatter", buf, buf, 1027, FLOAT, SUM, comm, None)
    ok("ncclBroadcast", buf, buf, 1028, FLOAT, 0, comm, None)
    ok("ncclGroupStart")
    ok("ncclSend", buf, 4096, BF16, 0, comm, None)
    ok("ncclRecv", buf, 4096, BF16, 0, comm, None)
    ok("ncclGroupEnd")
    win = c_void_p()
    ok("ncclCommWindowRegister", comm, buf, 1 << 16, ctypes.byref(win), 1)
    ok("ncclCommWindowDeregister", comm, win)
    assert f["ncclGetErrorString"](0) == b"no error", f["ncclGetErrorString"](0)
    # A function the real NCCL lacks (the fake has no all-to-all): ncclInvalidUsage, not a crash.
    alltoall = lib.ncclAlltoAll
    alltoall.restype = c_int
    assert alltoall(c_void_p(ctypes.addressof(buf)), c_void_p(ctypes.addressof(buf)), c_size_t(8), c_int(FLOAT),
                    comm, None) == 5
    ok("ncclCommDestroy", comm)
    got = log().decode()
    for line in ("ncclGetVersion", "ncclCommInitRank rank=0 nranks=1", "ncclAllReduce rank=0 count=1024 type=7",
                 "ncclReduce rank=0 count=1025 type=7 op=0 root=0", "ncclAllGather rank=0 count=1026 type=7",
                 "ncclReduceScatter rank=0 count=1027 type=7 op=0", "ncclBroadcast rank=0 count=1028 root=0",
                 "ncclSend rank=0 count=4096 type=9 peer=0", "ncclRecv rank=0 count=4096 type=9 peer=0",
                 "ncclCommWindowRegister rank=0 size=65536 flags=1", "ncclCommWindowDeregister rank=0 same=1",
                 "ncclCommDestroy rank=0"):
        assert line in got.splitlines(), f"the fake NCCL never saw {line!r}:\n{got}"
    print("child ok")


def child_without_nccl(interposer):
    """SZ_REAL_NCCL names no library: every call fails with ncclInvalidUsage, none crashes."""
    lib = ctypes.CDLL(interposer)
    version = c_int(0)
    assert lib.ncclGetVersion(ctypes.byref(version)) == 5
    lib.ncclGetErrorString.restype = ctypes.c_char_p
    assert lib.ncclGetErrorString(0), "ncclGetErrorString gives a message even without an NCCL"
    uid = ncclUniqueId()
    assert lib.ncclGetUniqueId(ctypes.byref(uid)) == 5
    print("child ok")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "--child-without-nccl":
        child_without_nccl(sys.argv[2])
        return 0
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    interposer, fake = (os.path.abspath(p) for p in sys.argv[1:])
    if not os.path.exists(interposer):
        print(f"pynccl_ctypes_test: SKIPPED: no interposer at {interposer} (a build without CUDA)")
        return 0
    header = nccl_header()
    assert header, "no nccl.h found beside nvcc or in /usr/include"
    api, have = host_api(header), exported(interposer)
    missing = sorted(api - have)
    assert not missing, f"the interposer lacks {missing} of {header}"
    assert set(PYNCCL) <= have, sorted(set(PYNCCL) - have)
    # Nothing but NCCL's names (ncclCommRevoke may be newer than the header).
    assert have <= api | {"ncclCommRevoke"}, sorted(have - api)
    env = {**os.environ, "SZ_REAL_NCCL": fake, "CUDA_VISIBLE_DEVICES": "", "SZ_SOCKET_IFNAME": "lo"}
    r = subprocess.run([sys.executable, __file__, "--child", interposer, fake], env=env, capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0 or "child ok" not in r.stdout:
        print(r.stdout, r.stderr)
        print("pynccl_ctypes_test: FAILED")
        return 1
    env.update(SZ_REAL_NCCL="/nonexistent/libnccl.so.2", SZ_DEBUG="WARN")
    r = subprocess.run([sys.executable, __file__, "--child-without-nccl", interposer], env=env, capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0 or "child ok" not in r.stdout or "SZ_REAL_NCCL=/nonexistent/libnccl.so.2" not in r.stderr:
        print(r.stdout, r.stderr)
        print("pynccl_ctypes_test: FAILED (SZ_REAL_NCCL naming no library)")
        return 1
    print(f"pynccl_ctypes_test: ok ({len(api)} functions of {header} exported; pynccl's {len(PYNCCL)} forwarded to "
          "SZ_REAL_NCCL's library)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
