#!/usr/bin/env python3
"""Plain NCCL send/recv between two GPUs, the baseline SplitZip's goals are stated against.

The same exchange as sendrecv_perf (each rank sends to the next rank and receives from the
previous one, in one group) through PyTorch's NCCL process group, with no SplitZip in the
path: its time per size is the "raw NCCL" figure of the issue's goals (e.g. ~368 GB/s on
NVLink at 1 GiB). Environment settings (NCCL_P2P_DISABLE, NCCL_MAX_NCHANNELS, ...) apply as
they do to sendrecv_perf. Median of -n timed iterations (CUDA events) after -w warm-up ones.

    python3 perf/nccl_baseline.py -b 1M -e 1G -f 32 [-n 10] [-w 3] [-J out.json]
"""
import argparse
import json
import os
import socket
import statistics

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def size_arg(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


def exchange(send, recv, rank, nranks):
    ops = [dist.P2POp(dist.isend, send, (rank + 1) % nranks), dist.P2POp(dist.irecv, recv, (rank - 1) % nranks)]
    for req in dist.batch_isend_irecv(ops):
        req.wait()


def run(rank, nranks, port, args):
    torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=nranks)
    rows, size = [], args.b
    while size <= args.e:
        send = torch.full((size,), rank, dtype=torch.uint8, device="cuda")
        recv = torch.empty(size, dtype=torch.uint8, device="cuda")
        for _ in range(args.w):
            exchange(send, recv, rank, nranks)
        times = []
        for _ in range(args.n):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            dist.barrier()
            start.record()
            exchange(send, recv, rank, nranks)
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop) * 1e3)  # us
        wrong = int((recv != (rank - 1) % nranks).sum().item())
        us = statistics.median(times)
        rows.append({"size": size, "time_us": us, "algbw": size / us / 1e3, "wrong": wrong})
        size = size * args.f if args.f > 1 else size + args.i
    dist.destroy_process_group()
    return rows


def worker(rank, nranks, port, args, queue):
    rows = run(rank, nranks, port, args)
    if rank == 0:
        queue.put(rows)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-b", type=size_arg, default=1 << 20)
    p.add_argument("-e", type=size_arg, default=1 << 30)
    p.add_argument("-f", type=int, default=2)
    p.add_argument("-i", type=size_arg, default=1 << 20)
    p.add_argument("-n", type=int, default=10)
    p.add_argument("-w", type=int, default=3)
    p.add_argument("-g", type=int, default=2, help="ranks, one GPU each (wrapping around the GPUs there are)")
    p.add_argument("-J", help="write the rows as JSON")
    args = p.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, args.g, port, args, queue)) for r in range(args.g)]
    for proc in procs:
        proc.start()
    rows = queue.get()
    for proc in procs:
        proc.join()
    print("# nccl_baseline: plain NCCL send/recv (PyTorch), %d ranks; env: %s" % (
        args.g, " ".join(f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith("NCCL_"))))
    print("# %12s %12s %10s %7s" % ("size (B)", "time (us)", "algbw", "#wrong"))
    for r in rows:
        print("  %12d %12.1f %10.2f %7d" % (r["size"], r["time_us"], r["algbw"], r["wrong"]))
    if args.J:
        with open(args.J, "w") as f:
            json.dump(rows, f, indent=2)
    return 1 if any(r["wrong"] for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
