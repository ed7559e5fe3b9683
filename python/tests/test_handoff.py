"""examples/handoff.py on CPU: rank 1 continues from the KV cache rank 0 sent it and generates
the same tokens as a single-process run."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import REPO

MODEL = REPO.parent / "shared" / "data" / "models" / "tinystories-656k"


@pytest.mark.parametrize("dtype", ["bf16", "fp32"])
def test_handoff_generates_the_same_tokens(dtype):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    if not MODEL.is_dir():
        pytest.skip(f"the model is not at {MODEL}")
    env = {**os.environ, "SZ_SOCKET_IFNAME": "lo"}
    r = subprocess.run([sys.executable, str(REPO / "examples" / "handoff.py"), "--dtype", dtype, "--repeats", "2"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}"
    assert "tokens identical to a single-process run: yes" in r.stdout
    ratio = float(r.stdout.split("ratio ")[1].split()[0])
    assert ratio > {"bf16": 1.25, "fp32": 1.05}[dtype]
