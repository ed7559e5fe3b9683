# run_all.sh --versus (issue 29): this build's ipc figures beside a baseline build's.

versus_mode() {  # run_all.sh --versus; run_all.sh runs finish after it
  # Issue 29's "no worse than before": this build's ipc figures beside a baseline build's
  # sendrecv_perf (BASE: build-base/sendrecv_perf, built elsewhere from the baseline commit and
  # carried; it finds isal in .deps), in one call, the two alternating over VS_ROUNDS rounds: 4 KiB
  # and 1 GiB with no cap, and 1 GiB over the VS_LINKS emulated links; raw and with the codec
  # (perf/versus_table.py). The GPU suite first (SUITE=0: not), without the 16-rank lazy test (its
  # memory figures need a process of their own: lazy_connections in the other modes). Then a carried
  # PROFILE=1 build's phases (PROF_BIN, where one was carried) at PROF_SIZES (empty: none), and with
  # VS_AUTO=1 the short emulated-link auto rows, the mixed auto sweep and the tcp auto rows.
  # On 2026-12-06 the whole of it did not fit one 590 s call.
  step build make -j"$(nproc)" DEPS="$DEPS" build/tests/splitzip_gpu_tests build/perf/sendrecv_perf || { finish; exit 1; }
  [ "${SUITE:-1}" != 0 ] && suite_step
  versus_rows
  PROF_BIN=${PROF_BIN:-build-profile/perf/sendrecv_perf}
  [ -e "$PROF_BIN" ] && [ -n "${PROF_SIZES-4K}" ] && step prof_check env $CARRIED "$PROF_BIN" --help &&
    prof_rows "env $CARRIED $PROF_BIN" ${PROF_SIZES-4K}
  if [ -n "${VS_AUTO:-}" ]; then  # issue 28's short emulated-link rows, mixed sweep and tcp rows
    auto_short_rows
    auto_mixed_rows
    KV_BF16=tests/data/tinystories_kv_eval_bf16.safetensors tcp_auto_rows
  fi
}

versus_rows() {  # the alternating rows of this build and the baseline's (BASE), and their table
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
}
