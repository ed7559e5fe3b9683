# run_all.sh's per-operation figures (issue 31): the latency rows, a PROFILE=1 build's phases, and
# the --latency mode.

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
  # One rank sending 4 KiB to itself (a stream-ordered copy), as NCCL's 7.45 us of issue 31 was
  # taken (a one-rank communicator, ncclSend and ncclRecv in one group).
  STEP_TIMEOUT=60 step lat_self_4K env -u CUDA_DEVICE_MAX_CONNECTIONS ./build/perf/sendrecv_perf -t 1 --wire ipc \
    ${KV_BF16:+--data $KV_BF16} --codec off -b 4K -e 4K -n 1000 -w 100 -J "$LOGS/lat_self_4K.json"
  # 16 exchanges in one group (-m 16: 32 operations a rank, the most a group takes on the slot
  # path): the host's cost per operation of a large group ("host_us"), beside the rows' one.
  STEP_TIMEOUT=60 step lat_group_4K $SRL --codec off -b 4K -e 4K -n 200 -w 20 -m 16 -J "$LOGS/lat_group_4K.json"
  # tcp over loopback, device buffers against host buffers (no GPU visible), 4 KiB raw.
  for K in dev host; do
    STEP_TIMEOUT=60 step "lat_tcp${K}_4K" env $([ $K = host ] && echo CUDA_VISIBLE_DEVICES=) ./build/perf/sendrecv_perf -t 2 \
      --wire tcp --codec off -b 4K -e 4K -n 1000 -w 100 -J "$LOGS/lat_tcp${K}_4K.json"
  done
  step perf_bf16 ./build/perf/codec_perf --type bf16 ${KV_BF16:+--data $KV_BF16} -J "${CODEC_DIR:-$OUT}/codec_bf16.json"
  [ -f "$OUT/comm_h200.json" ] || cp perf/results/comm_h200.json "$OUT/comm_h200.json"
  step latency_table python3 perf/latency_table.py --logs "$LOGS" --codec "${CODEC_DIR:-$OUT}/codec_bf16.json" --into "$OUT/comm_h200.json" \
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

latency_mode() {  # run_all.sh --latency; run_all.sh runs finish after it
  # The per-operation cost (issue 31), two ranks as threads on the ipc wire, real KV: 4 KiB and
  # 4 MiB raw, auto and with the codec (1000 operations each), beside the codec's standalone
  # calls and a device copy of 4 MiB (codec_perf's 4 MiB row) of the same run; the goals table
  # and comm_h200.json's "latency" block (perf/latency_table.py). Then the same operations in a
  # PROFILE=1 build (base/profile.h: host phases per call, the slot kernels' phases per block)
  # at 4 KiB, 256 KiB and 4 MiB: the PROFILE lines are in logs.tar.gz (prof_*.log).
  # The GPU suite first (the figures are of a build whose tests pass).
  suite_step
  latency_steps
  # PROF_BIN: a carried PROFILE=1 sendrecv_perf (in PREBUILT's tar or beside it); else it is built here.
  PROF_BIN=${PROF_BIN:-build-profile/perf/sendrecv_perf}
  [ "${PROF:-1}" = 0 ] && return
  if [ ! -x "$PROF_BIN" ]; then
    STEP_TIMEOUT=400 step prof_build make -j"$(nproc)" BUILD=build-profile PROFILE=1 DEPS="$DEPS" \
      build-profile/perf/sendrecv_perf || return
    PROF_BIN=build-profile/perf/sendrecv_perf
  fi
  prof_rows "env $CARRIED $PROF_BIN"
}
