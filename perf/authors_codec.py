#!/usr/bin/env python3
"""The authors' Triton codec (SplitZip prototype, codec_gpu.py) timed beside ours, on the same sample.

Their code is never committed: copy codec_gpu.py from github.com/Intelligent-Microsystems-Lab/SplitZip
into the git-ignored .authors/ (or name its folder with --codec-dir); tests/gpu/run_all.sh runs this
where it is. The sample (a raw BF16 file, as run_all.sh writes /tmp/kv_bf16.bin) is tiled to --mib
MiB, their codec is calibrated on the sample itself (the top-16 exponents, as ours calibrates), the
round trip is checked bit for bit, and encode and decode are timed as codec_perf times ours: per
call (CUDA events around one call, median of 20 after 3 warm-up calls) and back to back (50 calls
between one event pair, median of 5). Prints one JSON line: encode_gbs, decode_gbs,
encode_b2b_gbs, decode_b2b_gbs (GB/s of uncompressed bytes), ratio (their own compressed_bytes),
coverage, bytes; perf/codec_table.py reads it from the step's log.
"""
import argparse
import json
import statistics
import sys

import numpy as np
import torch


def per_call(fn, nbytes, warm=3, reps=20):
    for _ in range(warm):
        fn()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    return nbytes / statistics.median(times) / 1e9


def back_to_back(fn, nbytes, calls=50, reps=5):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(calls):
            fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / 1e3 / calls)
    return nbytes / statistics.median(times) / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sample", help="raw little-endian BF16 elements")
    ap.add_argument("--mib", type=int, default=512, help="the tiled input's size (codec_perf's largest)")
    ap.add_argument("--codec-dir", default=".authors", help="the folder holding the authors' codec_gpu.py")
    a = ap.parse_args()
    sys.path.insert(0, a.codec_dir)
    from codec_gpu import ChunkLocalSplitZipGPU  # noqa: E402 (theirs, from the ignored folder)

    raw = np.fromfile(a.sample, dtype=np.int16)
    n = a.mib * 1024 * 1024 // 2
    x = torch.from_numpy(np.resize(raw, n)).cuda().view(torch.bfloat16).contiguous()
    codec = ChunkLocalSplitZipGPU(device="cuda", chunk_size=1024)
    coverage = codec.calibrate(torch.from_numpy(raw).cuda().view(torch.bfloat16))
    enc = codec.encode(x)
    if not torch.equal(x.view(torch.int16), codec.decode(enc).view(torch.int16)):
        print("authors_codec: their round trip is not bit-exact", file=sys.stderr)
        return 1
    nbytes = n * 2
    r = {"encode_gbs": per_call(lambda: codec.encode(x), nbytes), "decode_gbs": per_call(lambda: codec.decode(enc), nbytes),
         "encode_b2b_gbs": back_to_back(lambda: codec.encode(x), nbytes),
         "decode_b2b_gbs": back_to_back(lambda: codec.decode(enc), nbytes),
         "ratio": nbytes / enc.compressed_bytes, "coverage": coverage, "bytes": nbytes}
    print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in r.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
