#!/usr/bin/env bash
# The one GPU-side script: on the H200 machine it builds everything, runs the CPU and GPU test
# suites, compute-sanitizer (memcheck, racecheck) on small sizes, the codec benchmark on real
# KV data (BF16 and FP8 E5M2) and nvCOMP side by side, and prints a short table last.
# JSON results, summary.txt and logs.tar.gz go to $OUT (the device tool's output folder, which
# takes at most 8 files) or build/gpu_out; the step logs are in logs.tar.gz.
#   bash tests/gpu/run_all.sh [--quick|--suite|--comm|--codec|--defaults|--auto|--python|--latency|--handoff|--versus]  (--defaults: the
#       README's commands as a new user types them, every setting default: make, make test, the GPU
#       suite, make demo, pip install ./python and pytest, and the SZ_CODEC=auto rows (perf/auto_table.py);
#       --auto: the GPU suite and every SZ_CODEC=auto row: each emulated link in short (-n 5) and
#       long (-n AUTO_LONG, 100) runs, the small sizes, the mixed sweep, and tcp over loopback with
#       device and host buffers;
#       --python: pip install ./python and pytest only, settings default;
#       --handoff: the hand-off's C++ replay, the lazy connections, the tcp auto rows, the Python
#       package and the layer-wise example;
#       --latency: the GPU suite, then the per-operation figures (issue 31) at 4 KiB and 4 MiB,
#       a CUDA graph's replay, and their profile (PROF=0: none);
#       --versus: the GPU suite, then ipc rows beside a baseline build's sendrecv_perf (BASE), and a
#       carried PROFILE=1 build's phases (PROF_BIN); VS_AUTO=1 adds the mixed and tcp auto rows;
#       --suite: the GPU tests only (the least device time a GPU change is checked with);
#       --quick: tests only; --comm: the
#       communicator's tests, the main job and sendrecv_perf only; --codec: the GPU suite once,
#       compute-sanitizer, the codec benchmarks, the authors' codec beside them and sendrecv_perf
#       on the ipc wire: what a codec change needs)
# With two GPUs it also runs the main job (make demo) and sendrecv_perf over NCCL on NVLink, on
# one NCCL channel (a ~34 GB/s link) and on sockets over loopback, each next to plain NCCL
# (perf/nccl_baseline.py); NVCOMP=1 adds nvCOMP; VARIANTS="a b" (with --codec or a full run)
# runs variant builds build-a/, build-b/ of the codec beside ./build (codec_notes.md, v6). The
# whole run takes longer than one device call may (600 s; at 32b9f9b it was cut in py_tests):
# run --codec and --comm apart, or PY=0 (no Python package) with LINK_GBPS= SLICES=.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/gpu_out}
LOGS=$(mktemp -d)
mkdir -p "$OUT" && rm -f "$OUT/comm_h200.json"  # built afresh from the committed one below
QUICK=${1:-}
declare -a SUMMARY

step() {  # step NAME CMD...: runs CMD (at most STEP_TIMEOUT s), logs to $LOGS/NAME.log, records pass/fail
  local name=$1; shift
  local t0=$SECONDS limit=${STEP_TIMEOUT:-300}
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

py_build() {  # the Python package against this GPU, built here (the machine's Python and torch)
  # The image's CXX (/opt/gcc/bin/g++) has no shared libstdc++: the extension would carry its own
  # C++ runtime beside torch's and crash (README, "Python"). The system compiler is Python's.
  local cxx=${CXX:-g++}
  [ -x /usr/bin/g++ ] && cxx=/usr/bin/g++
  local cuda=SPLITZIP_CUDA=1
  case "$QUICK" in --defaults|--python) cuda= ;; esac  # as the README: CUDA found by the build itself
  STEP_TIMEOUT=400 step py_build env CXX=$cxx $cuda SPLITZIP_JOBS=16 ${DEPS:+DEPS=$DEPS LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu LD_LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu} \
    python3 -m pip install --no-build-isolation --no-deps ./python
}

finish() {  # the short table (summary.txt), the logs; the exit status says whether every step passed
  {
    echo "================ SplitZip GPU run: $COMMIT $(date -u +%F) $(cat "$LOGS/gpu.txt") ================"
    grep -h -E "^\[  (PASSED|FAILED|SKIPPED) \]|tests? ran" "$LOGS"/cpu_tests.log "$LOGS"/gpu_tests.log 2>/dev/null | head -20
    grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$LOGS"/memcheck.log "$LOGS"/racecheck.log "$LOGS"/ipc_memcheck.log "$LOGS"/ipc_racecheck.log 2>/dev/null
    grep -h -E "^\[  (PASSED|FAILED) \]" "$LOGS"/gpu_tests_2.log "$LOGS"/gpu_tests_3.log "$LOGS"/ipc_tests_conn1.log 2>/dev/null
    for f in latency_table versus_table $(cd "$LOGS" && ls prof_*.log 2>/dev/null | grep -v prof_build | sed 's/\.log$//') slot_counts slot_blocks mixed_wires interpose_pynccl py_compilers py_tests py_gdb handoff_layers handoff_layers_link25 sr_ipc_slice_1048576 sr_ipc_slice_4194304 copy_perf perf_bf16 perf_e5m2 \
             $(for V in ${VARIANTS:-}; do echo perf_bf16_$V perf_e5m2_$V; done) ${VARIANTS:+perf_bf16_again perf_e5m2_again} authors nvcomp_bf16 nvcomp_e5m2 link_table auto_table auto_long_table auto_small auto_mixed auto_tcp_dev auto_tcp_host sr_ipc ow_ipc sr_ipc_codebook codebook_cpu demo demo_tcp demo_ipc sr_tcp sr_tcp_64m sr_tcp_auto sr_nvlink sr_nvlink_auto sr_nvlink_ipc interpose_torch sr_1channel sr_sockets \
             nccl_nvlink nccl_1channel nccl_sockets; do [ -f "$LOGS/$f.log" ] && { echo "--- $f"; cat "$LOGS/$f.log"; }; done
    printf '%s\n' "${SUMMARY[@]}"
  } | tee "$OUT/summary.txt"
  tar -czf "$OUT/logs.tar.gz" -C "$LOGS" .
  ! printf '%s\n' "${SUMMARY[@]}" | grep -q FAIL
}

