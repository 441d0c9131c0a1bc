#!/usr/bin/env bash
# A/B benchmark: runs one fairq-bench scenario against two fairqd binaries,
# alternating, each on a fresh data directory and a loopback port, and
# prints one JSON line per run. Same-run comparison is what counts on a
# shared machine (docs/benchmarks.md).
#   scripts/bench_ab.sh ROUNDS "SCENARIO [FLAGS]" FAIRQD_A FAIRQD_B [CONFIG]
# The metrics exporter is off unless FAIRQ_AB_METRICS=1 (then on a free
# loopback port). Each daemon listens on a free port (port 0).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=$1 args=$2 a=$3 b=$4 cfg=${5:-$root/config/fairqd.yaml}
bench=${FAIRQ_BENCH:-$root/build/client/bench/fairq-bench}
metrics=""
[ "${FAIRQ_AB_METRICS:-0}" = 1 ] && metrics="127.0.0.1:0"
# shellcheck source=scripts/fairqd_daemon.sh
source "$root/scripts/fairqd_daemon.sh"
trap cleanup EXIT
for r in $(seq 1 "$rounds"); do
  for fairqd in "$a" "$b"; do
    fresh_daemon
    # shellcheck disable=SC2086  # args holds the scenario and its flags
    out=$(timeout 600 "$bench" $args --server "127.0.0.1:$port" --json | tail -1)
    echo "round $r $fairqd: $out"
    cleanup
  done
done
