#!/usr/bin/env bash
# Peer failure: two sendrecv_perf processes, started separately (SZ_COMM_ID on 127.0.0.1, no MPI),
# exchange 64 MiB messages; mid-transfer one is killed (SIGKILL: its sockets close) or frozen
# (SIGSTOP: its sockets stay open and silent). The survivor must exit non-zero within the
# configured timeout (SZ_TIMEOUT_MS=5000, plus slack), naming szRemoteError or szTimeout: a dead
# peer is reported, never waited on forever. The whole script is bounded by `timeout 60`.
#
# Usage: tests/fault/peer_kill_test.sh [path/to/sendrecv_perf]   (default: $BUILD/perf/sendrecv_perf,
# BUILD defaulting to build). Exits 0 when every case passed.
if [[ -z ${PEER_KILL_TEST_BOUNDED:-} ]]; then
  PEER_KILL_TEST_BOUNDED=1 exec timeout 60 "$0" "$@"
fi
set -uo pipefail
# Ranks started apart meet at SZ_COMM_ID with a shared secret (the perf tools require one).
export SZ_COMM_SECRET="$(od -An -tx1 -N16 /dev/urandom | tr -d " \n")"

PERF="${1:-${BUILD:-build}/perf/sendrecv_perf}"
TIMEOUT_MS=5000
SLACK_S=5          # the survivor notices within the timeout; this covers its exit
WARMUP_S=2         # time for both ranks to connect and start moving data
LOG="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null; done
  rm -rf "$LOG"
}
trap cleanup EXIT

if [[ ! -x $PERF ]]; then
  echo "peer_kill_test: $PERF not found: build it with make (BUILD=...) first"
  exit 1
fi

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

passed=0
failed=0

# run_case NAME SIGNAL VICTIM_RANK: starts ranks 0 and 1, signals the victim, checks the survivor.
run_case() {
  local name=$1 signal=$2 victim=$3 survivor=$((1 - $3)) port
  port="$(free_port)"
  local -a rank_pid
  for rank in 0 1; do
    SZ_COMM_ID="127.0.0.1:$port" SZ_RANK=$rank SZ_NRANKS=2 SZ_TIMEOUT_MS=$TIMEOUT_MS \
      "$PERF" -b 64M -e 64M -n 1000 -w 0 -c 0 --wire tcp --codec on >"$LOG/$name.$rank" 2>&1 &
    rank_pid[$rank]=$!
    pids+=($!)
  done
  sleep "$WARMUP_S"
  if ! kill -0 "${rank_pid[0]}" 2>/dev/null || ! kill -0 "${rank_pid[1]}" 2>/dev/null; then
    echo "FAIL $name: a rank exited before the fault was injected"
    tail -n 5 "$LOG/$name.0" "$LOG/$name.1"
    failed=$((failed + 1))
    return
  fi
  disown "${rank_pid[$victim]}"  # its end is expected: no "Killed" job notice
  kill "-$signal" "${rank_pid[$victim]}"
  local start=$SECONDS deadline=$((SECONDS + TIMEOUT_MS / 1000 + SLACK_S))
  while kill -0 "${rank_pid[$survivor]}" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
  if kill -0 "${rank_pid[$survivor]}" 2>/dev/null; then
    echo "FAIL $name: rank $survivor still running $((SECONDS - start)) s after its peer's SIG$signal"
    tail -n 5 "$LOG/$name.$survivor"
    failed=$((failed + 1))
  else
    local status=0
    wait "${rank_pid[$survivor]}" || status=$?
    if ((status != 0)) && grep -Eq 'szRemoteError|szTimeout' "$LOG/$name.$survivor"; then
      echo "PASS $name: rank $survivor exited with status $status after $((SECONDS - start)) s:" \
        "$(grep -Eo 'sz(RemoteError|Timeout).*' "$LOG/$name.$survivor" | head -n 1 | cut -c1-160)"
      passed=$((passed + 1))
    else
      echo "FAIL $name: rank $survivor exited with status $status without naming szRemoteError or szTimeout"
      tail -n 5 "$LOG/$name.$survivor"
      failed=$((failed + 1))
    fi
  fi
  kill -9 "${rank_pid[$victim]}" 2>/dev/null
}

run_case kill-rank1 KILL 1
run_case kill-rank0 KILL 0
run_case stop-rank1 STOP 1

echo "peer_kill_test: cases ok $passed, cases failing $failed"
((failed == 0))
