#!/usr/bin/env python3
"""sendrecv_perf against nccl-tests' command line and output format.

The parser below reads the output the way scripts written for nccl-tests do: the "# nThread"
line, "# Using devices" with one "#  Rank ..." line per rank, the column header, rows whose
first 13 fields are nccl-tests' (size count type redop root, then time algbw busbw #wrong
out-of-place and in-place), and the closing "# Out of bounds values" and "# Avg bus bandwidth"
lines (the in-place half is N/A: SplitZip refuses in-place send/recv). It checks the numbers
agree with each other, that nccl-tests' flags are accepted (or
refused with a reason), and that -J keeps the keys other scripts read.

Usage: tests/perf_output_test.py [path/to/sendrecv_perf]. Exits 0 when every case passed.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

PERF = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.environ.get("BUILD", "build"), "perf", "sendrecv_perf")
TYPE_BYTES = {"int8": 1, "uint8": 1, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "half": 2, "float": 4,
              "double": 8, "bfloat16": 2, "f8e4m3": 1, "f8e5m2": 1}

NTHREAD = re.compile(r"^# nThread (\d+) nGpus (\d+) minBytes (\d+) maxBytes (\d+) step: (\d+)\((factor|bytes)\) "
                     r"warmup iters: (\d+) iters: (\d+) agg iters: (\d+) validation: (\d+) graph: (\d+)")
DEVICE = re.compile(r"^#  Rank\s+(\d+) Group\s+(\d+) Pid\s+(\d+) on\s+(\S+) device\s+(-?\d+) \[([^\]]+)\] (.+)$")
COLUMNS = re.compile(r"^#\s+size\s+count\s+type\s+redop\s+root\s+(time|cputime)\s+algbw\s+busbw\s+#wrong\s+"
                     r"(time|cputime)\s+algbw\s+busbw\s+#wrong")
OOB = re.compile(r"^# Out of bounds values : (\d+) (OK|FAILED)")
AVG = re.compile(r"^# Avg bus bandwidth\s+: (\S+)")

failures = []


def fail(case, why):
    failures.append(f"{case}: {why}")
    print(f"FAIL {case}: {why}")


def parse(text):
    """nccl-tests' output: header fields, device lines, rows (dicts), footer values."""
    out = {"devices": [], "rows": [], "nthread": None, "columns": None, "oob": None, "avg": None}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if m := NTHREAD.match(line):
            out["nthread"] = m.groups()
        elif line == "# Using devices":
            j = i + 1
            while j < len(lines) and (d := DEVICE.match(lines[j])):
                out["devices"].append(d.groups())
                j += 1
        elif m := COLUMNS.match(line):
            out["columns"] = m.groups()
        elif m := OOB.match(line):
            out["oob"] = (int(m.group(1)), m.group(2))
        elif m := AVG.match(line):
            out["avg"] = float(m.group(1))
        elif line and not line.startswith("#"):
            f = line.split()
            row = {"size": int(f[0]), "count": int(f[1]), "type": f[2], "redop": f[3], "root": int(f[4])}
            for half, at in (("oop", 5), ("ip", 9)):
                num = lambda v: None if v == "N/A" else float(v)
                row[half] = {"time": num(f[at]), "algbw": num(f[at + 1]), "busbw": num(f[at + 2]),
                             "wrong": num(f[at + 3])}
            row["extra"] = f[13:]
            out["rows"].append(row)
    return out


def check_output(case, text, nranks, types, check=True):
    p = parse(text)
    if p["nthread"] is None: fail(case, "no '# nThread' line")
    if len(p["devices"]) != nranks: fail(case, f"{len(p['devices'])} '#  Rank' lines under '# Using devices', expected {nranks}")
    if sorted(int(d[0]) for d in p["devices"]) != list(range(nranks)): fail(case, "device lines do not list ranks 0..n-1")
    if p["columns"] is None: fail(case, "no nccl-tests column header")
    if p["oob"] != (0, "OK"): fail(case, f"out of bounds line {p['oob']}, expected (0, 'OK')")
    if not p["rows"]: fail(case, "no rows")
    seen = {r["type"] for r in p["rows"]}
    if seen != set(types): fail(case, f"types {sorted(seen)}, expected {sorted(types)}")
    busbws = []
    for r in p["rows"]:
        if r["size"] != r["count"] * TYPE_BYTES[r["type"]]: fail(case, f"size {r['size']} != count * element size: {r}")
        if (r["redop"], r["root"]) != ("none", -1): fail(case, f"redop/root {r['redop']} {r['root']}")
        if len(r["extra"]) != 5: fail(case, f"SplitZip's 5 columns expected after nccl-tests': {r['extra']}")
        if not 0 <= float(r["extra"][4]) <= 1: fail(case, f"frames share {r['extra'][4]} outside [0, 1]")
        if any(v is not None for v in r["ip"].values()):
            fail(case, f"in-place columns must be N/A (SplitZip refuses in-place send/recv): {r['ip']}")
        for half in ("oop",):
            h = r[half]
            if h["time"] <= 0: fail(case, f"time {h['time']}")
            want = r["size"] / h["time"] / 1e3
            if abs(h["algbw"] - want) > 0.01 + 0.05 * want: fail(case, f"algbw {h['algbw']} for {r['size']} B in {h['time']} us")
            if h["busbw"] != h["algbw"]: fail(case, "sendrecv's busbw must equal algbw")
            if check and h["wrong"] != 0: fail(case, f"#wrong {h['wrong']}")
            if not check and h["wrong"] is not None: fail(case, "with -c 0 #wrong must be N/A")
            busbws.append(h["busbw"])
    if p["avg"] is None: fail(case, "no '# Avg bus bandwidth' line")
    elif busbws and abs(p["avg"] - sum(busbws) / len(busbws)) > 0.01 + 0.02 * p["avg"]:
        fail(case, f"avg bus bandwidth {p['avg']} is not the mean of the busbw columns")
    return p


