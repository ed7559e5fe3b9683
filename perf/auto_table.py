#!/usr/bin/env python3
"""SZ_CODEC=auto against on and off: a table from sendrecv_perf JSON reports (-J), one pair per link.

Each argument is LINK_GBS=ON_JSON,AUTO_JSON: the reports of `sendrecv_perf --codec on` and
`--codec auto` over the same link (LINK_GBS 0: no cap; a name instead of a number, such as
tcp-host, labels a link with no set rate: its rows carry "link" and no "link_gbs"). Several pairs
of one link are rounds run alternately: every figure of its rows is the median over the rounds. A report's rows give each size's time
with the communicator's mode (algbw) and with the raw wire (raw_time_us, a codec-off communicator
in the same run). The goal (the defaults issue): auto >= 0.97 x max(on, off) at every link and
size. Prints the table and writes --json rows {link_gbs, bytes, raw_gbs, on_gbs, auto_gbs,
frames_share, ok}; --into FILE puts the same rows (without ok) under FILE's "auto" key, beside its
"emulated" (perf/results/comm_h200.json; the file is created if missing, its other keys kept),
with "auto_commit", "auto_date" and "auto_machine". Exits 1 when a row misses the goal.

--paired LINK=FILE ...: reports of `sendrecv_perf --codec auto --compare on -N CYCLES`, where each
row times auto, off (raw_time_us) and on (compare_time_us) back to back in one process (one cycle;
the order rotates by one mode each cycle, so -N a multiple of 3 puts every mode in every place
equally often). For a wire whose rate moves between processes and over seconds (loopback), the
modes are compared within each cycle: the better mode is the one with the higher median rate over
the cycles, auto/best is the median over the cycles of auto's rate over that mode's rate in the
same cycle, and lo-hi is that median's 95 % interval (order statistics, no assumption on the
spread; none below 6 cycles). Taking the better of on and off per cycle instead would pick
whichever the noise favoured and bias auto/best low where on and off are close. The off, on and
auto columns stay each mode's median rate over the cycles.

With --compare off instead of on, the compared communicator is a second codec-off one: an A/A
control (two identical modes in one run), printed with its median and interval, and auto is held
against the first off (its "on" column is the second off).

--small AUTO.json: the small-size goal instead (4 KiB - 128 KiB): auto's time within 1 us of the
raw wire's (raw_time_us, the codec-off communicator of the same run) at every size.

Usage: perf/auto_table.py --small AUTO.json
       perf/auto_table.py [--json OUT] --paired LINK=AUTO_COMPARE_ON.json ...
       perf/auto_table.py [--json OUT] [--into FILE --commit C --date D --machine M] LINK=ON.json,AUTO.json ...
"""
import argparse
import json
import math
import statistics
import sys


def rows_by_size(path):
    return {r["size"]: r for r in json.load(open(path))}


def link_key(link):
    try:
        return {"link_gbs": float(link)}
    except ValueError:
        return {"link": link}


def link_label(link):
    key = link_key(link)
    return f"{key['link_gbs']:.1f}" if "link_gbs" in key else link


def small(path, slack_us=1.0):
    """auto's time per size against the raw wire's in the same run: within slack_us."""
    print(f"{'bytes':>9} {'off us':>8} {'auto us':>8} {'auto-off':>8} {'frames':>7}")
    missed = 0
    rows = rows_by_size(path)
    for size in sorted(rows):
        r = rows[size]
        d = r["time_us"] - r["raw_time_us"]
        missed += d > slack_us
        print(f"{size:9d} {r['raw_time_us']:8.2f} {r['time_us']:8.2f} {d:8.2f} {r.get('frames_share', 0.0):7.2f}"
              f"{'  MISSED' if d > slack_us else ''}")
    print(f"auto_table --small: {len(rows) - missed} of {len(rows)} sizes with auto within {slack_us} us of off")
    return 1 if missed else 0


def median_interval(values, level=0.95):
    """The order statistics that bound the median with at least `level` confidence, or None."""
    n, x = len(values), sorted(values)
    # k: the most values that may lie below the interval; P(Binomial(n, 1/2) <= k - 1) on each side.
    tail, k, cum = (1 - level) / 2, 0, 0.0
    while True:
        cum += math.comb(n, k) / 2 ** n
        if cum > tail:
            break
        k += 1
    return (x[k - 1], x[n - k]) if k > 0 else None


