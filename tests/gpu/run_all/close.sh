# run_all.sh --close: what issues 31, 33 and 34 still need from a GPU, in one device call.

room() {  # room N: at least N seconds are left of the call's CLOSE_LIMIT (585 s: a call may run 600)
  [ $(( ${CLOSE_LIMIT:-585} - SECONDS )) -ge "$1" ] || { SUMMARY+=("$(printf '%-22s %-5s' "$2" skip)"); false; }
}

close_mode() {  # run_all.sh --close; run_all.sh runs finish after it
  # In order of what each issue's "done when" needs, each part skipped (and listed as skip) when
  # the call's time runs short: the GPU suite (1 of 3); issue 31's per-operation rows and goals
  # table (comm_h200.json's "latency"); a carried PROFILE=1 sendrecv_perf's phases at 4 KiB,
  # 256 KiB and 4 MiB (PROF_BIN, default build-profile/perf/sendrecv_perf; tests/gpu/prebuild.sh
  # puts one in the tar); the suite (2 of 3); issues 33 and 34's codec figures beside the authors'
  # codec and their goals table (codec_h200.json); the suite (3 of 3); ncu of the chunk and decode
  # kernels of each type; compute-sanitizer on the codec's and the slot kernels. Each type's
  # codec_perf JSON goes into logs.tar.gz ($OUT brings back 8 files at most).
  # On one H100 (2026-12-07) the suite took 68 s, one codec_perf 10-20 s.
  CODEC_DIR=$LOGS
  DEADLINE=$(( ${CLOSE_LIMIT:-585} - 5 ))
  suite_step
  room 150 latency && latency_steps
  [ -s "$CODEC_DIR/codec_bf16.json" ] && BF16_DONE=1
  PROF_BIN=${PROF_BIN:-build-profile/perf/sendrecv_perf}
  if [ -x "$PROF_BIN" ]; then room 60 prof && prof_rows "env $CARRIED $PROF_BIN"
  else SUMMARY+=("$(printf '%-22s %-5s' prof "skip (no $PROF_BIN)")"); fi
  room 100 gpu_tests_2 && suite_step gpu_tests_2
  room 200 codec && NCU= codec_perf_steps  # ncu below, once
  room 100 gpu_tests_3 && suite_step gpu_tests_3
  room 120 ncu && NCU_KERNELS="chunkKernel decodeKernel" ncu_steps
  room 150 sanitizers && COMM_HUNG=0 sanitizer_steps
}
