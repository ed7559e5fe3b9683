"""examples/handoff.py on CPU: rank 1 continues from the KV cache rank 0 sent it layer by layer
during its prefill and generates the same tokens as a single-process run; the whole-cache
hand-off delivers the same blocks; each way's time to first token is reported."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO

MODEL = REPO.parent / "shared" / "data" / "models" / "tinystories-656k"


@pytest.mark.parametrize("dtype", ["bf16", "fp32"])
def test_handoff_generates_the_same_tokens(dtype, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    if not MODEL.is_dir():
        pytest.skip(f"the model is not at {MODEL}")
    env = {**os.environ, "SZ_SOCKET_IFNAME": "lo"}
    out = tmp_path / "handoff.json"
    r = subprocess.run([sys.executable, str(REPO / "examples" / "handoff.py"), "--dtype", dtype, "--repeats", "2",
                        "--json", str(out)], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}"
    assert "tokens identical to a single-process run: yes" in r.stdout
    assert "layer-wise blocks identical to the whole-cache hand-off's: yes" in r.stdout
    ratio = float(r.stdout.split("ratio ")[1].split()[0])
    assert ratio > {"bf16": 1.25, "fp32": 1.05}[dtype]
    # Each way's time to first token, and the JSON figures behind them.
    figures = json.loads(out.read_text())
    assert set(figures["ttft_ms"]) == {"whole_raw", "whole_sz", "layer_raw", "layer_sz"}
    assert all(v > 0 for v in figures["ttft_ms"].values()), figures
    assert figures["tokens_identical"] is True and figures["kv_bytes"] > 0
    assert 0.0 <= figures["hidden_share"] <= 1.0


@pytest.mark.parametrize("ranks", ["processes", "threads"])
def test_layerwise_handoff_of_a_random_llama(ranks, tmp_path):
    """--random-llama without a model folder (no download, no ../shared): seeded weights and token
    ids on both ranks; the layer-wise hand-off gives the single-process tokens and the whole-cache
    blocks, and the figures are written. --threads: both ranks as threads of one process (one
    GPU's ranks then run side by side), meeting without torch.distributed."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    env = {**os.environ, "SZ_SOCKET_IFNAME": "lo"}
    out = tmp_path / "handoff.json"
    r = subprocess.run([sys.executable, str(REPO / "examples" / "handoff.py"), "--model", str(tmp_path / "no-model"),
                        "--random-llama", "2", "--prompt-tokens", "128", "--new-tokens", "8", "--repeats", "2",
                        "--json", str(out)] + (["--threads"] if ranks == "threads" else []),
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}"
    assert "tokens identical to a single-process run: yes" in r.stdout
    assert "layer-wise blocks identical to the whole-cache hand-off's: yes" in r.stdout
    figures = json.loads(out.read_text())
    # 2 layers x (K, V) x 8 heads x 128 positions x 128 dims of BF16.
    assert figures["kv_bytes"] == 2 * 2 * 8 * 128 * 128 * 2 and figures["prompt_tokens"] == 128
    assert figures["ratio"] > 1.0 and figures["tokens_identical"] is True
