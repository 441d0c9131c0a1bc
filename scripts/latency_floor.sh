#!/usr/bin/env bash
# The latency target against the machine's floor: `fairq-bench ping` (a gRPC
# health check, answered without the broker) and `latency` at each of
# several enqueue rates, alternating, each run on a fresh fairqd. What
# `latency` reports above `ping` at the same rate is fairqd's; what `ping`
# reports is the loopback and the thread wake-ups (docs/benchmarks.md,
# tenth round). Prints one JSON line per run.
#   scripts/latency_floor.sh [ROUNDS] [RATES]   (default 3, "200 500 1000 2000")
# FAIRQD and FAIRQ_BENCH override the binaries.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-3} rates=${2:-200 500 1000 2000}
fairqd=${FAIRQD:-$root/build/server/fairqd}
bench=${FAIRQ_BENCH:-$root/build/client/bench/fairq-bench}
cfg=$root/config/fairqd.yaml
metrics=""
# shellcheck source=scripts/fairqd_daemon.sh
source "$root/scripts/fairqd_daemon.sh"
trap cleanup EXIT
for r in $(seq 1 "$rounds"); do
  for rate in $rates; do
    for scenario in ping latency; do
      fresh_daemon
      out=$(timeout 300 "$bench" "$scenario" --rate "$rate" \
        --server "127.0.0.1:$port" --json | tail -1)
      echo "round $r $scenario $rate: $out"
      cleanup
    done
  done
done
