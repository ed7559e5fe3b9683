# run_all.sh's SZ_CODEC=auto rows (issue 28, the defaults issue): emulated links, the mixed sweep,
# tcp over loopback, and the --defaults/--auto block that runs them.

tcp_auto_rows() {
  # tcp over loopback, device buffers and host buffers (no GPU visible: the host slots). The
  # rate of loopback moves 10-20 % between processes and rounds, so auto, off and on are timed
  # in every row of one process (--compare on, each cycle starting with the next mode), and
  # perf/auto_table.py --paired takes auto's rate over the better mode's within each cycle: the
  # median over the cycles, with its 95 % interval (issue 28's goal is 3 %).
  # Short blocks, many cycles: -n 3 -w 1, TCP_CYCLES 42 (a multiple of 3: every mode in every
  # place of the order equally often). The median's standard error is about 1.25 x the per-cycle
  # ratio's spread / sqrt(cycles). At -n 10 -w 2 -N 7 (58fde03, one H100) one mode's time moved
  # ~10 % cycle to cycle, and 7 cycles could not resolve 3 %. On the 2-core development machine
  # (host buffers, two other builds beside it) an A/A control (--codec on --compare on) spread
  # 6-22 % per cycle at -n 10 and at -n 3 alike (medians 13 and 15 %): short blocks lose little
  # per cycle and buy more cycles. -c 0: a checked operation per mode and row cost about as much as the timed ones at
  # -n 3 (the tcp wire's bits are the GPU suite's and perf_output_test's to check). 42 cycles x 3
  # modes x 4 operations x 341 MiB (1-256 MiB): 50-72 s per kind at 2.5-3.5 GB/s; a spread of 3 %
  # would give an error of 0.6 %. The table's interval says whether the run resolved the goal.
  for K in ${TCP_KINDS-dev host}; do
    STEP_TIMEOUT=240 step "auto_tcp_${K}_run" env $([ $K = host ] && echo CUDA_VISIBLE_DEVICES=) \
      ./build/perf/sendrecv_perf -t 2 --wire tcp --codec auto --compare on ${KV_BF16:+--data $KV_BF16} -n 3 -w 1 -c 0 \
      -b 1M -e 256M -f 4 -N "${TCP_CYCLES:-42}" -J "$LOGS/auto_tcp_$K.json" &&
      step "auto_tcp_$K" python3 perf/auto_table.py --paired "tcp-$K=$LOGS/auto_tcp_$K.json"
    # 1 MiB in longer blocks, with an A/A control: auto beside two codec-off communicators
    # (--compare off). At -n 3 a 1 MiB block lasts ~1.5 ms and its interval spanned 0.91-1.02.
    STEP_TIMEOUT=120 step "auto_tcp_${K}_aa_run" env $([ $K = host ] && echo CUDA_VISIBLE_DEVICES=) \
      ./build/perf/sendrecv_perf -t 2 --wire tcp --codec auto --compare off ${KV_BF16:+--data $KV_BF16} -n 30 -w 2 -c 0 \
      -b 1M -e 1M -N 30 -J "$LOGS/auto_tcp_${K}_aa.json" &&
      step "auto_tcp_${K}_aa" python3 perf/auto_table.py --paired "tcp-$K=$LOGS/auto_tcp_${K}_aa.json"
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

auto_short_rows() {  # the short (-n AUTO_ITERS, 5) emulated-link rows and their table, comm_h200.json's "auto" block
  auto_rows auto "${AUTO_ITERS:-5}"
  # comm_h200.json as committed, with these rows as its "auto" block (copy it back over perf/results/).
  [ -f "$OUT/comm_h200.json" ] || cp perf/results/comm_h200.json "$OUT/comm_h200.json"
  [ ${#AUTO_ROWS[@]} -gt 0 ] && step auto_table python3 perf/auto_table.py --json "$OUT/auto_h200.json" --into "$OUT/comm_h200.json" \
    --commit "$COMMIT" --date "$(date -u +%F)" --machine "$(tr -d '\n' <"$LOGS/gpu.txt")" "${AUTO_ROWS[@]}"
}

auto_steps() {  # run_all.sh --defaults and --auto, after the GPU suite
  # SZ_CODEC=auto against on and off over emulated links and with no cap (the defaults issue's
  # goals): one sendrecv_perf per link and mode, short runs (the first operations count); with
  # --auto long ones (-n AUTO_LONG) too.
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
  auto_short_rows
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
}