py_suite() {
  # The Python package against this GPU (built here: the machine's Python and torch), its pytest
  # suite with Python's fault handler and glibc's heap checks (a crash names its frame).
  py_build &&
    STEP_TIMEOUT=200 step py_tests env ${DEPS:+LD_LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu} MALLOC_CHECK_=3 \
      LD_PRELOAD="$(ls /lib/x86_64-linux-gnu/libc_malloc_debug.so.0 2>/dev/null)" \
      python3 -X faulthandler -m pytest -v -p no:cacheprovider python/tests ||
    STEP_TIMEOUT=200 step py_gdb cuda-gdb -batch -ex run -ex "bt 30" -ex "info sharedlibrary" --args \
      python3 -m pytest -x -q -p no:cacheprovider python/tests
  handoff_steps
}

tcp_auto_rows() {
  # tcp over loopback, device buffers and host buffers (no GPU visible: the host slots). The
  # rate of loopback moves 10-20 % between processes and rounds, so auto, off and on are timed
  # in every row of one process (--compare on, each cycle starting with the next mode), medians of
  # TCP_CYCLES cycles (7: at 3, one mode's time at one size moved by up to 20 % between cycles,
  # more than the 3 % the goal resolves; 58fde03 on one H100).
  for K in ${TCP_KINDS-dev host}; do
    STEP_TIMEOUT=240 step "auto_tcp_${K}_run" env $([ $K = host ] && echo CUDA_VISIBLE_DEVICES=) \
      ./build/perf/sendrecv_perf -t 2 --wire tcp --codec auto --compare on ${KV_BF16:+--data $KV_BF16} -n 10 -w 2 \
      -b 1M -e 256M -f 4 -N "${TCP_CYCLES:-7}" -J "$LOGS/auto_tcp_$K.json" &&
      step "auto_tcp_$K" python3 perf/auto_table.py --paired "tcp-$K=$LOGS/auto_tcp_$K.json"
  done
}

auto_mixed_rows() {
  # A mixed-size sweep (256 KiB - 1 GiB, every power of 2) over a 25 GB/s link: auto, off and on
  # timed back to back in each row of one process (--compare on), three cycles, medians. Runs of
  # separate processes differ by up to 7 % at 1 MiB on this link (2026-12-06, one H100: the raw
  # wire alone took 64.1-69.2 us per operation from one process to the next), more than the
  # goal's 3 %.
  SZ_IPC_LINK_GBPS=25 STEP_TIMEOUT=240 step auto_mixed_run env -u CUDA_DEVICE_MAX_CONNECTIONS ./build/perf/sendrecv_perf \
    -t 2 --wire ipc --codec auto --compare on ${KV_BF16:+--data $KV_BF16} -n 5 -w 2 -b 256K -e 1G -f 2 -N 3 \
    -J "$LOGS/auto_mixed.json" &&
    step auto_mixed python3 perf/auto_table.py --paired "25=$LOGS/auto_mixed.json"
}

lazy_connections() {
  # Lazy connections (16 ranks as threads, ipc): a step of its own, so a hang there costs nothing else;
  # it prints the slot memory per rank at init, after a ring exchange and after an all-to-all.
  STEP_TIMEOUT=120 step lazy_connections bash -c "set -o pipefail; ./build/tests/splitzip_gpu_tests \
    --gtest_filter='CommLazyGpu*' 2>&1 | tail -n 30"
}

handoff_steps() {
  # The layer-wise hand-off against the whole-cache one (issue: serving engines): a seeded random
  # Llama of 16 layers, 8 KV heads x 128, a 4096-token prompt (256 MiB of BF16 KV), the two ranks
  # as threads of one process on this GPU (--threads: ipc, each rank on a stream of its own). Two
  # processes on one GPU time-slice their kernels, so the layer-wise sends could not overlap the
  # prefill (5006098 on one H100: 1% of the transfer hidden); its figures with date, commit and
  # machine in handoff_h200.json. SZ_DEBUG=INFO for INIT: each pair's connect and slot memory (on
  # 2026-12-06 one H100 timed out there until a launch left multiprocessors to the prefill). On
  # one GPU the "link" is HBM and the transfer is ~1 ms of a ~34 ms time to first token; the same
  # run over a 25 GB/s link emulated between the ranks (SZ_IPC_LINK_GBPS, as a NIC between two
  # nodes) shows the transfer and what the layer-wise hand-off hides of it: handoff_link25.json.
  for L in 0 ${HANDOFF_LINK-25}; do  # HANDOFF_LINK= : the one-GPU run only
    J="$OUT/handoff_h200.json"
    [ "$L" = 0 ] || J="$OUT/handoff_link$L.json"
    STEP_TIMEOUT=400 step "handoff_layers$([ "$L" = 0 ] || echo _link$L)" env ${DEPS:+LD_LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu} \
      SZ_IPC_LINK_GBPS=$L SZ_DEBUG=INFO SZ_DEBUG_SUBSYS=INIT python3 examples/handoff.py \
      --threads --random-llama 16 --prompt-tokens 4096 --new-tokens 8 --repeats 5 --json "$J" &&
      python3 -c "import json, sys; p = sys.argv[1]; d = json.load(open(p)); d.update(date=sys.argv[2], commit=sys.argv[3],
machine=sys.argv[4], link_gbps=float(sys.argv[5])); json.dump(d, open(p, 'w'), indent=1)" "$J" "$(date -u +%F)" "$COMMIT" \
        "$(tr -d '\n' <"$LOGS/gpu.txt")" "$L"
  done
  step py_compilers sh -c 'for c in "${CXX:-g++}" /usr/bin/g++; do echo "$c: $($c --version | head -1); shared libstdc++: $($c -print-file-name=libstdc++.so)"; done; python3 -c "import sys; print(sys.version)"'
}

