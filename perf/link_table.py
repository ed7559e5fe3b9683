#!/usr/bin/env python3
"""The ipc wire's figures on one GPU (issue: device data path v2), from sendrecv_perf's JSON rows.

Reads the no-cap run (two ranks as threads, the GPU's own memory as the link), the runs with an
emulated link of B GB/s (SZ_IPC_LINK_GBPS) and codec_perf's standalone figures of the same
call, and prints the table: per B, raw and SplitZip GB/s, the speedup and the paper's App. B
prediction

    model(B) = min(G_sz, B * R) / min(B, G_raw)

where G_sz and G_raw are the rates the same message reaches with no cap (the codec-bound and
copy-bound rates of this GPU, measured in the same run) and R the measured ratio. Writes
comm_h200.json and, where matplotlib is present, a plot of speedup against B.
"""
import argparse
import json


def rows(path):
    with open(path) as f:
        return json.load(f)


def at(rs, size):
    """The row of `size`, or the largest one below it."""
    best = None
    for r in rs:
        if r["size"] <= size and (best is None or r["size"] > best["size"]):
            best = r
    return best


def gbs(size, us):
    return size / us / 1e3 if us > 0 else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nocap", required=True, help="sendrecv_perf -J of the no-cap run")
    ap.add_argument("--codec", required=True, help="codec_perf -J of the same type")
    ap.add_argument("--copy", help="copy_perf -J: the slot kernels' block copy standalone (else cudaMemcpy)")
    ap.add_argument("--link", action="append", default=[], metavar="GBPS=FILE")
    ap.add_argument("--size", type=int, default=1 << 30, help="message size of the table")
    ap.add_argument("--json", required=True)
    ap.add_argument("--png")
    ap.add_argument("--commit", default="")
    ap.add_argument("--date", default="")
    ap.add_argument("--machine", default="")
    a = ap.parse_args()

    codec = rows(a.codec)
    nocap = rows(a.nocap)
    big = at(nocap, a.size)
    small = at(nocap, 4096)
    size = big["size"]
    sz_nocap = big["algbw"]
    raw_nocap = gbs(size, big["raw_time_us"])
    ratio = big["ratio"]
    # Standalone kernels: both ranks send and receive at once on one GPU, so one operation pair
    # costs an encode and a decode (or two copies) of the message per direction.
    enc, dec, copy = codec["encode_gbs"], codec["decode_gbs"], codec["copy_gbs"]
    # The raw bound takes the copy the slot kernels run (copy_perf's block copy, standalone) when
    # given; cudaMemcpy's bound is kept beside it.
    block_copy = None
    if a.copy:
        with open(a.copy) as f:
            block_copy = json.load(f)
    sz_bound = 1.0 / (2.0 / enc + 2.0 / dec)
    raw_bound_memcpy = copy / 4.0
    raw_bound = block_copy["slot_copy_gbs"] / 4.0 if block_copy else raw_bound_memcpy
    out = {
        "date": a.date,
        "commit": a.commit,
        "machine": a.machine,
        "ipc": {
            "size": size,
            "raw_gbs_1g": round(raw_nocap, 1),
            "raw_bound_gbs_1g": round(raw_bound, 1),
            "raw_bound_memcpy_gbs_1g": round(raw_bound_memcpy, 1),
            "sz_gbs_1g": round(sz_nocap, 1),
            "sz_bound_gbs_1g": round(sz_bound, 1),
            "ratio": round(ratio, 4),
            "latency_us_4k": round(small["time_us"], 1) if small else None,
            "raw_latency_us_4k": round(small["raw_time_us"], 1) if small else None,
            "codec_standalone": {"encode_gbs": enc, "decode_gbs": dec, "copy_gbs": copy,
                                 "block_copy": block_copy},
        },
        "emulated": [],
    }
    print(f"ipc, no cap, {size} B: raw {raw_nocap:.1f} GB/s (bound {raw_bound:.1f}, {raw_bound / raw_nocap:.3f}x; "
          f"cudaMemcpy bound {raw_bound_memcpy:.1f}), SplitZip {sz_nocap:.1f} GB/s "
          f"(bound {sz_bound:.1f}, {sz_bound / sz_nocap:.3f}x), ratio {ratio:.4f}; 4 KiB: {out['ipc']['latency_us_4k']} us")
    print(f"{'link GB/s':>10} {'raw GB/s':>9} {'sz GB/s':>9} {'speedup':>8} {'model':>7} {'sz/model':>8}")
    for spec in a.link:
        b, path = spec.split("=", 1)
        b = float(b)
        r = at(rows(path), a.size)
        raw = gbs(r["size"], r["raw_time_us"])
        sz = r["algbw"]
        model = min(sz_nocap, b * r["ratio"]) / min(b, raw_nocap)
        speedup = sz / raw if raw > 0 else 0.0
        out["emulated"].append({"link_gbs": b, "size": r["size"], "raw_gbs": round(raw, 2), "sz_gbs": round(sz, 2),
                                "speedup": round(speedup, 3), "model": round(model, 3), "ratio": round(r["ratio"], 4)})
        print(f"{b:>10.1f} {raw:>9.2f} {sz:>9.2f} {speedup:>8.3f} {model:>7.3f} {speedup / model:>8.3f}")
    try:  # the SZ_CODEC=auto rows (perf/auto_table.py --into) come from another run: kept
        with open(a.json) as f:
            out.update({k: v for k, v in json.load(f).items() if k.startswith("auto")})
    except (FileNotFoundError, ValueError):
        pass
    with open(a.json, "w") as f:
        json.dump(out, f, indent=1)
    if a.png and out["emulated"]:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib missing: no plot")
            return
        e = sorted(out["emulated"], key=lambda x: x["link_gbs"])
        xs = [x["link_gbs"] for x in e]
        fine = [xs[0] * (xs[-1] / xs[0]) ** (i / 200) for i in range(201)]
        plt.figure(figsize=(6, 4))
        plt.semilogx(fine, [min(sz_nocap, x * ratio) / min(x, raw_nocap) for x in fine], "-", label="App. B model")
        plt.semilogx(xs, [x["speedup"] for x in e], "o", label="measured (ipc, emulated link)")
        plt.axhline(1.0, color="gray", lw=0.5)
        plt.xlabel("link bandwidth B (GB/s)")
        plt.ylabel("speedup over raw")
        plt.title(f"SplitZip, {size >> 20} MiB messages, one H200 ({a.commit})")
        plt.legend()
        plt.tight_layout()
        plt.savefig(a.png, dpi=120)


if __name__ == "__main__":
    main()
