"""Shared helpers: bit-level comparison, and launching the two-rank worker processes."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def bits(a) -> np.ndarray:
    """The raw bits of an array or tensor, for bit-exact comparison (NaN payloads included)."""
    if not isinstance(a, np.ndarray):
        a = a.detach().cpu().contiguous().view(-1).view(__import__("torch").uint8).numpy()
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(scenario: str, nranks: int = 2, timeout: float = 120, extra_env: dict | None = None):
    """Runs tests/comm_worker.py SCENARIO as `nranks` processes meeting at SZ_COMM_ID on loopback
    over the tcp wire;
    returns their CompletedProcess-like results (returncode, stdout, stderr) in rank order."""
    port = free_port()
    procs = []
    for rank in range(nranks):
        # The tcp wire: a CUDA build's default, nccl, takes one GPU per rank.
        env = {**os.environ, "SZ_COMM_ID": f"127.0.0.1:{port}", "SZ_RANK": str(rank),
               "SZ_NRANKS": str(nranks), "SZ_SOCKET_IFNAME": "lo", "SZ_COMM_SECRET": "splitzip-python-tests",
               "SZ_WIRE": "tcp",
               **(extra_env or {})}
        procs.append(subprocess.Popen([sys.executable, str(HERE / "comm_worker.py"), scenario], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            out, err = p.communicate()
            pytest.fail(f"{scenario}: a rank did not finish within {timeout} s\n{out}\n{err}")
        results.append(subprocess.CompletedProcess(p.args, p.returncode, out, err))
    return results


def require_cuda():
    torch = pytest.importorskip("torch")
    import splitzip
    if not splitzip.HAVE_CUDA:
        pytest.skip("splitzip was built without CUDA (SPLITZIP_CUDA=0 or no nvcc)")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    return torch