def paired(args, goal, out):
    """The --paired rows into out; returns how many miss the goal."""
    missed = 0
    print(f"{'link':>9} {'bytes':>11} {'off GB/s':>9} {'on GB/s':>9} {'auto GB/s':>9} {'frames':>7} {'best':>4} "
          f"{'auto/best':>9} {'lo-hi (95 %)':>13} {'cycles':>6}")
    for arg in args:
        link, path = arg.split("=", 1)
        by_size = {}
        for r in json.load(open(path)):
            if r.get("compare_codec") not in ("on", "off"):
                sys.exit(f"auto_table --paired: {path} is not a --codec auto --compare on|off report")
            by_size.setdefault(r["size"], []).append(r)
        for size in sorted(by_size):
            rows = by_size[size]
            gbs = lambda us: size / us / 1e3 if us > 0 else 0.0
            off = [gbs(r["raw_time_us"]) for r in rows]
            on = [gbs(r["compare_time_us"]) for r in rows]
            auto = [gbs(r["time_us"]) for r in rows]
            raw, on_gbs, auto_gbs = statistics.median(off), statistics.median(on), statistics.median(auto)
            share = statistics.median(r.get("frames_share", 0.0) for r in rows)
            control = rows[0].get("compare_codec") == "off"  # the compared mode is a second off: A/A
            best, best_rates = ("on", on) if on_gbs >= raw and not control else ("off", off)
            ratios = [x / b for x, b in zip(auto, best_rates) if b > 0]
            rel = statistics.median(ratios)
            ci = median_interval(ratios)
            ok = rel >= goal
            missed += not ok
            row = {**link_key(link), "bytes": size, "raw_gbs": raw, "off2_gbs" if control else "on_gbs": on_gbs,
                   "auto_gbs": auto_gbs, "frames_share": share, "cycles": len(rows), "best": best,
                   "auto_over_best": rel, "auto_over_best_lo": ci[0] if ci else None,
                   "auto_over_best_hi": ci[1] if ci else None, "ok": ok}
            if control:  # two codec-off communicators of one run: how far identical modes differ
                aa = [x / b for x, b in zip(on, off) if b > 0]
                aa_ci = median_interval(aa)
                row["aa_over_off"] = statistics.median(aa)
                print(f"{link_label(link):>9} {size:11d} A/A control: the second off over the first "
                      f"{row['aa_over_off']:.3f}" + (f" ({aa_ci[0]:.3f}-{aa_ci[1]:.3f})" if aa_ci else ""))
            out.append(row)
            span = f"{ci[0]:.3f}-{ci[1]:.3f}" if ci else "-"
            print(f"{link_label(link):>9} {size:11d} {raw:9.2f} {on_gbs:9.2f} {auto_gbs:9.2f} {share:7.2f} {best:>4} "
                  f"{rel:9.3f} {span:>13} {len(rows):6d}{'' if ok else '  MISSED'}"
                  f"{'  (interval straddles the goal)' if ci and ci[0] < goal <= ci[1] else ''}")
        cycles = {len(v) for v in by_size.values()}
        if any(c % 3 for c in cycles):
            print(f"auto_table --paired: {path}: {'/'.join(map(str, sorted(cycles)))} cycles, not a multiple of 3: "
                  "the modes did not take each place in the order equally often")
    return missed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--into", help="a results file (comm_h200.json) whose \"auto\" rows these become")
    ap.add_argument("--commit", default="", help="with --into: the commit measured")
    ap.add_argument("--date", default="", help="with --into: the date of the run")
    ap.add_argument("--machine", default="", help="with --into: the machine")
    ap.add_argument("--goal", type=float, default=0.97, help="auto / max(on, off) at least this")
    ap.add_argument("--small", metavar="AUTO.json", help="the small-size goal: auto within 1 us of off")
    ap.add_argument("--paired", action="store_true", help="arguments are LINK=FILE of --compare on runs")
    ap.add_argument("pairs", nargs="*", metavar="LINK=ON.json,AUTO.json")
    a = ap.parse_args()
    if a.small:
        return small(a.small)
    out, missed = [], 0
    if a.paired:
        missed += paired(a.pairs, a.goal, out)
    else:
        print(f"{'link GB/s':>9} {'bytes':>11} {'off GB/s':>9} {'on GB/s':>9} {'auto GB/s':>9} {'frames':>7} {'auto/best':>9}")
    # Pairs of one link are rounds (on and auto run alternately, as on loopback, whose rate moves
    # between processes): each figure is the median over the rounds.
    rounds = {}
    for pair in ([] if a.paired else a.pairs):
        link, files = pair.split("=", 1)
        on_path, auto_path = files.split(",")
        rounds.setdefault(link, []).append((rows_by_size(on_path), rows_by_size(auto_path)))
    for link, runs in rounds.items():
        for size in sorted(set.intersection(*(set(on) & set(auto) for on, auto in runs))):
            # The raw wire measured in both runs of a round: the better of the two is the bar.
            raw = statistics.median(max(size / r[size]["raw_time_us"] / 1e3 for r in (on, auto)
                                        if r[size]["raw_time_us"] > 0) for on, auto in runs)
            on_gbs = statistics.median(on[size]["algbw"] for on, _ in runs)
            auto_gbs = statistics.median(auto[size]["algbw"] for _, auto in runs)
            share = statistics.median(auto[size].get("frames_share", 0.0) for _, auto in runs)
            best = max(raw, on_gbs)
            ok = auto_gbs >= a.goal * best
            missed += not ok
            out.append({**link_key(link), "bytes": size, "raw_gbs": raw, "on_gbs": on_gbs,
                        "auto_gbs": auto_gbs, "frames_share": share, "ok": ok})
            print(f"{link_label(link):>9} {size:11d} {raw:9.2f} {on_gbs:9.2f} {auto_gbs:9.2f} {share:7.2f} "
                  f"{auto_gbs / best:9.3f}{'' if ok else '  MISSED'}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=2)
    if a.into:
        try:
            with open(a.into) as f:
                doc = json.load(f)
        except FileNotFoundError:
            doc = {}
        doc["auto"] = [{k: round(v, 4) if isinstance(v, float) else v for k, v in r.items() if k != "ok"} for r in out]
        doc.update(auto_commit=a.commit, auto_date=a.date, auto_machine=a.machine)
        with open(a.into, "w") as f:
            json.dump(doc, f, indent=1)
    print(f"auto_table: {len(out) - missed} of {len(out)} rows at >= {a.goal} x max(on, off)")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
