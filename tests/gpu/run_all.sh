#!/usr/bin/env bash
# The one GPU-side script: on the H200 machine it builds everything, runs the CPU and GPU test
# suites, compute-sanitizer (memcheck, racecheck) on small sizes, the codec benchmark on real
# KV data (BF16 and FP8 E5M2) and nvCOMP side by side, and prints a short table last.
# JSON results, summary.txt and logs.tar.gz go to $OUT (the device tool's output folder, which
# takes at most 8 files) or build/gpu_out; the step logs are in logs.tar.gz.
#   bash tests/gpu/run_all.sh [--close|--quick|--suite|--comm|--codec|--defaults|--auto|--python|--latency|--handoff|--versus|--rows]
#       (--close: what the open issues still need, in one call of at most CLOSE_LIMIT s (585): the GPU
#       suite three times, the latency rows and profile, the codec figures beside the authors', ncu
#       and compute-sanitizer, each part skipped when time runs short (run_all/close.sh); carry the
#       binaries of tests/gpu/prebuild.sh as PREBUILT; --defaults: the
#       README's commands as a new user types them, every setting default: make, make test, the GPU
#       suite, make demo, pip install ./python and pytest, and the SZ_CODEC=auto rows (perf/auto_table.py; ROWS=0: none);
#       --auto: the GPU suite and every SZ_CODEC=auto row: each emulated link in short (-n 5) and
#       long (-n AUTO_LONG, 100) runs, the small sizes, the mixed sweep, and tcp over loopback with
#       device and host buffers;
#       --python: pip install ./python and pytest only, settings default;
#       --handoff: the hand-off's C++ replay, the lazy connections, the tcp auto rows, the Python
#       package and the layer-wise example;
#       --latency: the GPU suite, then the per-operation figures (issue 31) at 4 KiB and 4 MiB,
#       a CUDA graph's replay, and their profile (PROF=0: none);
#       --versus: the GPU suite, then ipc rows beside a baseline build's sendrecv_perf (BASE), and a
#       carried PROFILE=1 build's phases (PROF_BIN); VS_AUTO=1 adds the short link, mixed and tcp auto rows; SUITE=0 skips the suite;
#       --rows: the short emulated-link, tcp (TCP_CYCLES, 21) and mixed auto rows, the --versus rows
#       against BASE and the --latency rows: every open goal's figures in one call (SUITE=1: the GPU
#       suite first; at b300925 the rows took 345 s of one H100);
#       --suite: the GPU tests only (the least device time a GPU change is checked with);
#       --quick: tests only; --comm: the
#       communicator's tests, the main job and sendrecv_perf only; --codec: the GPU suite once,
#       compute-sanitizer, the codec benchmarks, the authors' codec beside them and sendrecv_perf
#       on the ipc wire: what a codec change needs; SUITE=0, SAN=0, IPC=0 leave out the suite, the
#       sanitizers, the ipc rows: the codec's figures alone)
# With two GPUs it also runs the main job (make demo) and sendrecv_perf over NCCL on NVLink, on
# one NCCL channel (a ~34 GB/s link) and on sockets over loopback, each next to plain NCCL
# (perf/nccl_baseline.py); NVCOMP=1 adds nvCOMP; VARIANTS="a b" (with --codec or a full run)
# runs variant builds build-a/, build-b/ of the codec beside ./build (codec_notes.md, v6). The
# whole run takes longer than one device call may (600 s; at 32b9f9b it was cut in py_tests):
# run --codec and --comm apart, or PY=0 (no Python package) with LINK_GBPS= SLICES=.
set -uo pipefail
RUN_ALL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)  # tests/gpu, whose run_all/ holds the steps
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/gpu_out}
LOGS=$(mktemp -d)
mkdir -p "$OUT" && rm -f "$OUT/comm_h200.json"  # built afresh from the committed one below
QUICK=${1:-}
declare -a SUMMARY

