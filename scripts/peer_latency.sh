#!/usr/bin/env bash
# The `latency` workload (2,000 single enqueues/s for 5 s, workers waiting)
# against fairqd, against beanstalkd with an fsync per write (-f 0), open
# loop as fairq-bench and closed loop (each put waits for its reply), and
# against beanstalkd in memory (no binlog), each on a fresh data directory
# and a loopback port, fairqd first in odd rounds and last in even ones: a
# peer measured on the same machine in the same minutes
# (docs/benchmarks.md).
#   scripts/peer_latency.sh [ROUNDS] [FAIRQD] [CONFIG]
# Prints "round N NAME: JSON" a run. Needs beanstalkd (apt-get install
# beanstalkd; scripts/dev.sh leaves it out) and python3 (a free port).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="${FAIRQ_BUILD_DIR:-$root/build}"
rounds=${1:-2}
fairqd=${2:-$build/server/fairqd}
cfg=${3:-$root/config/fairqd.yaml}
bench=${FAIRQ_BENCH:-$build/client/bench/fairq-bench}
peer=$build/tests/bench/fairq_beanstalkd_latency
fail() {
  echo "peer_latency: $*" >&2
  exit 1
}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || fail "ROUNDS must be a positive number, not '$rounds'"
for exe in "$fairqd" "$bench" "$peer"; do
  [ -x "$exe" ] || fail "no $exe (build it first)"
done
command -v beanstalkd >/dev/null || fail "needs beanstalkd (apt-get install beanstalkd)"
command -v python3 >/dev/null || fail "needs python3"

# shellcheck source=scripts/fairqd_daemon.sh
source "$root/scripts/fairqd_daemon.sh"
bpid="" bdir="" bport=""
stop_beanstalkd() {
  if [ -n "$bpid" ]; then
    kill "$bpid" 2>/dev/null || true
    wait "$bpid" 2>/dev/null || true
  fi
  if [ -n "$bdir" ]; then rm -rf "$bdir"; fi
  bpid="" bdir=""
}
trap 'cleanup; stop_beanstalkd' EXIT

# beanstalkd cannot report a port it chose, so one is picked free here;
# if another process takes it first, beanstalkd exits and another is tried.
# $1: "fsync" (a binlog in $bdir, fsync per write) or "memory".
start_beanstalkd() {
  local durable=()
  bdir=$(mktemp -d)
  if [ "$1" = fsync ]; then durable=(-b "$bdir" -f 0); fi
  for _ in 1 2 3; do
    bport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    beanstalkd -l 127.0.0.1 -p "$bport" "${durable[@]}" 2>>"$bdir/log" &
    bpid=$!
    for _ in $(seq 1 50); do
      kill -0 "$bpid" 2>/dev/null || break
      # Alive after the probe too: else the port may be another process's.
      if (exec 3<>"/dev/tcp/127.0.0.1/$bport") 2>/dev/null &&
        kill -0 "$bpid" 2>/dev/null; then
        return 0
      fi
      sleep 0.1
    done
    kill "$bpid" 2>/dev/null || true
    wait "$bpid" 2>/dev/null || true
    bpid=""
  done
  fail "beanstalkd did not start: $(tail -n 3 "$bdir/log")"
}

run_fairqd() {
  local out
  fresh_daemon
  out=$(timeout 120 "$bench" latency --server "127.0.0.1:$port" --json | tail -1) ||
    daemon_failed "fairq-bench latency failed"
  [[ $out == "{"* ]] || daemon_failed "fairq-bench latency printed no result"
  echo "round $1 fairqd: $out"
  cleanup
}

# $1: the round; $2: start_beanstalkd's mode; then the client's flags.
run_beanstalkd() {
  local round=$1 mode=$2 out
  shift 2
  start_beanstalkd "$mode"
  out=$(timeout 120 "$peer" --port "$bport" "$@") ||
    fail "the beanstalkd client failed; beanstalkd's log: $(tail -n 5 "$bdir/log")"
  echo "round $round beanstalkd $mode $*: $out"
  stop_beanstalkd
}

run_peers() {
  run_beanstalkd "$1" fsync
  run_beanstalkd "$1" fsync --closed-loop
  run_beanstalkd "$1" memory
}

for r in $(seq 1 "$rounds"); do
  if ((r % 2)); then
    run_fairqd "$r"
    run_peers "$r"
  else
    run_peers "$r"
    run_fairqd "$r"
  fi
done
