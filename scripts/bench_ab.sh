#!/usr/bin/env bash
# A/B benchmark: runs one fairq-bench scenario against two fairqd binaries,
# alternating, each on a fresh data directory and a loopback port, and
# prints one JSON line per run. Same-run comparison is what counts on a
# shared machine (docs/benchmarks.md).
#   scripts/bench_ab.sh ROUNDS "SCENARIO [FLAGS]" FAIRQD_A FAIRQD_B [CONFIG]
# The metrics exporter is off unless FAIRQ_AB_METRICS=1 (then on a free
# loopback port). Each daemon listens on a free port (port 0).
# FAIRQ_BENCH_B, if set, is the fairq-bench for B's runs (FAIRQ_BENCH for
# A's): give the same fairqd twice to compare two load generators.
# FAIRQ_CONFIG_B, if set, is the config for B's runs (CONFIG for A's): give
# the same fairqd twice to compare two settings.
# FAIRQ_ARGS_B, if set, is the scenario and flags for B's runs: give the
# same fairqd twice to set a measurement beside a control (an A/A run).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=$1 args=$2 a=$3 b=$4 cfg=${5:-$root/config/fairqd.yaml}
bench_a=${FAIRQ_BENCH:-$root/build/client/bench/fairq-bench}
bench_b=${FAIRQ_BENCH_B:-$bench_a}
cfg_a=$cfg
cfg_b=${FAIRQ_CONFIG_B:-$cfg}
args_a=$args
args_b=${FAIRQ_ARGS_B:-$args}
metrics=""
[ "${FAIRQ_AB_METRICS:-0}" = 1 ] && metrics="127.0.0.1:0"
# shellcheck source=scripts/fairqd_daemon.sh
source "$root/scripts/fairqd_daemon.sh"
trap cleanup EXIT
# The side that runs first alternates by round: the first run of a pair
# tends to do better (docs/benchmarks.md, sixteenth round).
for r in $(seq 1 "$rounds"); do
  order="a b"
  [ $((r % 2)) = 0 ] && order="b a"
  for side in $order; do
    if [ "$side" = a ]; then
      fairqd=$a bench=$bench_a cfg=$cfg_a args=$args_a
    else
      fairqd=$b bench=$bench_b cfg=$cfg_b args=$args_b
    fi
    fresh_daemon
    # shellcheck disable=SC2086  # args holds the scenario and its flags
    out=$(timeout 600 "$bench" $args --server "127.0.0.1:$port" --json | tail -1)
    echo "round $r $side $fairqd $bench $cfg: $out"
    cleanup
  done
done
