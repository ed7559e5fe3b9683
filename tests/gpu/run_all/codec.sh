# run_all.sh's codec steps (a full run and --codec): compute-sanitizer on the codec's kernels, the
# codec benchmarks, variant builds, the authors' codec, ncu and nvCOMP.

codec_steps() {  # a full run and --codec
  [ "${SAN:-1}" != 0 ] && sanitizer_steps
  codec_perf_steps
}

sanitizer_steps() {  # compute-sanitizer on the codec's and the slot kernels (SAN=0: none)
  SAN_FILTER='GpuCodec.KvLikeBf16Sizes:GpuCodec.EveryFp8E5m2Pattern:GpuCodec.MisalignedPointers:GpuCodec.CorruptFramesReportErrorsLikeTheCpuDecoder:GpuCodec.HistogramMatchesCpu:GpuBatchCodec.BadEncodeItemsFailAlone:GpuBatchCodec.CountThatOverflowsFailsAlone:GpuBatchCodec.CorruptItemsAmongGoodOnesMatchTheCpuDecoder:GpuCodecPaths.SoloChunksOverflowingTheirSlot:GpuCodecPaths.EscapeBudgetBoundary:GpuCodecPaths.SoloMisalignedPointers:GpuBatchCodecPaths.*:GpuCodecV2.*'
  SZ_TEST_SMALL=1 step memcheck compute-sanitizer --tool memcheck --error-exitcode 1 ./build/tests/splitzip_gpu_tests --gtest_filter="$SAN_FILTER"
  # The slot kernels under memcheck: the communicator on one GPU, one way and both ways, and the
  # device calibration (the test whose peer never receives is left out: it waits out a timeout).
  [ $COMM_HUNG = 0 ] && SZ_TEST_SMALL=1 STEP_TIMEOUT=200 step memcheck_comm compute-sanitizer --tool memcheck --error-exitcode 1 \
    ./build/tests/splitzip_gpu_tests --gtest_filter='CommSelfGpu*:SlotIpc*:CommCodebookGpu*:-*NeverReceives*'
  SZ_TEST_SMALL=1 step racecheck compute-sanitizer --tool racecheck --error-exitcode 1 ./build/tests/splitzip_gpu_tests --gtest_filter='GpuCodec.KvLikeBf16Sizes:GpuCodec.EveryFp8E5m2Pattern:GpuBatchCodec.BadEncodeItemsFailAlone:GpuBatchCodec.CorruptItemsAmongGoodOnesMatchTheCpuDecoder:GpuCodecPaths.SoloChunksOverflowingTheirSlot:GpuBatchCodecPaths.ManyItemsWithMixedCodebooks:GpuCodecV2.EveryFp16PatternBothWidths:GpuCodecV2.EveryE4m3ByteBothWidths'
}

codec_perf_steps() {  # the codec benchmarks, variants, the authors' codec, the goals table, ncu, nvCOMP
  # BF16_DONE=1: --close's latency rows took BF16's row from this build, in this lease.
  [ -n "${BF16_DONE:-}" ] ||
    step perf_bf16 ./build/perf/codec_perf --type bf16 ${KV_BF16:+--data $KV_BF16} -J "${CODEC_DIR:-$OUT}/codec_bf16.json"
  step perf_e5m2 ./build/perf/codec_perf --type fp8e5m2 ${KV_E5M2:+--data $KV_E5M2} -J "${CODEC_DIR:-$OUT}/codec_e5m2.json"
  # Format version 2's types (issue 33: >= 1500 GB/s per call at 512 MiB), beside BF16's.
  step perf_fp16 ./build/perf/codec_perf --type fp16 ${KV_FP16:+--data $KV_FP16} -J "${CODEC_DIR:-$OUT}/codec_fp16.json"
  step perf_e4m3 ./build/perf/codec_perf --type fp8e4m3 ${KV_E4M3:+--data $KV_E4M3} -J "${CODEC_DIR:-$OUT}/codec_e4m3.json"
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
  # The authors' Triton codec on the same sample, where its codec_gpu.py was copied into the
  # git-ignored .authors/ (never committed): perf/authors_codec.py times it as codec_perf times ours.
  [ -f .authors/codec_gpu.py ] && [ -n "$KV_BF16" ] &&
    STEP_TIMEOUT=240 step authors python3 perf/authors_codec.py --codec-dir .authors "$KV_BF16"
  # Issue 34's 4 MiB goal is a median of interleaved runs (a copy's back-to-back rate moves between
  # runs): BF16 twice more, then the goals table of issues 33 and 34 and codec_h200.json.
  for R in 2 3; do
    step "perf_bf16_$R" ./build/perf/codec_perf --type bf16 ${KV_BF16:+--data $KV_BF16} -J "$LOGS/codec_bf16_$R.json"
  done
  cp perf/results/codec_h200.json "$OUT/codec_h200.json"
  step codec_table python3 perf/codec_table.py --dir "${CODEC_DIR:-$OUT}" --bf16-runs "$LOGS"/codec_bf16_[23].json \
    --authors "$LOGS/authors.log" --into "$OUT/codec_h200.json" --commit "$COMMIT" --date "$(date -u +%F)" \
    --machine "$(tr -d '\n' <"$LOGS/gpu.txt")"
  [ -n "${NCU:-}" ] && ncu_steps
  if [ -n "${NVCOMP:-}" ] && [ -d .nvcomp ] && [ -f perf/nvcomp/build.sh ]; then
    step nvcomp_build bash perf/nvcomp/build.sh .nvcomp && {
      [ -n "$KV_BF16" ] && step nvcomp_bf16 ./build/perf/nvcomp_perf --type bf16 --data "$KV_BF16" --json "$OUT/nvcomp_bf16.json"
      [ -n "$KV_E5M2" ] && step nvcomp_e5m2 ./build/perf/nvcomp_perf --type fp8e5m2 --data "$KV_E5M2" --json "$OUT/nvcomp_e5m2.json"
    }
  fi
}

ncu_steps() {  # ncu on the codec's first calls at 512 MiB and a batched call (logs.tar.gz; NCU=1 in --codec)
  local T K KV KERNELS
  NCU_SECTIONS="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats
    --section SchedulerStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis"
  for T in bf16 fp8e5m2 fp16 fp8e4m3; do  # the first launch of each kernel in its section
    case $T in bf16) KV=$KV_BF16 ;; fp8e5m2) KV=$KV_E5M2 ;; fp16) KV=$KV_FP16 ;; *) KV=$KV_E4M3 ;; esac
    KERNELS=${NCU_KERNELS:-chunkKernel placeKernel decodeKernel encodeBatchKernel decodeBatchKernel}
    case $T in fp16|fp8e4m3) KERNELS="chunkKernel decodeKernel" ;; esac  # issue 33's goal: the 512 MiB calls
    for K in $KERNELS; do
      STEP_TIMEOUT=120 step "ncu_${T}_$K" ncu --clock-control none --kernel-name regex:"$K" -c 1 $NCU_SECTIONS \
        ./build/perf/codec_perf --type $T ${KV:+--data $KV} --iters 1 --warmup 0 --min-bytes 536870912
    done
  done
}