def run(args, env=None):
    e = dict(os.environ, SZ_SOCKET_IFNAME=os.environ.get("SZ_SOCKET_IFNAME", "lo"))
    e.update(env or {})
    return subprocess.run([PERF] + args, capture_output=True, text=True, timeout=300, env=e)


def case_all_flags():
    case = "nccl-tests flags, -d all"
    with tempfile.TemporaryDirectory() as d:
        js = os.path.join(d, "rows.json")
        r = run(["-t", "2", "-g", "1", "-b", "8", "-e", "256K", "-f", "8", "-n", "2", "-w", "1", "-c", "1", "-a", "3",
                 "-z", "1", "-N", "1", "-m", "1", "-p", "1", "-o", "max", "-r", "1", "-G", "0", "-C", "1", "-T", "30",
                 "-R", "0", "-y", "0", "-d", "all", "--wire", "tcp", "-J", js])
        if r.returncode != 0: return fail(case, f"exit {r.returncode}: {r.stderr.strip()[-400:]}")
        p = check_output(case, r.stdout, 2, TYPE_BYTES.keys())
        if p["columns"] != ("cputime", "cputime"): fail(case, f"-C 1 names the column cputime: {p['columns']}")
        for note in ("-o max", "-r 1", "-p 1"):
            if f"# Ignored: {note}" not in r.stdout: fail(case, f"no '# Ignored: {note}' line")
        if "# Blocking Enabled" not in r.stdout: fail(case, "-z 1: no '# Blocking Enabled' line")
        rows = json.load(open(js))
        for key in ("size", "time_us", "algbw", "raw_time_us", "speedup", "ratio", "wrong", "host_us"):
            if any(key not in row for row in rows): fail(case, f"-J rows lack '{key}'")
        # Host buffers: each iteration runs inside its calls, so the host's time in them is the
        # iteration's time, no more.
        for row in rows:
            if not 0 < row.get("host_us", 0) <= row["time_us"] * 1.01 + 1:
                fail(case, f"host_us {row.get('host_us')} outside (0, time_us {row['time_us']}]")
        if len(rows) != len(p["rows"]): fail(case, "-J holds another number of rows than the table")


def case_defaults():
    case = "defaults (float, as nccl-tests), -c 0"
    r = run(["-t", "2", "-b", "1M", "-e", "1M", "-n", "2", "-w", "1", "-c", "0", "--wire", "tcp"])
    if r.returncode != 0: return fail(case, f"exit {r.returncode}: {r.stderr.strip()[-400:]}")
    check_output(case, r.stdout, 2, ["float"], check=False)


def case_compare():
    # --compare: a third communicator timed in every row, -N cycles of the sweep with the cycle in
    # each row (perf/auto_table.py --paired pairs the modes by it); the configured mode itself is
    # allowed (an A/A control).
    for codec, compare in (("auto", "on"), ("on", "on")):
        case = f"--codec {codec} --compare {compare} -N 3"
        with tempfile.TemporaryDirectory() as d:
            js = os.path.join(d, "rows.json")
            r = run(["-t", "2", "-b", "64K", "-e", "256K", "-f", "4", "-n", "2", "-w", "1", "-N", "3", "-d", "bfloat16",
                     "--wire", "tcp", "--codec", codec, "--compare", compare, "-J", js])
            if r.returncode != 0:
                fail(case, f"exit {r.returncode}: {r.stderr.strip()[-400:]}")
                continue
            p = check_output(case, r.stdout, 2, ["bfloat16"])
            rows = json.load(open(js))
            if len(rows) != len(p["rows"]) or len(rows) != 6: fail(case, f"{len(rows)} -J rows, expected 2 sizes x 3 cycles")
            for row in rows:
                if row.get("compare_codec") != compare: fail(case, f"compare_codec {row.get('compare_codec')}")
                if not row.get("compare_time_us", 0) > 0: fail(case, f"compare_time_us {row.get('compare_time_us')}")
            cycles = sorted((row.get("cycle"), row["size"]) for row in rows)
            if cycles != sorted((c, s) for c in range(3) for s in (65536, 262144)):
                fail(case, f"rows' (cycle, size) {cycles}: each size once per cycle 0..2")


