#!/usr/bin/env python3
"""The GPU codec's goals (issues 33 and 34) from one GPU run (tests/gpu/run_all.sh --codec).

Reads codec_perf's JSON of each type in --dir (codec_{bf16,e5m2,fp16,e4m3}.json, 512 MiB of real
KV tiled, per call and 50 calls back to back, CUDA events), the extra BF16 runs' JSON (--bf16-runs:
the 4 MiB goal is a median over interleaved runs, since a device copy's back-to-back rate moves
between runs) and the authors' Triton codec's figures on the same sample (--authors: the log whose
last line is run_authors.py's JSON; left out when absent). Prints the goals table and, with --into,
writes codec_h200.json: this run's figures, a "goals" block, and the file's earlier content as
"previous".
"""
import argparse
import json
import os
import statistics
import sys

MIB4 = 4 << 20


def load(path):
    return json.load(open(path)) if path and os.path.exists(path) else None


def authors_figures(path):
    """The last JSON line of the authors' step log (perf/authors_codec.py prints one), or None."""
    if not path or not os.path.exists(path):
        return None
    for line in reversed(open(path).read().splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


def row(d, size):
    rows = [r for r in (d or {}).get("sizes", []) if r["bytes"] == size]
    return rows[0] if rows else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True, help="folder of codec_<type>.json")
    ap.add_argument("--bf16-runs", nargs="*", default=[], help="more codec_perf --type bf16 JSON files of the run")
    ap.add_argument("--authors", help="the authors' step log (a JSON line last)")
    ap.add_argument("--into", help="codec_h200.json to write")
    ap.add_argument("--commit", default="")
    ap.add_argument("--date", default="")
    ap.add_argument("--machine", default="")
    a = ap.parse_args()
    t = {k: load(os.path.join(a.dir, f"codec_{k}.json")) for k in ("bf16", "e5m2", "fp16", "e4m3")}
    bf16 = t["bf16"]
    if bf16 is None:
        print("codec_table: no codec_bf16.json in", a.dir)
        return 1
    authors = authors_figures(a.authors)
    # 4 MiB back to back against a device copy's back to back, each run's own copy, median of runs.
    runs = [bf16] + [d for d in map(load, a.bf16_runs) if d]
    fourm = [r for r in (row(d, MIB4) for d in runs) if r]
    med = lambda key: statistics.median(r[key] / r["copy_b2b_gbs"] for r in fourm) if fourm else None
    g = lambda d, k: d.get(k) if d else None
    bat = (bf16.get("batched") or {}).get("decode_gbs")
    # (goal, figure, bound, issue): a figure is met when it is at least its bound.
    goals = [
        ("bf16 decode b2b GB/s (>= authors' b2b)", g(bf16, "decode_b2b_gbs"), g(authors, "decode_b2b_gbs"), 34),
        ("bf16 decode per call GB/s", g(bf16, "decode_gbs"), 2200.0, 34),
        ("bf16 encode per call GB/s", g(bf16, "encode_gbs"), 2150.0, 34),
        ("e5m2 encode per call GB/s", g(t["e5m2"], "encode_gbs"), 1800.0, 34),
        ("e5m2 decode per call GB/s", g(t["e5m2"], "decode_gbs"), 1900.0, 34),
        (f"4 MiB encode b2b / copy b2b ({len(fourm)} runs)", med("encode_b2b_gbs"), 0.8, 34),
        (f"4 MiB decode b2b / copy b2b ({len(fourm)} runs)", med("decode_b2b_gbs"), 0.8, 34),
        ("batched 4096 x 16 KiB decode GB/s", bat, 1500.0, 34),
        ("fp16 encode per call GB/s", g(t["fp16"], "encode_gbs"), 1500.0, 33),
        ("fp16 decode per call GB/s", g(t["fp16"], "decode_gbs"), 1500.0, 33),
        ("e4m3 encode per call GB/s", g(t["e4m3"], "encode_gbs"), 1500.0, 33),
        ("e4m3 decode per call GB/s", g(t["e4m3"], "decode_gbs"), 1500.0, 33),
    ]
    f = lambda v: "-" if v is None else f"{v:.3f}" if v < 10 else f"{v:.1f}"
    print(f"{'goal':46s} {'figure':>9s} {'bound':>9s} issue verdict")
    verdicts = []
    for name, v, bound, issue in goals:
        verdict = "not measured" if v is None or bound is None else "met" if v >= bound else "MISSED"
        verdicts.append({"goal": name, "figure": v, "bound": bound, "issue": issue, "verdict": verdict})
        print(f"{name:46s} {f(v):>9s} {f(bound):>9s} {issue:5d} {verdict}")
    print(f"codec_table: {sum(v['verdict'] == 'met' for v in verdicts)} of {len(goals)} goals met")
    print("copy GB/s " + f(bf16.get("copy_gbs")) + (f"; authors {json.dumps(authors)}" if authors else "; no authors' figures"))
    if a.into:
        keep = ("encode_gbs", "decode_gbs", "encode_b2b_gbs", "decode_b2b_gbs", "ratio", "copy_gbs", "escape_rate")
        new = {"date": a.date, "commit": a.commit, "machine": a.machine, "copy_gbs": bf16.get("copy_gbs")}
        for k, d in t.items():
            if d:
                new[k] = {x: d[x] for x in keep if x in d}
                if d.get("batched"):
                    new.setdefault("batched", {})[k] = d["batched"]
        new["bf16_4mib"] = [r for r in fourm]
        new["launch_us_1024_elems"] = bf16.get("launch_us")
        if authors:
            new["authors"] = dict(authors, note="the authors' Triton prototype (codec_gpu.py, fetched into the "
                                  "git-ignored .authors/) on the same 512 MiB sample in the same run: per call (CUDA "
                                  "events, median of 20 after 3 warm-up calls) and back to back (50 calls between "
                                  "one event pair, median of 5)")
        new["goals"] = verdicts
        old = load(a.into)
        if old:
            old.pop("previous", None)
            new["previous"] = old
        json.dump(new, open(a.into, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
