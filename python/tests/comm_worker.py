"""One rank of a two-process communicator test: `comm_worker.py SCENARIO`, started by
conftest.run_ranks with SZ_COMM_ID / SZ_RANK / SZ_NRANKS set. Exits 0 when its checks pass and
prints a line starting with "result:" for the test to read."""
from __future__ import annotations

import os
import sys
import time

import ml_dtypes
import numpy as np

import splitzip as sz

RANK = int(os.environ["SZ_RANK"])
PEER = 1 - RANK


def data(n: int, seed: int, dtype=ml_dtypes.bfloat16) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(n).astype(np.float32) * 0.5).astype(dtype)


def same_bits(a, b) -> bool:
    return np.array_equal(np.asarray(a).reshape(-1).view(np.uint8), np.asarray(b).reshape(-1).view(np.uint8))


def arrays(comm: sz.Communicator) -> None:
    """Rank 0 sends arrays of several dtypes and sizes, rank 1 receives and checks them."""
    cases = [data(3 << 20, 1), data(1000, 2, np.float32), data(777, 3, ml_dtypes.float8_e5m2),
             np.arange(12345, dtype=np.int32), data(0, 4)]
    for i, x in enumerate(cases):
        if RANK == 0:
            comm.send(x, peer=1)
        else:
            out = np.empty_like(x)
            comm.recv(out, peer=0)
            assert same_bits(out, x), f"case {i}"
    if os.environ.get("TEST_TORCH") == "1":  # a CPU tensor too, where the test's interpreter has torch
        import torch
        t = torch.randn(4, 1024, dtype=torch.bfloat16, generator=torch.Generator().manual_seed(5))
        if RANK == 0:
            comm.send(t, peer=1)
        else:
            out = torch.empty_like(t)
            comm.recv(out, peer=0)
            assert torch.equal(out.view(torch.int16), t.view(torch.int16))
    # BF16 bits in a uint16 array travel as BF16 with dtype= (as encode's), so they compress.
    bits = data(1 << 20, 6).view(np.uint16)
    before = comm.stats()
    if RANK == 0:
        comm.send(bits, peer=1, dtype="bf16")
    else:
        out = np.empty_like(bits)
        comm.recv(out, peer=0, dtype="bf16")
        assert np.array_equal(out, bits), "uint16 bits sent as bf16"
    s = comm.stats()
    if RANK == 0:
        assert s["raw_bytes"] >= sum(x.nbytes for x in cases) and s["wire_bytes"] > 0
        if os.environ.get("TEST_CODEC") == "on":
            assert s["compressed_slices"] > before["compressed_slices"], "uint16 sent as bf16 did not compress"
        print(f"result: raw {s['raw_bytes']} wire {s['wire_bytes']}")
    else:  # the receiver's own counters
        assert s["recv_raw_bytes"] >= sum(x.nbytes for x in cases) + bits.nbytes, s
        assert s["recv_wire_bytes"] > 0 and s["recv_slices"] >= len(cases), s
        assert s["raw_bytes"] == 0, s


