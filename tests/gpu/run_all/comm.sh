# run_all.sh's communicator steps on the wires: sealed tcp, mixed wires, the one-GPU demos, the ipc
# wire's suite, sanitizers and rows, and the two-GPU rows over NCCL.

seal_steps() {  # --defaults and --auto
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
}

mixed_wires_step() {  # one GPU, every mode but --codec
  # Wires per pair (src/wire_choice.h) with the default choice: two processes of two threads on
  # one GPU make four ranks, threads of a process paired over ipc and the processes over tcp;
  # each rank's launch mixes an ipc and a tcp operation. Bit-checked (#wrong must be 0).
  STEP_TIMEOUT=120 step mixed_wires sh -c "$MPI ${LD_LIBRARY_PATH:+-x LD_LIBRARY_PATH} -x SZ_DEBUG=INFO -x SZ_DEBUG_SUBSYS=INIT \
    ./build/perf/sendrecv_perf -t 2 --codec on ${KV_BF16:+--data $KV_BF16} -b 1M -e 4M -f 4 -n 2 -w 1 -c 1 \
    >$LOGS/mixed.out 2>&1; rc=\$?; cat $LOGS/mixed.out; [ \$rc = 0 ] && grep -q 'wires ipc+tcp' $LOGS/mixed.out &&
    grep -q 'Out of bounds values *: 0 OK' $LOGS/mixed.out"
}

one_gpu_steps() {  # one GPU: a full run and --comm
  # One GPU (NCCL refuses two ranks on one GPU): both ranks share it as two threads of one
  # process (kernels of two processes on one GPU time-slice, and the slot protocol's kernels wait
  # on each other), over the tcp wire (slots in pinned memory, a proxy thread) and the ipc wire.
  STEP_TIMEOUT=90 step demo_tcp ./build/examples/disagg_kv_transfer --data tests/data/tinystories_kv_eval_bf16.safetensors --wire tcp
  STEP_TIMEOUT=90 step demo_ipc ./build/examples/disagg_kv_transfer --data tests/data/tinystories_kv_eval_bf16.safetensors --wire ipc
  STEP_TIMEOUT=90 step sr_tcp ./build/perf/sendrecv_perf -t 2 --wire tcp ${KV_BF16:+--data $KV_BF16} -n 10 -w 3 --codec on -b 1K -e 256M -f 16
  # 64 MiB five times over (loopback's own rate varies from run to run): the tcp goal's figure.
  STEP_TIMEOUT=90 step sr_tcp_64m ./build/perf/sendrecv_perf -t 2 --wire tcp ${KV_BF16:+--data $KV_BF16} -n 10 -w 3 --codec on -b 64M -e 64M -N 5
  STEP_TIMEOUT=90 step sr_tcp_auto ./build/perf/sendrecv_perf -t 2 --wire tcp ${KV_BF16:+--data $KV_BF16} -n 10 -w 3 --codec auto -b 4 -e 256M -f 16
}

ipc_steps() {  # a full run and --comm
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
}

nvlink_steps() {  # two GPUs: a full run, --comm, --codec and --defaults
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
}
