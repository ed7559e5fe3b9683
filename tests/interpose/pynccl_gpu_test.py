#!/usr/bin/env python3
"""The interposer as vLLM's NCCL on one GPU: loaded with ctypes.CDLL (as pynccl loads
VLLM_NCCL_SO_PATH), the fake NCCL as the real one (SZ_REAL_NCCL; the real NCCL refuses two ranks
on one GPU), two ranks as threads of this process. The ranks make an NCCL communicator with
ncclCommInitRank, the interposer makes a SplitZip communicator beside it, and rank 0's ncclSend of
real BF16 KV in device memory reaches rank 1's ncclRecv through SplitZip: bit-exact, compressed
(SZ_INTERPOSE_STATS), the fake NCCL never seeing the send.

Usage: tests/interpose/pynccl_gpu_test.py INTERPOSER FAKE_NCCL KV_BF16_FILE   (needs torch and a GPU)
"""
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import threading

c_int, c_size_t, c_void_p = ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p
BF16 = 9


class ncclUniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_byte * 128)]


def child(interposer, fake, kv_file):
    import torch
    lib = ctypes.CDLL(interposer)
    for name, argtypes in (("ncclGetUniqueId", [ctypes.POINTER(ncclUniqueId)]),
                           ("ncclCommInitRank", [ctypes.POINTER(c_void_p), c_int, ncclUniqueId, c_int]),
                           ("ncclSend", [c_void_p, c_size_t, c_int, c_int, c_void_p, c_void_p]),
                           ("ncclRecv", [c_void_p, c_size_t, c_int, c_int, c_void_p, c_void_p]),
                           ("ncclCommDestroy", [c_void_p])):
        getattr(lib, name).argtypes = argtypes
        getattr(lib, name).restype = c_int
    kv = torch.from_file(kv_file, size=os.path.getsize(kv_file), dtype=torch.uint8)
    kv = kv[:kv.numel() // 2 * 2].view(torch.int16)
    kv = kv.repeat(max(1, (64 << 20) // (2 * kv.numel()) + 1))[:32 << 20]  # 64 MiB of BF16 bits
    uid = ncclUniqueId()
    assert lib.ncclGetUniqueId(ctypes.byref(uid)) == 0
    results = [None, None]
    meet = threading.Barrier(2, timeout=120)  # both ranks post each operation of a pass together

    def rank(r):
        try:
            torch.cuda.set_device(0)
            stream = torch.cuda.Stream()
            buf = kv.cuda() if r == 0 else torch.zeros_like(kv, device="cuda")
            torch.cuda.synchronize()
            comm = c_void_p()
            assert lib.ncclCommInitRank(ctypes.byref(comm), 2, uid, r) == 0, "ncclCommInitRank"
            for _ in range(3):  # the same send three times: the data must come through each time
                if r == 1:  # on the rank's own stream: a device-wide sync would wait for rank 0's send
                    with torch.cuda.stream(stream):
                        buf.zero_()
                meet.wait()
                call = lib.ncclSend if r == 0 else lib.ncclRecv
                res = call(c_void_p(buf.data_ptr()), buf.numel(), BF16, 1 - r, comm, c_void_p(stream.cuda_stream))
                assert res == 0, f"rank {r}: {res}"
                stream.synchronize()
                if r == 1:
                    assert torch.equal(buf.cpu(), kv), "rank 1 received other bits"
            assert lib.ncclCommDestroy(comm) == 0
            results[r] = "ok"
        except BaseException as e:  # reported below
            results[r] = repr(e)

    threads = [threading.Thread(target=rank, args=(r,), daemon=True) for r in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    log = ctypes.CDLL(fake).fakeNcclLog
    log.restype = ctypes.c_char_p
    sends = [l for l in log().decode().splitlines() if l.startswith("ncclSend")]
    if results != ["ok", "ok"] or sends:
        print(f"ranks: {results}; sends that reached the fake NCCL: {sends}", flush=True)
        os._exit(1)  # a rank still hung in a call must not keep the process alive
    print("child ok", flush=True)
    os._exit(0)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(*sys.argv[2:])
        return 0
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    interposer, fake, kv_file = (os.path.abspath(p) for p in sys.argv[1:])
    stats = tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False).name
    env = {**os.environ, "SZ_REAL_NCCL": fake, "SZ_INTERPOSE_STATS": stats, "SZ_SOCKET_IFNAME": "lo",
           "SZ_DEBUG": os.environ.get("SZ_DEBUG", "WARN"),
           # on: with both ranks on one GPU, auto would rightly send raw (no link to save).
           "SZ_CODEC": "on"}
    r = subprocess.run([sys.executable, __file__, "--child", interposer, fake, kv_file], env=env, capture_output=True,
                       text=True, timeout=240)
    print(r.stdout[-4000:], r.stderr[-4000:])
    lines = [json.loads(l) for l in open(stats) if l.strip()]
    os.unlink(stats)
    sent = [l for l in lines if l.get("sends", 0) > 0]
    ok = r.returncode == 0 and "child ok" in r.stdout and sent and sent[0]["wireBytes"] < sent[0]["rawBytes"]
    if sent:
        print(f"through SplitZip: {sent[0]['sends']} sends, {sent[0]['rawBytes']} bytes, {sent[0]['wireBytes']} on the "
              f"wire (ratio {sent[0]['rawBytes'] / max(1, sent[0]['wireBytes']):.4f})")
    print(f"pynccl_gpu_test: {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