step() {  # step NAME CMD...: runs CMD (at most STEP_TIMEOUT s), logs to $LOGS/NAME.log, records pass/fail
  local name=$1; shift
  local t0=$SECONDS limit=${STEP_TIMEOUT:-300}
  # DEADLINE (--close): no step runs past the call's end, so finish still writes the logs.
  [ -n "${DEADLINE:-}" ] && [ $((DEADLINE - SECONDS)) -lt "$limit" ] && limit=$((DEADLINE - SECONDS > 10 ? DEADLINE - SECONDS : 10))
  timeout "$limit" "$@" >"$LOGS/$name.log" 2>&1 &
  local pid=$!
  # A step about to time out is hung: its threads' stacks (cuda-gdb; there is no gdb) go to the log.
  # Its stdio goes nowhere: a sleeping watcher left holding the script's output would keep a
  # reader of that output (`run_all.sh | tail`) waiting until it wakes.
  ( sleep $((limit > 40 ? limit - 25 : limit)); kill -0 $pid 2>/dev/null && dump_stacks $pid >>"$LOGS/$name.log" 2>&1 ) \
    </dev/null >/dev/null 2>&1 &
  local watcher=$!
  wait $pid
  local rc=$?
  pkill -P $watcher 2>/dev/null; kill $watcher 2>/dev/null
  SUMMARY+=("$(printf '%-22s %-5s %4ds' "$name" "$([ $rc = 0 ] && echo ok || echo FAIL)" $((SECONDS - t0)))")
  { echo "=== $name rc=$rc"; tail -n "$([ $rc = 0 ] && echo 40 || echo 200)" "$LOGS/$name.log"; } >>"$OUT/steps.log"  # kept if the run is cut short
  [ $rc = 0 ] || tail -n 30 "$LOGS/$name.log"
  return $rc
}

suite_step() {  # suite_step [NAME]: the GPU suite without the 16-rank lazy test (its memory figures need a
  # process of their own); the first run (NAME gpu_tests, the default) also writes gpu_tests.json
  local name=${1:-gpu_tests} json=()
  [ "$name" = gpu_tests ] && json=(--gtest_output=json:"$OUT/gpu_tests.json")
  SZ_TEST_KV_BF16=$KV_BF16 STEP_TIMEOUT=150 step "$name" ./build/tests/splitzip_gpu_tests --gtest_filter='*:-CommLazyGpu*' \
    ${json[@]+"${json[@]}"}
}

dump_stacks() {  # dump_stacks PID: every thread's stack of our programs under PID
  local p
  for p in $(ps -e -o pid=,ppid= | awk -v root="$1" '{kid[$2]=kid[$2] " " $1} END {n=split(root, q); for (i=1; i<=n; i++) {print q[i]; m=split(kid[q[i]], k, " "); for (j=1; j<=m; j++) q[++n]=k[j]}}'); do
    case "$(cat /proc/"$p"/comm 2>/dev/null)" in splitzip*|disagg*|sendrecv*) ;; *) continue ;; esac
    echo "--- stacks of $p $(cat /proc/"$p"/comm)"
    # Frames with a name (library frames are stripped); NCCL's and CUDA's own idle threads left out.
    timeout 20 cuda-gdb -batch -p "$p" -ex "thread apply all bt 40" 2>&1 | grep -E "^#|^Thread" |
      awk '/^Thread/ {if (keep) printf "%s", buf; buf = $0 "\n"; keep = 0; n = 0; next}
           {if (++n <= 3 || $0 !~ / in \?\? /) buf = buf $0 "\n"; if ($0 ~ / in (sz|main|run|transfer|exchange|cuda|nccl)/) keep = 1}
           END {if (keep) printf "%s", buf}' | cut -c1-200 | head -150
  done
}

