#!/usr/bin/env bash
# A/B benchmark: runs one fairq-bench scenario against two fairqd binaries,
# alternating, each on a fresh data directory and a loopback port, and
# prints one JSON line per run. Same-run comparison is what counts on a
# shared machine (docs/benchmarks.md).
#   scripts/bench_ab.sh ROUNDS "SCENARIO [FLAGS]" FAIRQD_A FAIRQD_B [CONFIG]
# The metrics exporter is off unless FAIRQ_AB_METRICS=1 (then on a free
# loopback port).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=$1 args=$2 a=$3 b=$4 cfg=${5:-$root/config/fairqd.yaml}
bench=${FAIRQ_BENCH:-$root/build/client/bench/fairq-bench}
metrics=""
[ "${FAIRQ_AB_METRICS:-0}" = 1 ] && metrics="127.0.0.1:0"
for r in $(seq 1 "$rounds"); do
  for bin in "$a" "$b"; do
    dir=$(mktemp -d)
    port=$((20000 + RANDOM % 20000))
    "$bin" --config "$cfg" --data-dir "$dir/data" --listen "127.0.0.1:$port" \
      --metrics-listen "$metrics" >"$dir/out" 2>"$dir/log" &
    pid=$!
    for _ in $(seq 1 100); do
      grep -q "listening on port" "$dir/out" && break
      sleep 0.1
    done
    # shellcheck disable=SC2086  # args holds the scenario and its flags
    out=$(timeout 600 "$bench" $args --server "127.0.0.1:$port" --json | tail -1)
    echo "round $r $bin: $out"
    kill -TERM "$pid"
    wait "$pid" || true
    rm -rf "$dir"
  done
done
