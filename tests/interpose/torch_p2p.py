#!/usr/bin/env python3
"""PyTorch point-to-point over NCCL, for the SplitZip interposer's two-GPU test.

A program that knows nothing of SplitZip: two processes (one GPU each) exchange bf16 tensors of
real KV (tests/data/tinystories_kv_eval_bf16.safetensors, tiled to each size) with
torch.distributed's NCCL backend: send/recv, isend/irecv in both directions at once, and
batch_isend_irecv mixing large bf16 (what the interposer compresses), a small bf16 (below
SZ_AUTO_MIN_BYTES), fp16 and int32 tensors (types it forwards) in one group; then collectives
(all_reduce, broadcast of bf16, all_gather) on the same process group. Every received tensor is
compared bit for bit with what the sender sent. It runs unchanged with and without
LD_PRELOAD=build/lib/libsplitzip_nccl.so (tests/interpose/run_torch_p2p.sh runs both).

Prints one line "RESULT {json}" from rank 0: {"ok", "checks": {name: bool}, "gbps": {size: GB/s
of a one-way send/recv, median}}. Exits 1 when a check failed.

    python3 tests/interpose/torch_p2p.py [--sizes 1M,16M,64M] [-n 10]
"""
import argparse
import json
import os
import socket
import statistics
import struct
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
KV = os.path.join(ROOT, "tests", "data", "tinystories_kv_eval_bf16.safetensors")


def size_arg(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


def real_kv_bits():
    """Every bf16 tensor of the sample, concatenated, as int16 bits (no safetensors package needed)."""
    with open(KV, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    parts = sorted((v["data_offsets"] for k, v in header.items() if k != "__metadata__" and v["dtype"] == "BF16"))
    raw = b"".join(data[a:b] for a, b in parts)
    return torch.frombuffer(bytearray(raw), dtype=torch.int16)


def kv_tensor(bits, nbytes, salt):
    """`nbytes` of real KV as bf16 on the GPU, rotated by `salt` so that tensors differ."""
    n = nbytes // 2
    reps = (n + salt) // bits.numel() + 1
    return bits.repeat(reps)[salt:salt + n].cuda().view(torch.bfloat16)


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.view(torch.uint8), b.view(torch.uint8))


def run(rank, port, args):
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    peer = 1 - rank
    bits = real_kv_bits()
    checks = {}

    # send / recv, one way, every size
    for size in args.sizes:
        sent = kv_tensor(bits, size, 1)
        if rank == 0:
            dist.send(sent, 1)
        else:
            got = torch.empty_like(sent)
            dist.recv(got, 0)
            checks[f"send/recv {size}"] = same(got, sent)

    # isend / irecv, both directions at once
    size = args.sizes[-1]
    mine, theirs = kv_tensor(bits, size, 10 + rank), kv_tensor(bits, size, 10 + peer)
    got = torch.empty_like(theirs)
    reqs = [dist.isend(mine, peer), dist.irecv(got, peer)]
    for r in reqs:
        r.wait()
    checks["isend/irecv both ways"] = same(got, theirs)

    # batch_isend_irecv: compressed and forwarded operations in one NCCL group
    def batch(r):
        return [kv_tensor(bits, size, 20 + r),                                   # large bf16: SplitZip
                kv_tensor(bits, 4096, 30 + r),                                   # small bf16: NCCL
                kv_tensor(bits, 1 << 20, 40 + r).view(torch.float16).clone(),     # fp16: NCCL
                torch.arange(1000, dtype=torch.int32, device="cuda") * (r + 1)]  # int32: NCCL
    out, expect = batch(rank), batch(peer)
    into = [torch.empty_like(t) for t in expect]
    ops = [dist.P2POp(dist.isend, t, peer) for t in out] + [dist.P2POp(dist.irecv, t, peer) for t in into]
    for r in dist.batch_isend_irecv(ops):
        r.wait()
    for name, a, b in zip(["bf16 large", "bf16 small", "fp16", "int32"], into, expect):
        checks[f"batch {name}"] = same(a, b)

    # collectives on the same process group stay NCCL's
    x = torch.full((1 << 20,), float(rank + 1), device="cuda")
    dist.all_reduce(x)
    checks["all_reduce"] = bool((x == 3.0).all())
    b = kv_tensor(bits, 1 << 20, 50) if rank == 0 else torch.empty(1 << 19, dtype=torch.bfloat16, device="cuda")
    dist.broadcast(b, 0)
    checks["broadcast bf16"] = same(b, kv_tensor(bits, 1 << 20, 50))
    parts = [torch.empty(4, device="cuda") for _ in range(2)]
    dist.all_gather(parts, torch.full((4,), float(rank), device="cuda"))
    checks["all_gather"] = all(bool((p == i).all()) for i, p in enumerate(parts))

    # one-way send/recv time per size (rank 1 receives), median of -n after warm-up
    gbps = {}
    for size in args.sizes:
        t = kv_tensor(bits, size, 60)
        times = []
        for i in range(args.w + args.n):
            dist.barrier()
            torch.cuda.synchronize()
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            dist.send(t, 1) if rank == 0 else dist.recv(t, 0)
            stop.record()
            stop.synchronize()
            if i >= args.w:
                times.append(start.elapsed_time(stop) / 1e3)
        gbps[str(size)] = size / statistics.median(times) / 1e9

    results = [None, None]
    dist.all_gather_object(results, {"checks": checks, "gbps": gbps})
    dist.destroy_process_group()
    return results


def worker(rank, port, args, queue):
    try:
        queue.put((rank, run(rank, port, args), None))
    except Exception as e:  # reported by the parent, which exits 1
        queue.put((rank, None, repr(e)))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1M,16M,64M", help="comma-separated sizes in bytes (K, M, G)")
    p.add_argument("-n", type=int, default=10, help="timed iterations")
    p.add_argument("-w", type=int, default=3, help="warm-up iterations")
    args = p.parse_args()
    args.sizes = [size_arg(s) for s in args.sizes.split(",")]
    if torch.cuda.device_count() < 2:
        print("torch_p2p: SKIPPED: needs two GPUs, found", torch.cuda.device_count())
        return 0
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, port, args, queue)) for r in range(2)]
    for pr in procs:
        pr.start()
    got = dict((r, (res, err)) for r, res, err in (queue.get(timeout=600) for _ in procs))
    for pr in procs:
        pr.join()
    errors = {r: err for r, (res, err) in got.items() if err}
    if errors:
        print("RESULT " + json.dumps({"ok": False, "errors": errors}))
        return 1
    both = got[0][0]
    checks = {**both[0]["checks"], **both[1]["checks"]}
    ok = all(checks.values())
    print("RESULT " + json.dumps({"ok": ok, "checks": checks, "gbps": both[1]["gbps"]}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
