#!/usr/bin/env bash
# The `latency` workload (2,000 single enqueues/s for 5 s, workers waiting)
# against fairqd and against beanstalkd with an fsync per write (-f 0),
# alternating, each on a fresh data directory and a loopback port: a peer
# measured on the same machine in the same minutes (docs/benchmarks.md).
#   scripts/peer_latency.sh [ROUNDS] [FAIRQD] [CONFIG]
# Needs beanstalkd (apt-get install beanstalkd); prints one JSON line a run.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-2}
fairqd=${2:-$root/build/server/fairqd}
cfg=${3:-$root/config/fairqd.yaml}
bench=${FAIRQ_BENCH:-$root/build/client/bench/fairq-bench}
peer=$root/build/tests/bench/fairq_beanstalkd_latency
command -v beanstalkd >/dev/null ||
  { echo "peer_latency: needs beanstalkd (apt-get install beanstalkd)" >&2; exit 1; }
[ -x "$peer" ] || { echo "peer_latency: build first (no $peer)" >&2; exit 1; }
# shellcheck source=scripts/fairqd_daemon.sh
source "$root/scripts/fairqd_daemon.sh"
bpid="" bdir=""
stop_beanstalkd() {
  if [ -n "$bpid" ]; then kill "$bpid" 2>/dev/null || true; wait "$bpid" || true; fi
  if [ -n "$bdir" ]; then rm -rf "$bdir"; fi
  bpid="" bdir=""
}
trap 'cleanup; stop_beanstalkd' EXIT
daemon_failed() {
  echo "peer_latency: $*; fairqd's last log lines:" >&2
  tail -n 20 "$dir/log" >&2 || true
  exit 1
}
# A free loopback port for beanstalkd, which cannot bind port 0 and report.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
for r in $(seq 1 "$rounds"); do
  fresh_daemon
  out=$(timeout 120 "$bench" latency --server "127.0.0.1:$port" --json | tail -1)
  echo "round $r fairqd: $out"
  cleanup
  bdir=$(mktemp -d)
  bport=$(free_port)
  beanstalkd -l 127.0.0.1 -p "$bport" -b "$bdir" -f 0 &
  bpid=$!
  for _ in $(seq 1 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$bport") 2>/dev/null && break
    sleep 0.1
  done
  echo "round $r beanstalkd -f 0: $(timeout 120 "$peer" --port "$bport")"
  stop_beanstalkd
done