def case_aggregated():
    # -m: operations per group (nccl-tests' aggregated iterations), each into a receive buffer of
    # its own; times per operation.
    case = "-m 16: sixteen operations a group"
    with tempfile.TemporaryDirectory() as d:
        js, js1 = os.path.join(d, "m16.json"), os.path.join(d, "m1.json")
        r = run(["-t", "2", "-b", "4K", "-e", "4K", "-n", "20", "-w", "2", "-m", "16", "--wire", "tcp", "-J", js])
        if r.returncode != 0: return fail(case, f"exit {r.returncode}: {r.stderr.strip()[-400:]}")
        p = check_output(case, r.stdout, 2, ["float"])
        if not re.search(r"agg iters: 16 ", r.stdout): fail(case, "the '# nThread' line does not say 'agg iters: 16'")
        r1 = run(["-t", "2", "-b", "4K", "-e", "4K", "-n", "20", "-w", "2", "--wire", "tcp", "-J", js1])
        if r1.returncode != 0: return fail(case, f"-m 1: exit {r1.returncode}")
        row, one = json.load(open(js))[0], json.load(open(js1))[0]
        if row["wire_bytes"] != one["wire_bytes"]: fail(case, f"wire_bytes {row['wire_bytes']} per operation, -m 1 {one['wire_bytes']}")
        # A group of 16 takes 7-8x one operation here (19 against 41 us an operation over loopback on
        # two cores): a time not divided by -m would be far above 3x, one per operation far below.
        if not row["time_us"] < 3 * one["time_us"]:
            fail(case, f"{row['time_us']:.1f} us an operation in groups of 16, {one['time_us']:.1f} alone: not per operation")


def case_one_rank():
    # One rank sends to itself, as nccl-tests' sendrecv on one GPU (issue 31 compares NCCL's
    # one-rank figure with it); oneway_perf, whose ranks send or receive, needs two.
    case = "one rank: -t 1, a send to self"
    r = run(["-t", "1", "-b", "4K", "-e", "1M", "-f", "16", "-n", "2", "-w", "1", "--wire", "tcp", "-d", "bfloat16"])
    if r.returncode != 0: return fail(case, f"exit {r.returncode}: {r.stderr.strip()[-400:]}")
    p = check_output(case, r.stdout, 1, ["bfloat16"])
    if len(p["rows"]) != 3: fail(case, f"{len(p['rows'])} rows, expected 4K, 64K and 1M")
    oneway = os.path.join(os.path.dirname(PERF), "oneway_perf")
    if os.access(oneway, os.X_OK):
        r = subprocess.run([oneway, "-t", "1", "-b", "4K", "-e", "4K", "--wire", "tcp"], capture_output=True, text=True,
                           timeout=60, env=dict(os.environ, SZ_SOCKET_IFNAME="lo"))
        if r.returncode == 0 or "at least 2 ranks" not in r.stderr + r.stdout:
            fail("one rank: oneway_perf -t 1", f"exit {r.returncode}, not refused: {(r.stderr + r.stdout).strip()[-300:]}")


def case_refused():
    # -G with host buffers (no GPU visible): nothing to capture.
    for args, words in ((["-G", "1"], "CUDA graph"), (["-m", "20000000"], "16 GiB"), (["-y", "1"], "-y 0"),
                        (["-d", "complex"], "not a data type"), (["-Q", "1"], "not expected")):
        case = f"refused: {' '.join(args)}"
        r = run(["-t", "2", "-b", "1K", "-e", "1K", "-n", "1"] + args,
                env={"CUDA_VISIBLE_DEVICES": ""} if args[0] == "-G" else None)
        if r.returncode == 0: fail(case, "exit 0")
        elif words not in r.stderr + r.stdout: fail(case, f"message lacks '{words}': {(r.stderr + r.stdout).strip()[-300:]}")


def main():
    if not os.access(PERF, os.X_OK):
        print(f"perf_output_test: {PERF} not found: build it first")
        return 1
    case_all_flags()
    case_defaults()
    case_compare()
    case_aggregated()
    case_one_rank()
    case_refused()
    print(f"perf_output_test: {'FAILED: ' + str(len(failures)) + ' problem(s)' if failures else 'all cases passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
