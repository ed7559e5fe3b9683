"""Two processes over the tcp wire on loopback (SZ_COMM_ID): arrays, blocks, groups, a
mismatched pair, a killed and a silent peer, non-blocking init, torch.distributed set-up."""
from __future__ import annotations

import importlib.util

import pytest

import splitzip as sz
from conftest import require_cuda, run_ranks


def check_ok(results, scenario):
    for rank, r in enumerate(results):
        assert r.returncode == 0, f"rank {rank} of {scenario} failed:\n{r.stdout}\n{r.stderr}"
        assert f"{scenario} ok" in r.stdout


@pytest.mark.parametrize("codec", ["on", "off", "auto"])
def test_arrays(codec):
    # torch is optional (the package needs numpy and ml_dtypes only): with it, a tensor travels too.
    has_torch = importlib.util.find_spec("torch") is not None
    results = run_ranks("arrays", extra_env={"TEST_CODEC": codec, "TEST_TORCH": "1" if has_torch else "0"})
    check_ok(results, "arrays")
    line = next(l for l in results[0].stdout.splitlines() if l.startswith("result:"))
    raw, wire = int(line.split()[2]), int(line.split()[4])
    if codec == "on":
        assert wire < raw  # compressed on the wire
    if codec == "off":
        assert wire >= raw


@pytest.mark.parametrize("codec", ["on", "off"])
def test_blocks(codec):
    check_ok(run_ranks("blocks", extra_env={"TEST_CODEC": codec}), "blocks")


def test_groups():
    check_ok(run_ranks("groups", extra_env={"TEST_CODEC": "on"}), "groups")


def test_non_blocking_init():
    check_ok(run_ranks("groups", extra_env={"TEST_BLOCKING": "0"}), "groups")


def test_mismatched_pair_raises_on_both_sides():
    results = run_ranks("mismatch")
    check_ok(results, "mismatch")
    for r in results:
        assert "InvalidUsageError INVALID_USAGE" in r.stdout


def test_killed_peer_raises_within_the_timeout():
    results = run_ranks("killed_peer", timeout=60, extra_env={"TEST_TIMEOUT_MS": "5000"})
    assert results[1].returncode == 17
    assert results[0].returncode == 0, results[0].stderr
    seconds = float(results[0].stdout.split(" after ")[1].split()[0])
    assert seconds < 5.0 + 2.0


def test_silent_peer_times_out():
    results = run_ranks("silent_peer", timeout=60, extra_env={"TEST_TIMEOUT_MS": "2000"})
    assert results[0].returncode == 0, results[0].stderr
    seconds = float(results[0].stdout.split(" after ")[1].split()[0])
    assert 1.5 < seconds < 2.0 + 4.0


def test_abort_from_a_watchdog_thread_waits_for_the_blocked_recv():
    results = run_ranks("watchdog_abort", timeout=60, extra_env={"TEST_TIMEOUT_MS": "2000"})
    assert results[0].returncode == 0, f"{results[0].stdout}\n{results[0].stderr}"
    assert "watchdog_abort ok" in results[0].stdout
    seconds = float(results[0].stdout.split(" after ")[1].split()[0])
    assert seconds < 2.0 + 4.0  # the recv ended by its timeout at the latest


def test_from_env_needs_its_variables(monkeypatch):
    monkeypatch.delenv("SZ_COMM_ID", raising=False)
    with pytest.raises(sz.InvalidArgumentError, match="SZ_COMM_ID"):
        sz.Communicator.from_env()


def test_from_env_refuses_an_address_without_a_secret(monkeypatch):
    monkeypatch.setenv("SZ_COMM_ID", "127.0.0.1:1")
    monkeypatch.setenv("SZ_RANK", "0")
    monkeypatch.setenv("SZ_NRANKS", "2")
    monkeypatch.delenv("SZ_COMM_SECRET", raising=False)
    with pytest.raises(sz.InvalidUsageError, match="SZ_COMM_SECRET"):
        sz.Communicator.from_env()


def test_out_of_range_numbers_raise_invalid_argument(monkeypatch):
    # Numbers the binding cannot take were nanobind's TypeError overload dumps; SZ_RANK=abc a bare
    # ValueError.
    for kwargs in ({"timeout_ms": 2 ** 31}, {"slice_bytes": -1}, {"pipeline_depth": 1.5}, {"timeout_ms": True}):
        with pytest.raises(sz.InvalidArgumentError, match=next(iter(kwargs))):
            sz.Communicator(0, 2, bytes(128), **kwargs)
    with pytest.raises(sz.InvalidArgumentError, match="rank"):
        sz.Communicator(2 ** 40, 2, bytes(128))
    monkeypatch.setenv("SZ_COMM_ID", "127.0.0.1:1")
    monkeypatch.setenv("SZ_COMM_SECRET", "s")
    monkeypatch.setenv("SZ_RANK", "abc")
    monkeypatch.setenv("SZ_NRANKS", "2")
    with pytest.raises(sz.InvalidArgumentError, match="SZ_RANK='abc'"):
        sz.Communicator.from_env()


def test_bad_arguments_raise():
    with pytest.raises(sz.InvalidArgumentError, match="codec"):
        sz.Communicator(0, 2, bytes(128), codec="zip")
    with pytest.raises(sz.InvalidArgumentError):
        sz.Communicator(0, 2, bytes(12))


def test_from_torch_distributed(tmp_path):
    pytest.importorskip("torch")
    results = run_ranks("torch_distributed", extra_env={"TEST_STORE": str(tmp_path / "store")})
    check_ok(results, "torch_distributed")


def test_cuda_tensors_on_the_current_stream():
    require_cuda()
    # Device tensors over the tcp wire: the slot protocol through pinned slots and proxy threads.
    check_ok(run_ranks("cuda_tensors"), "cuda_tensors")


def test_cuda_fp16_and_e4m3_tensors_travel_compressed():
    require_cuda()
    check_ok(run_ranks("cuda_narrow", extra_env={"TEST_CODEC": "on"}), "cuda_narrow")
