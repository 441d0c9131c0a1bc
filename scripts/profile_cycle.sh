#!/usr/bin/env bash
# Counts fairqd's instructions over one `fairq-bench cycle` with valgrind's
# callgrind: the same count for the same binary and workload whatever else
# the machine does, so it shows a change to the hot path that wall-clock
# runs on a shared 2-core box cannot (docs/benchmarks.md, eighth round).
#   scripts/profile_cycle.sh [JOBS] [FAIRQD] [OUT]
# Defaults: 20,000 jobs (about 15 s under callgrind), build/server/fairqd,
# ./callgrind.fairqd.out; FAIRQ_BENCH names another fairq-bench. Prints the
# total, the main threads' shares and the costliest functions; open OUT
# with callgrind_annotate or kcachegrind.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=${1:-20000}
fairqd=${2:-$root/build/server/fairqd}
out=${3:-$PWD/callgrind.fairqd.out}
bench=${FAIRQ_BENCH:-$root/build/client/bench/fairq-bench}
command -v valgrind >/dev/null || { echo "profile_cycle: needs valgrind" >&2; exit 1; }
dir=$(mktemp -d) pid=""
# The daemon is stopped and waited for before its data directory goes.
cleanup() {
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
failed() {
  echo "profile_cycle: $*; fairqd's last log lines:" >&2
  tail -n 20 "$dir/log" >&2 || true
  exit 1
}
valgrind --tool=callgrind --callgrind-out-file="$out" "$fairqd" \
  --config "$root/config/fairqd.yaml" --data-dir "$dir/data" \
  --listen 127.0.0.1:0 --metrics-listen "" >"$dir/out" 2>"$dir/log" &
pid=$!
port=""
for _ in $(seq 1 600); do
  port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$dir/out")
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || failed "fairqd exited"
  sleep 0.1
done
[ -n "$port" ] || failed "fairqd did not listen within 60 s"
# Deadlines are generous: everything runs ~30 times slower under callgrind.
"$bench" cycle --jobs "$jobs" --server "127.0.0.1:$port" --rpc-timeout 120 \
  --json | tail -n 1
kill -TERM "$pid"
wait "$pid" || true
pid=""
{
  callgrind_annotate --inclusive=yes "$out" 2>/dev/null |
    grep -E "PROGRAM TOTALS|Writer::ApplyTurns\(|Dispatcher::Loop\(\) \[|DBImpl::Write\(|Store::GetJobs\(.*\[" |
    cut -c1-150
  callgrind_annotate --inclusive=no "$out" 2>/dev/null |
    sed -n '/file:function/,$p' | sed -n 3,22p | cut -c1-150
} || true
