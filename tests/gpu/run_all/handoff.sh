# run_all.sh's hand-off steps: the lazy connections, the layer-wise hand-off example, and the
# --handoff mode.

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

handoff_mode() {  # run_all.sh --handoff; run_all.sh runs finish after it
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
}
