#!/usr/bin/env bash
# Counts fairqd's instructions over one `fairq-bench cycle` with valgrind's
# callgrind: the same count for the same binary and workload whatever else
# the machine does, so it shows a change to the hot path that wall-clock
# runs on a shared 2-core box cannot (docs/benchmarks.md, eighth round).
#   scripts/profile_cycle.sh [JOBS] [FAIRQD] [OUT]
# Defaults: 20,000 jobs (about 15 s under callgrind), build/server/fairqd,
# ./callgrind.fairqd.out. Prints the total, the main threads' shares and the
# costliest functions; open OUT with callgrind_annotate or kcachegrind.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=${1:-20000}
fairqd=${2:-$root/build/server/fairqd}
out=${3:-$PWD/callgrind.fairqd.out}
bench=${FAIRQ_BENCH:-$root/build/client/bench/fairq-bench}
command -v valgrind >/dev/null || { echo "profile_cycle: needs valgrind" >&2; exit 1; }
dir=$(mktemp -d)
trap 'kill -TERM "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out" "$fairqd" \
  --config "$root/config/fairqd.yaml" --data-dir "$dir/data" \
  --listen 127.0.0.1:0 --metrics-listen "" >"$dir/out" 2>"$dir/log" &
pid=$!
for _ in $(seq 1 600); do
  grep -q "listening on port" "$dir/out" && break
  kill -0 "$pid" 2>/dev/null || { tail "$dir/log" >&2; exit 1; }
  sleep 0.1
done
port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$dir/out")
# Deadlines are generous: everything runs ~30 times slower under callgrind.
"$bench" cycle --jobs "$jobs" --server "127.0.0.1:$port" --rpc-timeout 120 \
  --json | tail -n 1
kill -TERM "$pid"
wait "$pid" || true
callgrind_annotate --inclusive=yes "$out" 2>/dev/null |
  grep -E "PROGRAM TOTALS|Writer::ApplyTurns\(|Dispatcher::Loop\(\) \[|DBImpl::Write\(|Store::GetJobs\(.*\[" |
  cut -c1-150
callgrind_annotate --inclusive=no "$out" 2>/dev/null | sed -n '/file:function/,$p' |
  sed -n 3,22p | cut -c1-150
