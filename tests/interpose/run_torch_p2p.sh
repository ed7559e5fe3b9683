#!/usr/bin/env bash
# The interposer's two-GPU test: tests/interpose/torch_p2p.py (PyTorch send/recv, isend/irecv,
# batch_isend_irecv of bf16 real KV, and collectives) run unchanged twice, on plain NCCL and with
# build/lib/libsplitzip_nccl.so preloaded. Passes when both runs are bit-exact and the
# interposed run's stats (SZ_INTERPOSE_STATS) show bf16 sends that went through SplitZip with
# fewer wire bytes than raw bytes. Prints a short table: GB/s per size, both ways, and the speedup.
#
#   tests/interpose/run_torch_p2p.sh [--sizes 1M,16M,64M,256M] [-n 10]    (arguments go to torch_p2p.py)
# Environment: INTERPOSER (default build/lib/libsplitzip_nccl.so), PYTHON (default python3); NCCL_*
# settings (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 for sockets, NCCL_MAX_NCHANNELS=1) apply to both runs.
set -uo pipefail
cd "$(dirname "$0")/../.."
INTERPOSER="${INTERPOSER:-build/lib/libsplitzip_nccl.so}"
PYTHON="${PYTHON:-python3}"
[[ -f $INTERPOSER ]] || { echo "run_torch_p2p: no $INTERPOSER: run make (with CUDA) first"; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

$PYTHON tests/interpose/torch_p2p.py "$@" >"$out/plain.log" 2>&1
plain=$?
SZ_DEBUG="${SZ_DEBUG:-INFO}" SZ_INTERPOSE_STATS="$out/stats.jsonl" LD_PRELOAD="$(realpath "$INTERPOSER")" \
  $PYTHON tests/interpose/torch_p2p.py "$@" >"$out/interposed.log" 2>&1
interposed=$?
if grep -q "SKIPPED" "$out/plain.log"; then
  grep "SKIPPED" "$out/plain.log"
  exit 0
fi

"$PYTHON" - "$out" "$plain" "$interposed" <<'PY'
import json, os, sys
out, rc_plain, rc_int = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def result(name):
    for line in open(os.path.join(out, name + ".log")):
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return None

plain, inter = result("plain"), result("interposed")
stats = [json.loads(l) for l in open(os.path.join(out, "stats.jsonl"))] if os.path.exists(os.path.join(out, "stats.jsonl")) else []
sends = sum(s["sends"] for s in stats)
raw = sum(s["rawBytes"] for s in stats)
wire = sum(s["wireBytes"] for s in stats)
failures = []
if rc_plain != 0 or not plain or not plain.get("ok"):
    failures.append(f"plain NCCL run failed (exit {rc_plain}): {plain}")
if rc_int != 0 or not inter or not inter.get("ok"):
    failures.append(f"interposed run failed (exit {rc_int}): {inter}")
if sends == 0 or raw == 0:
    failures.append("the interposer's stats show no send through SplitZip")
elif wire >= raw:
    failures.append(f"no compression: {raw} raw bytes took {wire} wire bytes")
if inter and inter.get("gbps") and plain and plain.get("gbps"):
    print(f"{'size':>12} {'NCCL GB/s':>10} {'interposed GB/s':>16} {'speedup':>8}")
    for size, g in plain["gbps"].items():
        h = inter["gbps"].get(size, 0.0)
        print(f"{int(size):>12} {g:>10.2f} {h:>16.2f} {h / g if g else 0:>8.3f}")
if stats:
    print(f"interposer: {sends} sends through SplitZip, {raw} -> {wire} bytes (ratio {raw / wire if wire else 0:.3f}); "
          f"{sum(s['forwardedSends'] for s in stats)} sends forwarded to NCCL on interposed communicators")
for f in failures:
    print("run_torch_p2p: FAIL", f)
if failures:
    for name in ("plain", "interposed"):
        print(f"--- last lines of the {name} run")
        print("".join(open(os.path.join(out, name + ".log")).readlines()[-30:]))
print("run_torch_p2p:", "FAILED" if failures else "passed (bit-exact both ways, compressed bytes in the stats)")
sys.exit(1 if failures else 0)
PY
