#!/usr/bin/env bash
# Counts fairqd's instructions with valgrind's callgrind: the same count for
# the same binary and workload whatever else the machine does, so it shows
# changes to the hot path that wall-clock runs on a shared 2-core box cannot
# (docs/benchmarks.md, eighth round).
#   scripts/profile.sh cycle [JOBS]   one `fairq-bench cycle` (default 20,000
#                                     jobs, fill and drain), startup included
#   scripts/profile.sh backlog LEVEL  10 s of `backlog` cycles held at LEVEL
#                                     jobs; the backlog is filled and fairqd
#                                     restarted first, and counting covers
#                                     only the benchmark run that holds it
# FAIRQD (default build/server/fairqd), OUT (default
# ./callgrind.fairqd.out) and FAIRQ_BENCH override the binaries and the
# output. Prints the benchmark's JSON line, instructions per job or cycle,
# the main threads' shares and the costliest functions; open OUT with
# callgrind_annotate or kcachegrind for more.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=${1:-}
fairqd=${FAIRQD:-$root/build/server/fairqd}
cfg=$root/config/fairqd.yaml
out=${OUT:-$PWD/callgrind.fairqd.out}
bench=${FAIRQ_BENCH:-$root/build/client/bench/fairq-bench}
usage() {
  echo "usage: scripts/profile.sh cycle [JOBS] | backlog LEVEL" >&2
  exit 2
}
case $mode in
  cycle) count=${2:-20000} ;;
  backlog) count=${2:-} ;;
  *) usage ;;
esac
[[ $count =~ ^[1-9][0-9]*$ ]] || usage
command -v valgrind >/dev/null || { echo "profile: needs valgrind" >&2; exit 1; }
# shellcheck source=scripts/fairqd_daemon.sh
source "$root/scripts/fairqd_daemon.sh"
trap cleanup EXIT
# Under valgrind, restoring 2M jobs and the exit that writes OUT take long;
# a killed daemon would leave an earlier run's OUT behind.
daemon_wait_tries=3000
rm -f "$out"
run_bench() {
  "$bench" "$@" --server "127.0.0.1:$port" --rpc-timeout 120 --json | tail -n 1
}
callgrind=(valgrind --tool=callgrind --callgrind-out-file="$out")
if [ "$mode" = cycle ]; then
  daemon_wrapper=("${callgrind[@]}")
  fresh_daemon
  result=$(run_bench cycle --jobs "$count")
  unit=job
else
  fresh_daemon
  run_bench backlog --levels "$count" --duration 1 --warmup 0 --keep \
    --run-id profile >/dev/null
  stop_daemon
  daemon_wrapper=("${callgrind[@]}" --instr-atstart=no)
  start_daemon # same directory and port: the backlog is restored
  # callgrind_control exits 0 even when it reached no process.
  instrument() {
    local said
    said=$(callgrind_control -i "$1" "$pid" 2>&1 || true)
    grep -q "to pid $pid" <<<"$said" ||
      daemon_failed "callgrind_control could not switch counting $1: $said"
  }
  instrument on
  # Level 1: nothing more to fill; the held cycles run on the backlog above.
  result=$(run_bench backlog --levels 1 --duration 10 --warmup 0 --keep \
    --run-id profile)
  instrument off
  count=$(sed -n 's/.*"cycles":\([0-9]*\).*/\1/p' <<<"$result") unit=cycle
fi
stop_daemon # callgrind writes OUT as fairqd exits
echo "$result"
total=$(callgrind_annotate "$out" 2>/dev/null |
  sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
[[ $count =~ ^[1-9][0-9]*$ && $total =~ ^[0-9]+$ ]] ||
  { echo "profile: no count (total '$total', $unit count '$count')" >&2; exit 1; }
echo "instructions: $total in all, $((total / count)) per $unit"
{
  callgrind_annotate --inclusive=yes "$out" 2>/dev/null |
    grep -E "Writer::ApplyTurns\(|Dispatcher::Loop\(\) \[|DBImpl::Write\(|Store::GetJobs\(.*\[" |
    grep -v "=>" | cut -c1-150
  callgrind_annotate --inclusive=no "$out" 2>/dev/null |
    sed -n '/file:function/,$p' | sed -n 3,22p | cut -c1-150
} || true
