#!/usr/bin/env python3
"""What SZ_CODEBOOK=auto costs in steady state (issue 13's goal: encode throughput within 2 % of a
fixed codebook), from sendrecv_perf's JSON rows.

Runs the sendrecv_perf command given after `--` ROUNDS times with SZ_CODEBOOK=auto and ROUNDS
times with the fixed codebook (default, or a codebook file), interleaved (auto first in even
rounds, fixed first in odd ones, so drift of the machine falls on both alike), each run with its
own -J file. Per message size it prints the medians of algbw (end to end) and, where the rows
have it (host buffers: the CPU codec), of encode_gbps (the sends' encode stage), and two
ratios auto / fixed: of the medians, and the median of the rounds' paired ratios (each round's
two runs were measured next to each other; on a noisy machine that is the steadier figure).
Also checks that no run had wrong elements and prints each setting's compression ratio.

    perf/codebook_cost.py -r 7 -- build/perf/sendrecv_perf -t 2 --wire tcp --codec on \
        --data tests/data/tinystories_kv_eval_bf16.safetensors -b 16M -e 16M -n 20 -w 3
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run(cmd, codebook, path):
    env = dict(os.environ, SZ_CODEBOOK=codebook)
    r = subprocess.run(cmd + ["-J", path], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.exit(f"codebook_cost: SZ_CODEBOOK={codebook} {' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}")
    with open(path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-r", "--rounds", type=int, default=5, help="runs per setting (default 5)")
    ap.add_argument("--fixed", default="default", help="the fixed setting: default or a codebook file")
    ap.add_argument("-J", "--json", help="write the table's rows here")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="-- sendrecv_perf and its flags")
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd or a.rounds < 1:
        ap.error("give at least one round and the sendrecv_perf command after --")
    settings = ("auto", a.fixed)
    runs = {s: [] for s in settings}  # per setting: one list of rows per round
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(a.rounds):
            for s in settings if rnd % 2 == 0 else settings[::-1]:
                runs[s].append(run(cmd, s, os.path.join(tmp, f"{rnd}_{len(runs[s])}.json")))
    out = []
    print(f"# codebook_cost: {a.rounds} interleaved rounds of: {' '.join(cmd)}")
    print(f"# {'size':>10} {'ratio auto':>10} {'ratio fix':>9} {'algbw auto':>10} {'algbw fix':>9} {'med/med':>7} "
          f"{'paired':>7} {'enc auto':>8} {'enc fix':>8} {'med/med':>7} {'paired':>7}")
    for i, row in enumerate(runs["auto"][0]):
        def col(s, key):
            return [rs[i][key] for rs in runs[s]]
        for s in settings:
            if any(w != 0 for w in col(s, "wrong")):
                sys.exit(f"codebook_cost: SZ_CODEBOOK={s}, {row['size']} bytes: wrong elements {col(s, 'wrong')}")
        r = {"size": row["size"], "rounds": a.rounds}
        for key, name in (("algbw", "algbw"), ("encode_gbps", "encode")):
            au, fx = col("auto", key), col(a.fixed, key)
            if min(au + fx) <= 0:
                continue
            r[f"{name}_auto"], r[f"{name}_fixed"] = statistics.median(au), statistics.median(fx)
            r[f"{name}_ratio"] = r[f"{name}_auto"] / r[f"{name}_fixed"]
            r[f"{name}_paired"] = statistics.median(x / y for x, y in zip(au, fx))
        r["ratio_auto"], r["ratio_fixed"] = statistics.median(col("auto", "ratio")), statistics.median(col(a.fixed, "ratio"))
        out.append(r)
        enc = (f"{r['encode_auto']:8.3f} {r['encode_fixed']:8.3f} {r['encode_ratio']:7.4f} {r['encode_paired']:7.4f}"
               if "encode_auto" in r else f"{'-':>8} {'-':>8} {'-':>7} {'-':>7}")
        print(f"  {r['size']:>10} {r['ratio_auto']:10.4f} {r['ratio_fixed']:9.4f} {r['algbw_auto']:10.3f} "
              f"{r['algbw_fixed']:9.3f} {r['algbw_ratio']:7.4f} {r['algbw_paired']:7.4f} {enc}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