finish() {  # the short table (summary.txt), the logs; the exit status says whether every step passed
  {
    echo "================ SplitZip GPU run: $COMMIT $(date -u +%F) $(cat "$LOGS/gpu.txt") ================"
    grep -h -E "^\[  (PASSED|FAILED|SKIPPED) \]|tests? ran" "$LOGS"/cpu_tests.log "$LOGS"/gpu_tests.log 2>/dev/null | head -20
    grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$LOGS"/memcheck.log "$LOGS"/racecheck.log "$LOGS"/ipc_memcheck.log "$LOGS"/ipc_racecheck.log 2>/dev/null
    grep -h -E "^\[  (PASSED|FAILED) \]" "$LOGS"/gpu_tests_2.log "$LOGS"/gpu_tests_3.log "$LOGS"/ipc_tests_conn1.log 2>/dev/null
    for f in latency_table codec_table lat_self_4K versus_table $(cd "$LOGS" && ls prof_*.log 2>/dev/null | grep -v prof_build | sed 's/\.log$//') slot_counts slot_blocks mixed_wires interpose_pynccl py_compilers py_tests py_gdb handoff_layers handoff_layers_link25 sr_ipc_slice_1048576 sr_ipc_slice_4194304 copy_perf perf_bf16 perf_e5m2 \
             $(for V in ${VARIANTS:-}; do echo perf_bf16_$V perf_e5m2_$V; done) ${VARIANTS:+perf_bf16_again perf_e5m2_again} authors nvcomp_bf16 nvcomp_e5m2 link_table auto_table auto_long_table auto_small auto_mixed auto_tcp_dev auto_tcp_host auto_tcp_dev_aa auto_tcp_host_aa sr_ipc ow_ipc sr_ipc_codebook codebook_cpu demo demo_tcp demo_ipc sr_tcp sr_tcp_64m sr_tcp_auto sr_nvlink sr_nvlink_auto sr_nvlink_ipc interpose_torch sr_1channel sr_sockets \
             nccl_nvlink nccl_1channel nccl_sockets; do [ -f "$LOGS/$f.log" ] && { echo "--- $f"; cat "$LOGS/$f.log"; }; done
    printf '%s\n' "${SUMMARY[@]}"
  } | tee "$OUT/summary.txt"
  tar -czf "$OUT/logs.tar.gz" -C "$LOGS" .
  ! printf '%s\n' "${SUMMARY[@]}" | grep -q FAIL
}

# The steps and the mode bodies, one concept a file, beside this script (functions only).
for f in python handoff auto latency versus codec comm close; do
  source "$RUN_ALL_DIR/run_all/$f.sh" || exit 1
done