def blocks(comm: sz.Communicator) -> None:
    """KV-like blocks of different shapes, received into a different split of the same total."""
    sent = [data(4096 * (i + 1), 10 + i) for i in range(6)]
    total = sum(b.size for b in sent)
    if RANK == 0:
        comm.send_blocks(sent, peer=1)
    else:
        recv = [np.empty(n, ml_dtypes.bfloat16) for n in (total // 3, total // 3, total - 2 * (total // 3))]
        comm.recv_blocks(recv, peer=0)
        assert same_bits(np.concatenate(recv), np.concatenate(sent))


def groups(comm: sz.Communicator) -> None:
    """Both ranks send and receive at once: without the group, two blocking sends would deadlock."""
    mine, theirs = data(2 << 20, 20 + RANK), data(2 << 20, 20 + PEER)
    out = np.empty_like(theirs)
    with sz.group():
        comm.send(mine, peer=PEER)
        comm.recv(out, peer=PEER)
    assert same_bits(out, theirs)
    outs = [np.empty(1000, np.float32) for _ in range(3)]
    with comm.group():
        with comm.group():  # groups nest
            for i in range(3):
                comm.send(data(1000, 30 + 3 * RANK + i, np.float32), peer=PEER)
        for o in outs:
            comm.recv(o, peer=PEER)
    for i, o in enumerate(outs):
        assert same_bits(o, data(1000, 30 + 3 * PEER + i, np.float32))


def mismatch(comm: sz.Communicator) -> None:
    """A receive of another count: both sides raise InvalidUsageError (NCCL could not tell)."""
    try:
        if RANK == 0:
            comm.send(data(1000, 1), peer=1)
        else:
            comm.recv(np.empty(999, ml_dtypes.bfloat16), peer=0)
    except sz.InvalidUsageError as e:
        print(f"result: {type(e).__name__} {e.code.name}: {e.message}")
        comm.abort()
        return
    raise AssertionError("the mismatched pair did not raise")


def killed_peer(comm: sz.Communicator) -> None:
    """Rank 1 dies without a word; rank 0's receive must raise, well within the timeout."""
    if RANK == 1:
        os._exit(17)
    start = time.monotonic()
    try:
        comm.recv(np.empty(1 << 20, ml_dtypes.bfloat16), peer=1)
    except (sz.RemoteError, sz.OperationTimeoutError) as e:
        print(f"result: {type(e).__name__} after {time.monotonic() - start:.2f} s: {e}")
        comm.abort()
        return
    raise AssertionError("the receive from a dead peer returned")


def silent_peer(comm: sz.Communicator) -> None:
    """Rank 1 stays alive but never sends: rank 0 raises OperationTimeoutError after timeout_ms."""
    if RANK == 1:
        time.sleep(8)
        os._exit(0)
    start = time.monotonic()
    try:
        comm.recv(np.empty(1000, ml_dtypes.bfloat16), peer=1)
    except sz.OperationTimeoutError as e:
        print(f"result: {type(e).__name__} after {time.monotonic() - start:.2f} s: {e}")
        comm.abort()
        return
    raise AssertionError("the receive from a silent peer returned")


def watchdog_abort(comm: sz.Communicator) -> None:
    """Rank 1 stays alive but never sends; on rank 0 a watchdog thread aborts the communicator
    while recv blocks in it (PyTorch's watchdog pattern): the recv raises a SplitZipError, the
    abort waits for it (it used to free the communicator under the recv: a crash or a hang)."""
    if RANK == 1:
        time.sleep(8)
        os._exit(0)
    import threading
    aborted = threading.Event()

    def watchdog():
        time.sleep(0.5)
        comm.abort()
        aborted.set()

    threading.Thread(target=watchdog).start()
    start = time.monotonic()
    try:
        comm.recv(np.empty(1 << 20, ml_dtypes.bfloat16), peer=1)
    except sz.SplitZipError as e:
        assert aborted.wait(10), "the abort did not return after the recv"
        print(f"result: {type(e).__name__} after {time.monotonic() - start:.2f} s")
        try:
            comm.send(np.ones(4, np.float32), peer=1)
        except sz.InvalidUsageError:
            return
        raise AssertionError("a send on the aborted communicator did not raise")
    raise AssertionError("the receive from a silent peer returned")


def torch_distributed(comm: sz.Communicator) -> None:
    """Made by Communicator.from_torch_distributed over gloo (see main): a plain exchange."""
    groups(comm)


def cuda_tensors(comm: sz.Communicator) -> None:
    """CUDA tensors on a side stream (rank r on GPU r % count): send/recv and blocks enqueue on
    the current stream and return; the stream sees the data once it passes the operation."""
    import torch
    device = torch.device("cuda", RANK % torch.cuda.device_count())
    torch.cuda.set_device(device)
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(3 << 20, dtype=torch.bfloat16, generator=gen).to(device)
    parts = [torch.randn(n, dtype=torch.bfloat16, generator=gen).to(device) for n in (4096, 70000, 1 << 20)]
    stream = torch.cuda.Stream(device)
    with torch.cuda.stream(stream):
        if RANK == 0:
            comm.send(x, peer=1)
            comm.send_blocks(parts, peer=1)
        else:
            out = torch.empty_like(x)
            comm.recv(out, peer=0)
            flat = torch.empty(sum(p.numel() for p in parts), dtype=torch.bfloat16, device=device)
            comm.recv_blocks([flat], peer=0)
            doubled = out.float() * 2  # queued behind the receive on the same stream
    stream.synchronize()
    if RANK == 1:
        assert torch.equal(out.view(torch.int16), x.view(torch.int16))
        assert torch.equal(flat.view(torch.int16), torch.cat(parts).view(torch.int16))
        assert torch.equal(doubled, x.float() * 2)


def cuda_narrow(comm: sz.Communicator) -> None:
    """FP16 and FP8 E4M3 CUDA tensors (vLLM's and SGLang's fp8 KV cache is E4M3) with the codec on:
    frames of format version 2 from device buffers, bit-exact, fewer bytes on the wire."""
    import torch
    device = torch.device("cuda", RANK % torch.cuda.device_count())
    torch.cuda.set_device(device)
    gen = torch.Generator().manual_seed(11)
    half = (torch.randn(1 << 20, generator=gen) * 0.5).to(torch.float16).to(device)
    fp8 = (torch.randn(3 << 19, generator=gen) * 64).to(torch.float8_e4m3fn).to(device)
    if RANK == 0:
        comm.send(half, peer=1)
        comm.send(fp8, peer=1)
        torch.cuda.current_stream().synchronize()
        stats = comm.stats()
        assert stats["wire_bytes"] < 0.97 * stats["raw_bytes"], stats
    else:
        got_half, got_fp8 = torch.empty_like(half), torch.empty_like(fp8)
        comm.recv(got_half, peer=0)
        comm.recv(got_fp8, peer=0)
        torch.cuda.current_stream().synchronize()
        assert torch.equal(got_half.view(torch.int16), half.view(torch.int16))
        assert torch.equal(got_fp8.view(torch.uint8), fp8.view(torch.uint8))


SCENARIOS = {f.__name__: f for f in (arrays, blocks, groups, mismatch, killed_peer, silent_peer, watchdog_abort,
                                     torch_distributed, cuda_tensors, cuda_narrow)}


def main() -> None:
    scenario = sys.argv[1]
    config = {"codec": os.environ.get("TEST_CODEC") or None,
              "timeout_ms": int(os.environ.get("TEST_TIMEOUT_MS", "20000")),
              "blocking": os.environ.get("TEST_BLOCKING", "1") == "1"}
    if scenario == "torch_distributed":
        import torch.distributed as dist
        del os.environ["SZ_COMM_ID"]  # the unique id travels through torch.distributed instead
        dist.init_process_group("gloo", init_method=f"file://{os.environ['TEST_STORE']}", rank=RANK,
                                world_size=int(os.environ["SZ_NRANKS"]))
        comm = sz.Communicator.from_torch_distributed(**config)
    else:
        comm = sz.Communicator.from_env(**config)
    if not config["blocking"]:
        comm.wait_ready(timeout=30)
    with comm:
        SCENARIOS[scenario](comm)
    print(f"rank {RANK}: {scenario} ok")


if __name__ == "__main__":
    main()