# Debian packages the image may lack (isal, gtest, fmt, CLI11, nlohmann-json), carried as .deb:
# tests/gpu/fetch_deps.sh fills .deps here; the device call carries it (carry: [".deps"]).
DEPS=
if compgen -G ".deps/*.deb" >/dev/null; then
  DEPS=/tmp/szdeps
  for f in .deps/*.deb; do dpkg -x "$f" "$DEPS"; done
fi
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
  # What a fix of the hand-off and of auto over tcp needs, in one call: the hand-off's C++ replay
  # and the lazy connections (16 ranks: slot memory at the default ring), the tcp auto rows (auto,
  # off and on in one process, the order rotated each cycle), then the Python package and the
  # layer-wise example at full size.
  step build make -j"$(nproc)" DEPS="$DEPS" build/tests/splitzip_gpu_tests build/perf/sendrecv_perf || { finish; exit 1; }
  STEP_TIMEOUT=120 step gpu_tests ./build/tests/splitzip_gpu_tests --gtest_filter='CommHandoffGpu*:CommComputeBesideGpu*' \
    --gtest_output=json:"$OUT/gpu_tests.json"
  # The contrast: a launch on every multiprocessor (the old default) starves the compute before
  # the send, and the test fails at the receive's timeout (10 s), saying so.
  SZ_SLOT_BLOCKS=$(python3 -c "import torch; print(torch.cuda.get_device_properties(0).multi_processor_count)") \
    STEP_TIMEOUT=60 step every_sm_starves bash -c "./build/tests/splitzip_gpu_tests --gtest_filter='CommComputeBesideGpu*' \
    | tee /dev/stderr | grep -q 'waited for the receive.s timeout'"
  # Blocks per launch (the default: half the multiprocessors): 1 GiB over ipc, raw and with the
  # codec, at every multiprocessor, the default and a quarter.
  for N in ${SLOT_BLOCKS_SWEEP-132 0 33}; do
    for M in off on; do
      SZ_SLOT_BLOCKS=$N STEP_TIMEOUT=60 step "blocks_${N}_$M" env -u CUDA_DEVICE_MAX_CONNECTIONS ./build/perf/sendrecv_perf \
        -t 2 --wire ipc --codec $M --data tests/data/tinystories_kv_eval_bf16.safetensors -n 20 -w 3 -b 1G -e 1G
    done
  done
  step slot_blocks sh -c "for f in $LOGS/blocks_*.log; do printf '%s ' \$(basename \$f .log); grep -v '^#' \$f | awk 'NF > 5 {print \$7 \" GB/s\"}'; done"
  lazy_connections
  KV_BF16=tests/data/tinystories_kv_eval_bf16.safetensors tcp_auto_rows
  py_build && handoff_steps
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
for dtype, pattern in (("bf16", "tests/data/tinystories_kv_eval_bf16.safetensors"), ("e5m2", "tests/data/tinystories_kv_eval_e5m2.safetensors")):
    files = sorted(glob.glob(pattern))
    if not files:
        print("no", pattern); continue
    t = load_file(files[0])
    parts = [t[k].contiguous().view(torch.uint8).flatten() for k in t]
    torch.cat(parts).numpy().tofile(f"/tmp/kv_{dtype}.bin")
    print(dtype, files[0], sum(p.numel() for p in parts), "bytes")
PY
KV_BF16=; KV_E5M2=
[ -s /tmp/kv_bf16.bin ] && KV_BF16=/tmp/kv_bf16.bin
[ -s /tmp/kv_e5m2.bin ] && KV_E5M2=/tmp/kv_e5m2.bin

latency_steps() {  # the per-operation figures (issue 31): perf/latency_table.py, comm_h200.json's "latency"
  SRL="env -u CUDA_DEVICE_MAX_CONNECTIONS ./build/perf/sendrecv_perf -t 2 --wire ipc ${KV_BF16:+--data $KV_BF16}"
  for S in 4K 4M; do
    for M in off auto on; do
      STEP_TIMEOUT=60 step "lat_${M}_$S" $SRL --codec $M -b $S -e $S -n 1000 -w 100 -J "$LOGS/lat_${M}_$S.json"
    done
  done
  # One 4 KiB exchange per rank captured into a CUDA graph, replayed 1000 times back to back; and
  # 100 exchanges in one graph, replayed 10 times: the GPU's time per exchange without a launch
  # from the host between them.
  STEP_TIMEOUT=60 step lat_graph_4K $SRL --codec off -b 4K -e 4K -n 1 -w 100 -G 1000 -J "$LOGS/lat_graph_4K.json"
  STEP_TIMEOUT=60 step lat_graph100_4K $SRL --codec off -b 4K -e 4K -n 100 -w 100 -G 10 -J "$LOGS/lat_graph100_4K.json"
  # tcp over loopback, device buffers against host buffers (no GPU visible), 4 KiB raw.
  for K in dev host; do
    STEP_TIMEOUT=60 step "lat_tcp${K}_4K" env $([ $K = host ] && echo CUDA_VISIBLE_DEVICES=) ./build/perf/sendrecv_perf -t 2 \
      --wire tcp --codec off -b 4K -e 4K -n 1000 -w 100 -J "$LOGS/lat_tcp${K}_4K.json"
  done
  step perf_bf16 ./build/perf/codec_perf --type bf16 ${KV_BF16:+--data $KV_BF16} -J "$OUT/codec_bf16.json"
  [ -f "$OUT/comm_h200.json" ] || cp perf/results/comm_h200.json "$OUT/comm_h200.json"
  step latency_table python3 perf/latency_table.py --logs "$LOGS" --codec "$OUT/codec_bf16.json" --into "$OUT/comm_h200.json" \
    --commit "$COMMIT" --date "$(date -u +%F)" --machine "$(tr -d '\n' <"$LOGS/gpu.txt")"
}
prof_rows() {  # prof_rows BIN [SIZES...]: a PROFILE=1 build's sendrecv_perf (PROFILE lines: prof_*.log)
  local bin=$1 S M; shift
  [ $# = 0 ] && set -- 4K 256K 4M
  for S in "$@"; do
    for M in off on; do
      STEP_TIMEOUT=60 step "prof_${M}_$S" bash -c "set -o pipefail; env -u CUDA_DEVICE_MAX_CONNECTIONS $bin -t 2 \
        --wire ipc ${KV_BF16:+--data $KV_BF16} --codec $M -b $S -e $S -n 1000 -w 100 2>&1 | grep -v '^splitzip'"
    done
  done
}
if [ "$QUICK" = "--latency" ]; then
  # The per-operation cost (issue 31), two ranks as threads on the ipc wire, real KV: 4 KiB and
  # 4 MiB raw, auto and with the codec (1000 operations each), beside the codec's standalone
  # calls and a device copy of 4 MiB (codec_perf's 4 MiB row) of the same run; the goals table
  # and comm_h200.json's "latency" block (perf/latency_table.py). Then the same operations in a
  # PROFILE=1 build (base/profile.h: host phases per call, the slot kernels' phases per block)
  # at 4 KiB, 256 KiB and 4 MiB: the PROFILE lines are in logs.tar.gz (prof_*.log).
  # The GPU suite first (the figures are of a build whose tests pass).
  SZ_TEST_KV_BF16=$KV_BF16 STEP_TIMEOUT=150 step gpu_tests ./build/tests/splitzip_gpu_tests --gtest_filter='*:-CommLazyGpu*' \
    --gtest_output=json:"$OUT/gpu_tests.json"
  latency_steps
  [ "${PROF:-1}" != 0 ] && STEP_TIMEOUT=400 step prof_build make -j"$(nproc)" BUILD=build-profile PROFILE=1 DEPS="$DEPS" build-profile/perf/sendrecv_perf &&
    prof_rows ./build-profile/perf/sendrecv_perf
  finish
  exit
fi
if [ "$QUICK" = "--versus" ]; then
  # Issue 29's "no worse than before": this build's ipc figures beside a baseline build's
  # sendrecv_perf (BASE: build-base/sendrecv_perf, built elsewhere from the baseline commit and
  # carried; it finds isal in .deps), in one call, the two alternating over VS_ROUNDS rounds: 4 KiB
  # and 1 GiB with no cap, and 1 GiB over the VS_LINKS emulated links; raw and with the codec
  # (perf/versus_table.py). The GPU suite first, without the 16-rank lazy test (its memory figures
  # need a process of their own: lazy_connections in the other modes). Then a carried PROFILE=1
  # build's phases (PROF_BIN, where one was carried) at PROF_SIZES (empty: none), and with VS_AUTO=1 the mixed
  # auto sweep and the tcp auto rows. On 2026-12-06 the whole of it did not fit one 590 s call.
  step build make -j"$(nproc)" DEPS="$DEPS" build/tests/splitzip_gpu_tests build/perf/sendrecv_perf || { finish; exit 1; }
  SZ_TEST_KV_BF16=$KV_BF16 STEP_TIMEOUT=150 step gpu_tests ./build/tests/splitzip_gpu_tests --gtest_filter='*:-CommLazyGpu*' \
    --gtest_output=json:"$OUT/gpu_tests.json"
  CARRIED=${DEPS:+LD_LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu}  # carried binaries' libraries (isal, fmt)
  BASE=${BASE:-build-base/sendrecv_perf}
  # A carried binary this machine cannot load (its system libraries) is built here from the
  # baseline's carried source (build-base-src), where there is one.
  if ! env $CARRIED "$BASE" --help >"$LOGS/base_check.log" 2>&1 && [ -f build-base-src/Makefile ]; then
    STEP_TIMEOUT=300 step build_base make -C build-base-src -j"$(nproc)" DEPS="$DEPS" build/perf/sendrecv_perf &&
      BASE=build-base-src/build/perf/sendrecv_perf
  fi
  for R in $(seq "${VS_ROUNDS:-2}"); do
    for W in base head; do
      BIN=./build/perf/sendrecv_perf; [ $W = base ] && BIN=$BASE
      SR="env -u CUDA_DEVICE_MAX_CONNECTIONS $CARRIED $BIN -t 2 --wire ipc --codec on ${KV_BF16:+--data $KV_BF16}"
      STEP_TIMEOUT=60 step "vs_${W}_4k_$R" $SR -n 1000 -w 100 -b 4K -e 4K -J "$LOGS/vs_${W}_4k_$R.json"
      STEP_TIMEOUT=60 step "vs_${W}_1g_$R" $SR -n 10 -w 2 -c 0 -b 1G -e 1G -J "$LOGS/vs_${W}_1g_$R.json"
      for B in ${VS_LINKS-25 100}; do
        SZ_IPC_LINK_GBPS=$B STEP_TIMEOUT=60 step "vs_${W}_l${B}_$R" $SR -n 5 -w 2 -c 0 -b 1G -e 1G -J "$LOGS/vs_${W}_l${B}_$R.json"
      done
    done
  done
  step versus_table python3 perf/versus_table.py --logs "$LOGS" --rounds "${VS_ROUNDS:-2}" --base-name "${BASE_NAME:-base}" \
    --json "$OUT/versus.json"
  PROF_BIN=${PROF_BIN:-build-profile/perf/sendrecv_perf}
  [ -e "$PROF_BIN" ] && [ -n "${PROF_SIZES-4K}" ] && step prof_check env $CARRIED "$PROF_BIN" --help &&
    prof_rows "env $CARRIED $PROF_BIN" ${PROF_SIZES-4K}
  if [ -n "${VS_AUTO:-}" ]; then  # issue 28's mixed sweep and tcp rows
    auto_mixed_rows
    KV_BF16=tests/data/tinystories_kv_eval_bf16.safetensors tcp_auto_rows
  fi
  finish
  exit
fi
case "$QUICK" in --comm|--codec|--auto|--suite) ;; --defaults) step make_test make DEPS="$DEPS" test ;; *) step cpu_tests ./build/tests/splitzip_tests ;; esac
GPU_FILTER='*'
[ "$QUICK" = "--comm" ] && GPU_FILTER='*CommGpu*'
COMM_HUNG=0  # the communicator tests timed out: the demo and sendrecv_perf would hang too
SZ_TEST_KV_BF16=$KV_BF16 STEP_TIMEOUT=120 step gpu_tests ./build/tests/splitzip_gpu_tests --gtest_filter="$GPU_FILTER:-CommLazyGpu*" --gtest_output=json:"$OUT/gpu_tests.json" || { [ $? = 124 ] && COMM_HUNG=1; }
[ "$QUICK" != "--codec" ] && lazy_connections
if [ "$QUICK" = "--suite" ]; then  # the GPU suite and the lazy connections only
  finish
  exit
fi
{ [ "$NGPUS" -ge 2 ] || [ "$QUICK" = "--defaults" ]; } && [ $COMM_HUNG = 0 ] && STEP_TIMEOUT=90 step demo make DEPS="$DEPS" demo
if { [ "$QUICK" = "--defaults" ] || [ "$QUICK" = "--auto" ]; } && [ $COMM_HUNG = 0 ]; then
  # SZ_CODEC=auto against on and off over emulated links and with no cap (the defaults issue's
  # goals): one sendrecv_perf per link and mode, short runs (the first operations count); with
  # --auto long ones (-n AUTO_LONG) too.
  auto_rows() {  # auto_rows TAG ITERS: sets AUTO_ROWS to the LINK=ON.json,AUTO.json pairs
    AUTO_ROWS=()
    for B in ${AUTO_LINKS-12.5 25 50 100 200 400 0}; do
      for M in on auto; do
        SZ_IPC_LINK_GBPS=$B STEP_TIMEOUT=150 step "$1_${M}_$B" env -u CUDA_DEVICE_MAX_CONNECTIONS ./build/perf/sendrecv_perf \
          -t 2 --wire ipc --codec $M ${KV_BF16:+--data $KV_BF16} -n "$2" -w 2 -b 64M -e 1G -f 16 -J "$LOGS/$1_${M}_$B.json"
      done
      [ -f "$LOGS/$1_on_$B.json" ] && [ -f "$LOGS/$1_auto_$B.json" ] && AUTO_ROWS+=("$B=$LOGS/$1_on_$B.json,$LOGS/$1_auto_$B.json")
    done
  }
  if [ "$QUICK" = "--auto" ]; then
    auto_rows auto_long "${AUTO_LONG:-100}"
    [ ${#AUTO_ROWS[@]} -gt 0 ] && step auto_long_table python3 perf/auto_table.py --json "$OUT/auto_long_h200.json" "${AUTO_ROWS[@]}"
    tcp_auto_rows
  fi
  if [ "$QUICK" = "--auto" ]; then
    # Slots per peer and direction (issue 29: the default's memory by measurement, <= 3 % loss
    # at 1 GiB): 1 GiB raw and with the codec at each SZ_SLOT_COUNT, two interleaved rounds.
    for R in 1 2; do
      for N in ${SLOT_COUNTS-132 264}; do
        for M in off on; do
          SZ_SLOT_COUNT=$N STEP_TIMEOUT=60 step "slots_${N}_${M}_$R" env -u CUDA_DEVICE_MAX_CONNECTIONS ./build/perf/sendrecv_perf \
            -t 2 --wire ipc --codec $M ${KV_BF16:+--data $KV_BF16} -n 20 -w 3 -b 1G -e 1G -J "$LOGS/slots_${N}_${M}_$R.json"
        done
      done
    done
    step slot_counts python3 -c "import glob, json, os, re, statistics
rows = {}
for f in sorted(glob.glob(os.path.join('$LOGS', 'slots_*.json'))):
    n, m, r = re.match(r'slots_(\d+)_(\w+)_(\d+)', os.path.basename(f)).groups()
    rows.setdefault((int(n), m), []).append(json.load(open(f))[0]['algbw'])
for (n, m), v in sorted(rows.items()):
    print(f'SZ_SLOT_COUNT={n:5d} codec {m:3s} 1 GiB algbw GB/s {\" \".join(f\"{x:.1f}\" for x in v)} median {statistics.median(v):.1f}')"
    latency_steps
  fi
  auto_rows auto "${AUTO_ITERS:-5}"
  # comm_h200.json as committed, with these rows as its "auto" block (copy it back over perf/results/).
  [ -f "$OUT/comm_h200.json" ] || cp perf/results/comm_h200.json "$OUT/comm_h200.json"
  [ ${#AUTO_ROWS[@]} -gt 0 ] && step auto_table python3 perf/auto_table.py --json "$OUT/auto_h200.json" --into "$OUT/comm_h200.json" \
    --commit "$COMMIT" --date "$(date -u +%F)" --machine "$(tr -d '\n' <"$LOGS/gpu.txt")" "${AUTO_ROWS[@]}"
  # The small sizes (4 KiB - 128 KiB, no cap): auto within 1 us of the raw wire of the same run.
  STEP_TIMEOUT=60 step auto_small_run env -u CUDA_DEVICE_MAX_CONNECTIONS ./build/perf/sendrecv_perf -t 2 --wire ipc \
    --codec auto ${KV_BF16:+--data $KV_BF16} -n 200 -w 20 -b 4K -e 128K -f 2 -J "$LOGS/auto_small.json" &&
    step auto_small python3 perf/auto_table.py --small "$LOGS/auto_small.json"
  auto_mixed_rows
  # What the auto model records, per send (SZ_DEBUG=TRACE): 64 MiB over a 25 GB/s link.
  SZ_IPC_LINK_GBPS=25 SZ_DEBUG=TRACE SZ_DEBUG_SUBSYS=P2P STEP_TIMEOUT=60 step auto_trace sh -c "./build/perf/sendrecv_perf \
    -t 2 --wire ipc --codec auto ${KV_BF16:+--data $KV_BF16} -n 20 -w 2 -b 64M -e 64M 2>&1 | grep -v ' slice ' | tail -n 400"
  # The per-operation figures (issue 31) with the README's build: comm_h200.json's "latency" block.
  [ "$QUICK" = "--defaults" ] && latency_steps
fi
if { [ "$QUICK" = "--defaults" ] || [ "$QUICK" = "--auto" ]; } && [ $COMM_HUNG = 0 ]; then
  # SZ_AUTH_DATA / SZ_ENCRYPT on device buffers over tcp (the slot proxy seals the pinned slots):
  # 64 MiB with the codec on, plain and each setting alternately, three rounds; GB/s per run.
  for R in 1 2 3; do
    for V in plain SZ_AUTH_DATA SZ_ENCRYPT; do
      STEP_TIMEOUT=60 step "seal_${V}_$R" env $([ $V != plain ] && echo $V=1) ./build/perf/sendrecv_perf -t 2 --wire tcp \
        --codec on ${KV_BF16:+--data $KV_BF16} -n 10 -w 2 -b 64M -e 64M -J "$LOGS/seal_${V}_$R.json"
    done
  done
  step seal_cost python3 -c "import json, statistics, sys
v = {k: statistics.median(json.load(open(f'$LOGS/seal_{k}_{r}.json'))[0]['algbw'] for r in (1, 2, 3)) for k in ('plain', 'SZ_AUTH_DATA', 'SZ_ENCRYPT')}
print('tcp, device buffers, 64 MiB, codec on, medians of 3 alternating runs: ' + ', '.join(f'{k} {g:.2f} GB/s ({g / v[\"plain\"]:.2f}x)' for k, g in v.items()))"
fi
MPI="mpirun --bind-to none --allow-run-as-root --oversubscribe -np 2 -x SZ_SOCKET_IFNAME -x SZ_TIMEOUT_MS -x NCCL_NVLS_ENABLE"
if [ "$NGPUS" = 1 ] && [ $COMM_HUNG = 0 ] && [ "$QUICK" != "--codec" ]; then
  # Wires per pair (src/wire_choice.h) with the default choice: two processes of two threads on
  # one GPU make four ranks, threads of a process paired over ipc and the processes over tcp;
  # each rank's launch mixes an ipc and a tcp operation. Bit-checked (#wrong must be 0).
  STEP_TIMEOUT=120 step mixed_wires sh -c "$MPI ${LD_LIBRARY_PATH:+-x LD_LIBRARY_PATH} -x SZ_DEBUG=INFO -x SZ_DEBUG_SUBSYS=INIT \
    ./build/perf/sendrecv_perf -t 2 --codec on ${KV_BF16:+--data $KV_BF16} -b 1M -e 4M -f 4 -n 2 -w 1 -c 1 \
    >$LOGS/mixed.out 2>&1; rc=\$?; cat $LOGS/mixed.out; [ \$rc = 0 ] && grep -q 'wires ipc+tcp' $LOGS/mixed.out &&
    grep -q 'Out of bounds values *: 0 OK' $LOGS/mixed.out"
fi
# The interposer as vLLM's NCCL (ctypes, VLLM_NCCL_SO_PATH's way), the fake NCCL as the real one:
# two ranks as threads, real KV through SplitZip, bit-checked (tests/interpose/pynccl_gpu_test.py).
if [ $COMM_HUNG = 0 ] && [ -n "$KV_BF16" ] && [ -f build/lib/libsplitzip_nccl.so ] && [ "$QUICK" != "--codec" ] &&
   python3 -c "import torch" 2>/dev/null; then
  STEP_TIMEOUT=300 step interpose_pynccl python3 tests/interpose/pynccl_gpu_test.py build/lib/libsplitzip_nccl.so \
    build/tests/interpose/libnccl.so.2 "$KV_BF16"
fi
if [ "$NGPUS" = 1 ] && [ $COMM_HUNG = 0 ] && [ "$QUICK" != "--quick" ] && [ "$QUICK" != "--codec" ] && [ "$QUICK" != "--defaults" ] && [ "$QUICK" != "--auto" ]; then
  # One GPU (NCCL refuses two ranks on one GPU): both ranks share it as two threads of one
  # process (kernels of two processes on one GPU time-slice, and the slot protocol's kernels wait
  # on each other), over the tcp wire (slots in pinned memory, a proxy thread) and the ipc wire.
  STEP_TIMEOUT=90 step demo_tcp ./build/examples/disagg_kv_transfer --data tests/data/tinystories_kv_eval_bf16.safetensors --wire tcp
  STEP_TIMEOUT=90 step demo_ipc ./build/examples/disagg_kv_transfer --data tests/data/tinystories_kv_eval_bf16.safetensors --wire ipc
  STEP_TIMEOUT=90 step sr_tcp ./build/perf/sendrecv_perf -t 2 --wire tcp ${KV_BF16:+--data $KV_BF16} -n 10 -w 3 --codec on -b 1K -e 256M -f 16
  # 64 MiB five times over (loopback's own rate varies from run to run): the tcp goal's figure.
  STEP_TIMEOUT=90 step sr_tcp_64m ./build/perf/sendrecv_perf -t 2 --wire tcp ${KV_BF16:+--data $KV_BF16} -n 10 -w 3 --codec on -b 64M -e 64M -N 5
  STEP_TIMEOUT=90 step sr_tcp_auto ./build/perf/sendrecv_perf -t 2 --wire tcp ${KV_BF16:+--data $KV_BF16} -n 10 -w 3 --codec auto -b 4 -e 256M -f 16
fi
SRI="env -u CUDA_DEVICE_MAX_CONNECTIONS ./build/perf/sendrecv_perf -t 2 --wire ipc --codec on ${KV_BF16:+--data $KV_BF16}"
[ $COMM_HUNG = 0 ] && [ "$QUICK" = "--codec" ] && STEP_TIMEOUT=120 step sr_ipc $SRI -n 20 -w 3 -b 4K -e 1G -f 4 -J "$LOGS/sr_ipc.json"
# One way (rank 0 sends, rank 1 receives: the prefill -> decode pattern), on the ipc wire.
OWI="env -u CUDA_DEVICE_MAX_CONNECTIONS ./build/perf/oneway_perf -t 2 --wire ipc --codec on ${KV_BF16:+--data $KV_BF16}"
[ $COMM_HUNG = 0 ] && [ "$QUICK" != "--quick" ] && [ "$QUICK" != "--defaults" ] && [ "$QUICK" != "--auto" ] && STEP_TIMEOUT=120 step ow_ipc $OWI -n 20 -w 3 -b 4K -e 1G -f 4 -J "$LOGS/ow_ipc.json"
if [ $COMM_HUNG = 0 ] && [ "$QUICK" != "--quick" ] && [ "$QUICK" != "--codec" ] && [ "$QUICK" != "--defaults" ] && [ "$QUICK" != "--auto" ]; then
  # The GPU suite twice more; the slot protocol on the ipc wire (two ranks as threads of one
  # process) once with CUDA_DEVICE_MAX_CONNECTIONS=1;
  # compute-sanitizer on its kernels; sendrecv_perf with no cap and over emulated links.
  IPC_FILTER='SlotIpc*:*ipc*'
  for run in 2 3; do  # the whole GPU suite three times in a row (the first is gpu_tests above)
    SZ_TEST_KV_BF16=$KV_BF16 STEP_TIMEOUT=120 step gpu_tests_$run ./build/tests/splitzip_gpu_tests --gtest_filter="$GPU_FILTER:-CommLazyGpu*"
  done
  # At 1, the two ranks' streams share one hardware queue on one GPU: a rank's second launch on a
  # stream, queued behind its first, holds the queue while the first waits for the peer's launch
  # behind it (docs/PIPELINE.md). The cases that queue several operations on one stream without
  # the peer's in between need two GPUs or more queues: left out here.
  CONN1_OUT='*groups3*:*groups6*:SlotIpc.ManyMessagesMatchInOrder:*CopyQueuedBehindAHeldReceive*'
  STEP_TIMEOUT=150 step ipc_tests_conn1 env CUDA_DEVICE_MAX_CONNECTIONS=1 ./build/tests/splitzip_gpu_tests --gtest_filter="$IPC_FILTER:-$CONN1_OUT"
  IPC_SAN='SlotIpc.ManyMessagesMatchInOrder:SlotIpc.CountMismatchFailsBothSides:*ipc_codec1_n2097153*:*ipc_codec1_n3145729_seg7*'
  STEP_TIMEOUT=200 step ipc_memcheck compute-sanitizer --tool memcheck --error-exitcode 1 ./build/tests/splitzip_gpu_tests --gtest_filter="$IPC_SAN"
  STEP_TIMEOUT=200 step ipc_racecheck compute-sanitizer --tool racecheck --error-exitcode 1 ./build/tests/splitzip_gpu_tests --gtest_filter='*ipc_codec1_n2097153*'
  STEP_TIMEOUT=120 step sr_ipc $SRI -n 20 -w 3 -b 4K -e 1G -f 4 -J "$LOGS/sr_ipc.json"
  # The same four copies of 1 GiB without the protocol: the raw bound (perf/copy_perf.cu).
  STEP_TIMEOUT=60 step copy_perf ./build/perf/copy_perf --bytes 1G --ops 4 --piece 256K -J "$LOGS/copy_perf.json"
  for S in ${SLICES-1048576 4194304}; do  # raw 1 GiB with larger slices (SLICES= skips them)
    SZ_SLOT_SLICE_BYTES=$S STEP_TIMEOUT=60 step "sr_ipc_slice_$S" env -u CUDA_DEVICE_MAX_CONNECTIONS ./build/perf/sendrecv_perf \
      -t 2 --wire ipc --codec on ${KV_BF16:+--data $KV_BF16} -n 10 -w 2 -b 1G -e 1G
  done
  # SZ_CODEBOOK=auto against the fixed default codebook (issue 13's goal: steady-state encode
  # throughput within 2 %): the ipc slot path, both settings in 7 interleaved rounds each, medians
  # and paired ratios of algbw; and the host slots' encode loop (CPU codec) the same way.
  STEP_TIMEOUT=400 step sr_ipc_codebook env -u CUDA_DEVICE_MAX_CONNECTIONS python3 perf/codebook_cost.py -r 7 \
    -J "$LOGS/sr_ipc_codebook.json" -- ./build/perf/sendrecv_perf -t 2 --wire ipc --codec on ${KV_BF16:+--data $KV_BF16} \
    -n 20 -w 3 -b 64M -e 1G -f 4
  STEP_TIMEOUT=120 step codebook_cpu ./build/perf/codebook_perf ${KV_BF16:+--data $KV_BF16} --rounds 21 --iters 5
  LINKS=()
  for B in ${LINK_GBPS-12.5 25 50 100 200 400}; do  # emulated links (LINK_GBPS= skips them)
    SZ_IPC_LINK_GBPS=$B STEP_TIMEOUT=120 step "sr_link_$B" $SRI -n 5 -w 2 -b 64M -e 1G -f 4 -J "$LOGS/sr_link_$B.json" &&
      LINKS+=(--link "$B=$LOGS/sr_link_$B.json")
  done
fi
if [ "$QUICK" != "--quick" ] && [ "$QUICK" != "--codec" ] && [ "$QUICK" != "--auto" ] && [ "${PY:-1}" != 0 ] && python3 -c "import torch, nanobind, scikit_build_core" 2>/dev/null; then
  py_suite
fi
if [ -z "$QUICK" ] || [ "$QUICK" = "--codec" ]; then
  SAN_FILTER='GpuCodec.KvLikeBf16Sizes:GpuCodec.EveryFp8E5m2Pattern:GpuCodec.MisalignedPointers:GpuCodec.CorruptFramesReportErrorsLikeTheCpuDecoder:GpuCodec.HistogramMatchesCpu:GpuBatchCodec.BadEncodeItemsFailAlone:GpuBatchCodec.CountThatOverflowsFailsAlone:GpuBatchCodec.CorruptItemsAmongGoodOnesMatchTheCpuDecoder:GpuCodecPaths.SoloChunksOverflowingTheirSlot:GpuCodecPaths.EscapeBudgetBoundary:GpuCodecPaths.SoloMisalignedPointers:GpuBatchCodecPaths.*'
  SZ_TEST_SMALL=1 step memcheck compute-sanitizer --tool memcheck --error-exitcode 1 ./build/tests/splitzip_gpu_tests --gtest_filter="$SAN_FILTER"
  # The slot kernels under memcheck: the communicator on one GPU, one way and both ways, and the
  # device calibration (the test whose peer never receives is left out: it waits out a timeout).
  [ $COMM_HUNG = 0 ] && SZ_TEST_SMALL=1 STEP_TIMEOUT=200 step memcheck_comm compute-sanitizer --tool memcheck --error-exitcode 1 \
    ./build/tests/splitzip_gpu_tests --gtest_filter='CommSelfGpu*:SlotIpc*:CommCodebookGpu*:-*NeverReceives*'
  SZ_TEST_SMALL=1 step racecheck compute-sanitizer --tool racecheck --error-exitcode 1 ./build/tests/splitzip_gpu_tests --gtest_filter='GpuCodec.KvLikeBf16Sizes:GpuCodec.EveryFp8E5m2Pattern:GpuBatchCodec.BadEncodeItemsFailAlone:GpuBatchCodec.CorruptItemsAmongGoodOnesMatchTheCpuDecoder:GpuCodecPaths.SoloChunksOverflowingTheirSlot:GpuBatchCodecPaths.ManyItemsWithMixedCodebooks'
  step perf_bf16 ./build/perf/codec_perf --type bf16 ${KV_BF16:+--data $KV_BF16} -J "$OUT/codec_bf16.json"
  step perf_e5m2 ./build/perf/codec_perf --type fp8e5m2 ${KV_E5M2:+--data $KV_E5M2} -J "$OUT/codec_e5m2.json"
  # VARIANTS="enc dec": variant builds of the codec beside ./build's, in the same lease: each NAME
  # is a build-NAME/ folder (make BUILD=build-NAME NVCCFLAGS="-O3 -g -lineinfo -D..." with its
  # perf/codec_perf and tests/splitzip_gpu_tests, built here or carried in PREBUILT). Each runs
  # the grid codec's GPU tests, memcheck and racecheck on small sizes, and the two benchmarks
  # (JSON in logs.tar.gz); then ./build's benchmarks once more, so drift between rounds shows.
  for V in ${VARIANTS:-}; do
    VB=build-$V
    SZ_TEST_KV_BF16=$KV_BF16 STEP_TIMEOUT=120 step "gpu_codec_$V" $VB/tests/splitzip_gpu_tests --gtest_filter='GpuCodec*'
    SZ_TEST_SMALL=1 step "memcheck_$V" compute-sanitizer --tool memcheck --error-exitcode 1 $VB/tests/splitzip_gpu_tests \
      --gtest_filter='GpuCodec.KvLikeBf16Sizes:GpuCodec.EveryFp8E5m2Pattern:GpuCodec.CorruptFramesReportErrorsLikeTheCpuDecoder'
    SZ_TEST_SMALL=1 step "racecheck_$V" compute-sanitizer --tool racecheck --error-exitcode 1 $VB/tests/splitzip_gpu_tests \
      --gtest_filter='GpuCodec.KvLikeBf16Sizes:GpuCodec.EveryFp8E5m2Pattern'
    step "perf_bf16_$V" $VB/perf/codec_perf --type bf16 ${KV_BF16:+--data $KV_BF16} -J "$LOGS/codec_bf16_$V.json"
    step "perf_e5m2_$V" $VB/perf/codec_perf --type fp8e5m2 ${KV_E5M2:+--data $KV_E5M2} -J "$LOGS/codec_e5m2_$V.json"
  done
  if [ -n "${VARIANTS:-}" ]; then
    step perf_bf16_again ./build/perf/codec_perf --type bf16 ${KV_BF16:+--data $KV_BF16} -J "$LOGS/codec_bf16_again.json"
    step perf_e5m2_again ./build/perf/codec_perf --type fp8e5m2 ${KV_E5M2:+--data $KV_E5M2} -J "$LOGS/codec_e5m2_again.json"
  fi
  # The authors' Triton codec on the same sample, when its codec_gpu.py was fetched into the
  # git-ignored .authors/ with .authors/run_authors.py (never committed; README, "Benchmarks").
  [ -f .authors/codec_gpu.py ] && [ -f .authors/run_authors.py ] && [ -n "$KV_BF16" ] &&
    STEP_TIMEOUT=240 step authors python3 .authors/run_authors.py "$KV_BF16"
  if [ -n "${NCU:-}" ]; then  # NCU=1: ncu on the codec's first calls at 512 MiB and a batched call (logs.tar.gz)
    NCU_SECTIONS="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats
      --section SchedulerStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis"
    for T in bf16 fp8e5m2; do  # the first launch of each kernel in its section
      KV=$KV_BF16; [ $T = fp8e5m2 ] && KV=$KV_E5M2
      for K in chunkKernel placeKernel decodeKernel encodeBatchKernel decodeBatchKernel; do
        STEP_TIMEOUT=120 step "ncu_${T}_$K" ncu --clock-control none --kernel-name regex:"$K" -c 1 $NCU_SECTIONS \
          ./build/perf/codec_perf --type $T ${KV:+--data $KV} --iters 1 --warmup 0 --min-bytes 536870912
      done
    done
  fi
  if [ -n "${NVCOMP:-}" ] && [ -d .nvcomp ] && [ -f perf/nvcomp/build.sh ]; then
    step nvcomp_build bash perf/nvcomp/build.sh .nvcomp && {
      [ -n "$KV_BF16" ] && step nvcomp_bf16 ./build/perf/nvcomp_perf --type bf16 --data "$KV_BF16" --json "$OUT/nvcomp_bf16.json"
      [ -n "$KV_E5M2" ] && step nvcomp_e5m2 ./build/perf/nvcomp_perf --type fp8e5m2 --data "$KV_E5M2" --json "$OUT/nvcomp_e5m2.json"
    }
  fi
fi
if [ -f "$LOGS/sr_ipc.json" ] && [ -f "$OUT/codec_bf16.json" ]; then
  COPY_JSON=; [ -f "$LOGS/copy_perf.json" ] && COPY_JSON=$LOGS/copy_perf.json
  step link_table python3 perf/link_table.py --nocap "$LOGS/sr_ipc.json" --codec "$OUT/codec_bf16.json" "${LINKS[@]}" \
    ${COPY_JSON:+--copy $COPY_JSON} \
    --json "$OUT/comm_h200.json" --png "$OUT/link_speedup.png" --commit "$COMMIT" \
    --date "$(date -u +%F)" --machine "$(tr -d '\n' <"$LOGS/gpu.txt")"
fi
if [ "$QUICK" != "--quick" ] && [ "$QUICK" != "--auto" ]; then
  if [ "$NGPUS" -ge 2 ] && [ $COMM_HUNG = 0 ]; then  # the communicator over NCCL between two GPUs, three wire speeds
    SR="./build/perf/sendrecv_perf --wire nccl ${KV_BF16:+--data $KV_BF16} -n 10 -w 3"
    STEP_TIMEOUT=60 step sr_nvlink $MPI $SR --codec on -b 1K -e 1G -f 32 -J "$LOGS/sr_nvlink.json"
    STEP_TIMEOUT=60 step sr_1channel $MPI -x NCCL_MAX_NCHANNELS=1 $SR --codec on -b 1M -e 1G -f 32 -J "$LOGS/sr_1channel.json"
    STEP_TIMEOUT=60 step sr_sockets $MPI -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_NET=Socket -x NCCL_SOCKET_IFNAME=lo \
      $SR --codec on -b 1M -e 64M -f 8 -J "$LOGS/sr_sockets.json"
    STEP_TIMEOUT=60 step sr_nvlink_auto $MPI $SR --codec auto -b 4 -e 1G -f 32 -J "$LOGS/sr_nvlink_auto.json"
    # The interposer under unchanged PyTorch (docs/INTERPOSE.md): plain NCCL, then preloaded.
    STEP_TIMEOUT=180 step interpose_torch tests/interpose/run_torch_p2p.sh --sizes 1M,16M,64M,256M
    # The ipc wire between the two GPUs: encode straight into the peer's memory over NVLink.
    STEP_TIMEOUT=60 step sr_nvlink_ipc $MPI ./build/perf/sendrecv_perf --wire ipc ${KV_BF16:+--data $KV_BF16} -n 10 -w 3 \
      --codec on -b 4 -e 1G -f 16 -J "$LOGS/sr_nvlink_ipc.json"
    # Plain NCCL (PyTorch) on the same three links: the "raw" of the goals, without SplitZip
    # (SKIP_BASELINE=1 leaves it out).
    [ -n "${SKIP_BASELINE:-}" ] && NB=true || NB="python3 perf/nccl_baseline.py -n 10 -w 3"
    STEP_TIMEOUT=60 step nccl_nvlink $NB -b 1M -e 1G -f 32
    NCCL_MAX_NCHANNELS=1 STEP_TIMEOUT=60 step nccl_1channel $NB -b 1M -e 1G -f 32
    NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo STEP_TIMEOUT=60 step nccl_sockets \
      $NB -b 1M -e 64M -f 8

  fi
fi

finish