# Debian packages the image may lack (isal, gtest, fmt, CLI11, nlohmann-json), carried as .deb:
# tests/gpu/fetch_deps.sh fills .deps here; the device call carries it (carry: [".deps"]).
DEPS=
if compgen -G ".deps/*.deb" >/dev/null; then
  DEPS=/tmp/szdeps
  for f in .deps/*.deb; do dpkg -x "$f" "$DEPS"; done
fi
CARRIED=${DEPS:+LD_LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu}  # carried binaries' libraries (isal, fmt)
# The hand-off test's model where a checkout beside ../shared finds it (the device machine has no
# ../shared): .deps/model is a copy of ../shared/data/models/tinystories-656k.
if [ -d .deps/model ] && [ ! -d ../shared/data/models/tinystories-656k ]; then
  mkdir -p ../shared/data/models && ln -sfn "$PWD/.deps/model" ../shared/data/models/tinystories-656k
fi
export NCCL_NVLS_ENABLE=0
# Hopper (the default build's GPU_ARCH=native gives the same here); --defaults builds as the README says.
case "$QUICK" in --defaults|--python) ;; *) false ;; esac || export NVCC_GENCODE="${NVCC_GENCODE:--gencode arch=compute_90,code=sm_90}"
# Every wire's device buffers take the slot protocol, which needs no CUDA_DEVICE_MAX_CONNECTIONS:
# the suite runs with it unset, and the ipc steps once more at 1.
# Both ranks of every test run on this machine: rendezvous and control traffic on loopback.
export SZ_SOCKET_IFNAME=${SZ_SOCKET_IFNAME:-lo} SZ_TIMEOUT_MS=${SZ_TIMEOUT_MS:-20000}
NGPUS=$(nvidia-smi -L | wc -l)
# The commit under test: COMMIT=... from the caller (the device machine's copy may carry an older
# .git than its working tree), else git's.
COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$LOGS/gpu.txt"
if [ "$QUICK" = "--python" ]; then  # the Python package and its suite only (no make build)
  py_suite
  finish
  exit
fi
if [ "$QUICK" = "--handoff" ]; then
  handoff_mode
  finish
  exit
fi
# PREBUILT=FILE.tgz: binaries built on the development machine (a tar of build/{bin,tests,perf,
# examples}), which saves the build's device minutes; the carried Debian libraries serve them.
if [ -n "${PREBUILT:-}" ]; then
  tar -xzf "$PREBUILT" && export LD_LIBRARY_PATH="${DEPS:+$DEPS/usr/lib/x86_64-linux-gnu:}${LD_LIBRARY_PATH:-}"
  SUMMARY+=("$(printf '%-22s %-5s' prebuilt "$([ -x build/tests/splitzip_gpu_tests ] && echo ok || echo FAIL)")")
else
  if [ "$QUICK" = "--defaults" ]; then
    step build make -j"$(nproc)" DEPS="$DEPS" || { printf '%s\n' "${SUMMARY[@]}"; exit 1; }
  elif [ "$QUICK" = "--rows" ]; then
    step build make -j"$(nproc)" DEPS="$DEPS" build/perf/sendrecv_perf build/perf/codec_perf \
      $([ "${SUITE:-0}" = 1 ] && echo build/tests/splitzip_gpu_tests) || { printf '%s\n' "${SUMMARY[@]}"; exit 1; }
  elif [ "$QUICK" = "--close" ]; then  # the PROFILE=1 build is optional: its rows are skipped without it
    step build make -j"$(nproc)" DEPS="$DEPS" build/perf/sendrecv_perf build/perf/codec_perf build/tests/splitzip_gpu_tests ||
      { printf '%s\n' "${SUMMARY[@]}"; exit 1; }
    step prof_build make -j"$(nproc)" BUILD=build-profile PROFILE=1 DEPS="$DEPS" build-profile/perf/sendrecv_perf
  elif [ "$QUICK" = "--latency" ]; then
    step build make -j"$(nproc)" DEPS="$DEPS" build/perf/sendrecv_perf build/perf/codec_perf build/tests/splitzip_gpu_tests || { printf '%s\n' "${SUMMARY[@]}"; exit 1; }
  elif [ "$QUICK" = "--suite" ]; then
    step build make -j"$(nproc)" DEPS="$DEPS" build/tests/splitzip_gpu_tests || { printf '%s\n' "${SUMMARY[@]}"; exit 1; }
  else
    step build make -j"$(nproc)" DEPS="$DEPS" all || { printf '%s\n' "${SUMMARY[@]}"; exit 1; }
  fi
fi

# Real KV data as raw element files (the benchmark and the real-data test read raw files).
python3 - <<'PY' >"$LOGS/data.log" 2>&1
import glob, torch
from safetensors.torch import load_file
for dtype in ("bf16", "e5m2", "fp16", "e4m3"):
    pattern = f"tests/data/tinystories_kv_eval_{dtype}.safetensors"
    files = sorted(glob.glob(pattern))
    if not files:
        print("no", pattern); continue
    t = load_file(files[0])
    parts = [t[k].contiguous().view(torch.uint8).flatten() for k in t]
    torch.cat(parts).numpy().tofile(f"/tmp/kv_{dtype}.bin")
    print(dtype, files[0], sum(p.numel() for p in parts), "bytes")
PY
KV_BF16=; KV_E5M2=; KV_FP16=; KV_E4M3=
[ -s /tmp/kv_bf16.bin ] && KV_BF16=/tmp/kv_bf16.bin
[ -s /tmp/kv_e5m2.bin ] && KV_E5M2=/tmp/kv_e5m2.bin
[ -s /tmp/kv_fp16.bin ] && KV_FP16=/tmp/kv_fp16.bin
[ -s /tmp/kv_e4m3.bin ] && KV_E4M3=/tmp/kv_e4m3.bin

if [ "$QUICK" = "--close" ]; then
  close_mode
  finish
  exit
fi
if [ "$QUICK" = "--latency" ]; then
  latency_mode
  finish
  exit
fi
if [ "$QUICK" = "--rows" ]; then  # every open goal's rows at this build (issues 28, 29, 31); SUITE=1: the GPU suite first
  [ "${SUITE:-0}" = 1 ] && suite_step
  auto_short_rows
  versus_rows
  KV_BF16=tests/data/tinystories_kv_eval_bf16.safetensors TCP_CYCLES=${TCP_CYCLES:-21} tcp_auto_rows
  auto_mixed_rows
  latency_steps
  finish
  exit
fi
if [ "$QUICK" = "--versus" ]; then
  versus_mode
  finish
  exit
fi
case "$QUICK" in --comm|--codec|--auto|--suite) ;; --defaults) step make_test make DEPS="$DEPS" test ;; *) step cpu_tests ./build/tests/splitzip_tests ;; esac
GPU_FILTER='*'
[ "$QUICK" = "--comm" ] && GPU_FILTER='*CommGpu*'
COMM_HUNG=0  # the communicator tests timed out: the demo and sendrecv_perf would hang too
# SUITE=0 (with --codec): the codec's figures alone, from a build whose suite ran in the same lease.
# The per-type codec JSON of --codec go into logs.tar.gz: $OUT brings back 8 files at most.
[ "$QUICK" = "--codec" ] && CODEC_DIR=${CODEC_DIR:-$LOGS}
[ "$QUICK" = "--codec" ] && [ "${SUITE:-1}" = 0 ] ||
  SZ_TEST_KV_BF16=$KV_BF16 STEP_TIMEOUT=120 step gpu_tests ./build/tests/splitzip_gpu_tests --gtest_filter="$GPU_FILTER:-CommLazyGpu*" --gtest_output=json:"$OUT/gpu_tests.json" || { [ $? = 124 ] && COMM_HUNG=1; }
[ "$QUICK" != "--codec" ] && lazy_connections
if [ "$QUICK" = "--suite" ]; then  # the GPU suite and the lazy connections only
  finish
  exit
fi
{ [ "$NGPUS" -ge 2 ] || [ "$QUICK" = "--defaults" ]; } && [ $COMM_HUNG = 0 ] && STEP_TIMEOUT=90 step demo make DEPS="$DEPS" demo
# ROWS=0: --defaults as a first contact only (the README's commands, the suites), no benchmark rows.
if { [ "$QUICK" = "--defaults" ] || [ "$QUICK" = "--auto" ]; } && [ $COMM_HUNG = 0 ] && [ "${ROWS:-1}" != 0 ]; then
  auto_steps
  seal_steps
fi
MPI="mpirun --bind-to none --allow-run-as-root --oversubscribe -np 2 -x SZ_SOCKET_IFNAME -x SZ_TIMEOUT_MS -x NCCL_NVLS_ENABLE"
if [ "$NGPUS" = 1 ] && [ $COMM_HUNG = 0 ] && [ "$QUICK" != "--codec" ]; then
  mixed_wires_step
fi
# The interposer as vLLM's NCCL (ctypes, VLLM_NCCL_SO_PATH's way), the fake NCCL as the real one:
# two ranks as threads, real KV through SplitZip, bit-checked (tests/interpose/pynccl_gpu_test.py).
if [ $COMM_HUNG = 0 ] && [ -n "$KV_BF16" ] && [ -f build/lib/libsplitzip_nccl.so ] && [ "$QUICK" != "--codec" ] &&
   python3 -c "import torch" 2>/dev/null; then
  STEP_TIMEOUT=300 step interpose_pynccl python3 tests/interpose/pynccl_gpu_test.py build/lib/libsplitzip_nccl.so \
    build/tests/interpose/libnccl.so.2 "$KV_BF16"
fi
if [ "$NGPUS" = 1 ] && [ $COMM_HUNG = 0 ] && [ "$QUICK" != "--quick" ] && [ "$QUICK" != "--codec" ] && [ "$QUICK" != "--defaults" ] && [ "$QUICK" != "--auto" ]; then
  one_gpu_steps
fi
SRI="env -u CUDA_DEVICE_MAX_CONNECTIONS ./build/perf/sendrecv_perf -t 2 --wire ipc --codec on ${KV_BF16:+--data $KV_BF16}"
[ $COMM_HUNG = 0 ] && [ "$QUICK" = "--codec" ] && [ "${IPC:-1}" != 0 ] && STEP_TIMEOUT=120 step sr_ipc $SRI -n 20 -w 3 -b 4K -e 1G -f 4 -J "$LOGS/sr_ipc.json"
# One way (rank 0 sends, rank 1 receives: the prefill -> decode pattern), on the ipc wire.
OWI="env -u CUDA_DEVICE_MAX_CONNECTIONS ./build/perf/oneway_perf -t 2 --wire ipc --codec on ${KV_BF16:+--data $KV_BF16}"
[ $COMM_HUNG = 0 ] && [ "$QUICK" != "--quick" ] && [ "$QUICK" != "--defaults" ] && [ "$QUICK" != "--auto" ] && { [ "$QUICK" != "--codec" ] || [ "${IPC:-1}" != 0 ]; } && STEP_TIMEOUT=120 step ow_ipc $OWI -n 20 -w 3 -b 4K -e 1G -f 4 -J "$LOGS/ow_ipc.json"
if [ $COMM_HUNG = 0 ] && [ "$QUICK" != "--quick" ] && [ "$QUICK" != "--codec" ] && [ "$QUICK" != "--defaults" ] && [ "$QUICK" != "--auto" ]; then
  ipc_steps
fi
if [ "$QUICK" != "--quick" ] && [ "$QUICK" != "--codec" ] && [ "$QUICK" != "--auto" ] && [ "${PY:-1}" != 0 ] && python3 -c "import torch, nanobind, scikit_build_core" 2>/dev/null; then
  py_suite
fi
if [ -z "$QUICK" ] || [ "$QUICK" = "--codec" ]; then
  codec_steps
fi
if [ -f "$LOGS/sr_ipc.json" ] && [ -f "${CODEC_DIR:-$OUT}/codec_bf16.json" ]; then
  COPY_JSON=; [ -f "$LOGS/copy_perf.json" ] && COPY_JSON=$LOGS/copy_perf.json
  step link_table python3 perf/link_table.py --nocap "$LOGS/sr_ipc.json" --codec "${CODEC_DIR:-$OUT}/codec_bf16.json" "${LINKS[@]}" \
    ${COPY_JSON:+--copy $COPY_JSON} \
    --json "$OUT/comm_h200.json" --png "$OUT/link_speedup.png" --commit "$COMMIT" \
    --date "$(date -u +%F)" --machine "$(tr -d '\n' <"$LOGS/gpu.txt")"
fi
if [ "$QUICK" != "--quick" ] && [ "$QUICK" != "--auto" ]; then
  if [ "$NGPUS" -ge 2 ] && [ $COMM_HUNG = 0 ]; then  # the communicator over NCCL between two GPUs, three wire speeds
    nvlink_steps
  fi
fi

finish
