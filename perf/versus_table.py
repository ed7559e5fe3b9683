#!/usr/bin/env python3
"""This build's ipc figures beside a baseline build's, from one device call (run_all.sh --versus).

Each round ran sendrecv_perf -t 2 --wire ipc --codec on (two ranks as threads of one process) of
both builds, alternating, on the same GPU: 4 KiB and 1 GiB with no cap, and 1 GiB over emulated
links (SZ_IPC_LINK_GBPS). A row's raw figure is the run's codec-off communicator (raw_time_us),
its codec figure the configured one (time_us). Per row and build: the median over the rounds.
A row is "no worse" where this build's time is at most `--slack` above the baseline's (the
rounds' own spread on one GPU is a few percent); the emulated links also give the speedup
(raw time / codec time) against the goal's 1.32x.

  versus_table.py --logs DIR [--rounds 3] [--slack 0.03] [--json OUT]
reads DIR/vs_{base,head}_{ROW}_{ROUND}.json, ROW in 4k, 1g, l12.5, l25, l50, l100 (rows that neither
build ran are left out; a row with fewer rounds than --rounds is missing, and the exit status is 1).
The verdicts are measurements, as perf/latency_table.py's: a figure worse than the baseline is
printed WORSE and counted in the last line, not an exit status.
"""
import argparse
import json
import os
import statistics

ROWS = [("4k", "4 KiB, no cap", "us"), ("1g", "1 GiB, no cap", "GB/s"), ("l12.5", "1 GiB, 12.5 GB/s link", "GB/s"),
        ("l25", "1 GiB, 25 GB/s link", "GB/s"), ("l50", "1 GiB, 50 GB/s link", "GB/s"),
        ("l100", "1 GiB, 100 GB/s link", "GB/s")]


def times(logs, build, row, rounds):
    """Per round (raw us, codec us, bytes) of one build's row; rounds whose file is missing left out."""
    out = []
    for r in range(1, rounds + 1):
        path = os.path.join(logs, f"vs_{build}_{row}_{r}.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            rs = json.load(f)
        if rs:
            out.append((rs[-1]["raw_time_us"], rs[-1]["time_us"], rs[-1]["size"]))
    return out


def figure(us, size, unit):
    return us if unit == "us" else size / us / 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--logs", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--slack", type=float, default=0.03)
    ap.add_argument("--base-name", default="base")
    ap.add_argument("--json")
    a = ap.parse_args()
    print(f"{'row':24} {'mode':5} {'unit':5} {a.base_name:>10} {'this':>10} {'this/base':>9}  verdict")
    report, worse, missing, figures = [], 0, 0, 0
    for row, title, unit in ROWS:
        base, head = times(a.logs, "base", row, a.rounds), times(a.logs, "head", row, a.rounds)
        if not base and not head:  # not a row of this run (VS_LINKS)
            continue
        if len(base) < a.rounds or len(head) < a.rounds:  # a round's run failed: no median of the asked rounds
            print(f"{title:24} missing rounds ({len(base)} of {a.rounds} baseline, {len(head)} of this build)")
            missing += 1
            continue
        for mode, k in (("raw", 0), ("on", 1)):
            b = statistics.median(t[k] for t in base)
            h = statistics.median(t[k] for t in head)
            size = head[0][2]
            fb, fh = figure(b, size, unit), figure(h, size, unit)
            ok = h <= (1 + a.slack) * b  # time: lower is better, in either unit
            worse += not ok
            figures += 1
            print(f"{title:24} {mode:5} {unit:5} {fb:10.2f} {fh:10.2f} {fh / fb:9.3f}  {'no worse' if ok else 'WORSE'}")
            report.append({"row": row, "mode": mode, "unit": unit, "base": fb, "this": fh, "no_worse": ok,
                           "rounds": [len(base), len(head)]})
        if row.startswith("l"):
            s = statistics.median(t[0] / t[1] for t in head)
            print(f"{title:24} speedup      {statistics.median(t[0] / t[1] for t in base):10.3f} {s:10.3f}"
                  f"            {'>= 1.32' if s >= 1.32 else '< 1.32'}")
            report.append({"row": row, "mode": "speedup", "this": s,
                           "base": statistics.median(t[0] / t[1] for t in base)})
    print(f"versus_table: {worse} of {figures} figures worse than the baseline by more than "
          f"{100 * a.slack:.0f} %, {missing} rows missing")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"slack": a.slack, "rows": report}, f, indent=1)
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
