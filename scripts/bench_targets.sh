#!/usr/bin/env bash
# Runs every issue-4 target scenario of fairq-bench against a fresh fairqd
# (own data directory, loopback port) per scenario and round, then prints
# each target with the range of the rounds' figures next to it. One command
# to re-measure the targets on another machine (docs/benchmarks.md).
#   scripts/bench_targets.sh [ROUNDS] [FAIRQD] [CONFIG]
# Defaults: 2 rounds, build/server/fairqd, config/fairqd.yaml. About 3 min a
# round on the 2-core box, most of it filling 2M jobs twice. Raw JSON lines
# go to $FAIRQ_TARGETS_LOG (default: a temporary file, named at the end).
# Needs python3 for the summary.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-2}
fairqd=${2:-$root/build/server/fairqd}
cfg=${3:-$root/config/fairqd.yaml}
bench=${FAIRQ_BENCH:-$root/build/client/bench/fairq-bench}
log=${FAIRQ_TARGETS_LOG:-$(mktemp -t fairq-targets.XXXXXX)}
command -v python3 >/dev/null || { echo "bench_targets: needs python3" >&2; exit 2; }
: >"$log"

dir="" pid="" port=""
stop_daemon() {
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" || true
  fi
  pid=""
}
cleanup() {
  stop_daemon
  if [ -n "$dir" ]; then rm -rf "$dir"; fi
  dir=""
}
trap cleanup EXIT

# Starts fairqd on $dir/data (kept across a restart), in the background.
launch_daemon() {
  : >"$dir/out"
  "$fairqd" --config "$cfg" --data-dir "$dir/data" --listen "127.0.0.1:$port" \
    --metrics-listen "" >"$dir/out" 2>>"$dir/log" &
  pid=$!
}

# launch_daemon, then waits until it listens.
start_daemon() {
  launch_daemon
  for _ in $(seq 1 600); do
    grep -q "listening on port" "$dir/out" && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "bench_targets: fairqd did not start; its log: $dir/log" >&2
  exit 1
}

fresh_daemon() {
  cleanup
  dir=$(mktemp -d)
  port=$((20000 + RANDOM % 20000))
  start_daemon
}

# One scenario on a fresh daemon; its JSON line goes to the log, tagged.
run() {
  local tag=$1
  shift
  fresh_daemon
  echo "$tag $("$bench" "$@" --server "127.0.0.1:$port" --json | tail -1)" >>"$log"
  stop_daemon
}

vm_rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status"; }

# Fill 2M, the RSS 15 s later (steady), restart, time from the restart to
# the full count (polled while fairqd restores) and the RSS then.
recovery() {
  fresh_daemon
  "$bench" recovery fill --jobs 2000000 --server "127.0.0.1:$port" --json >/dev/null
  sleep 15
  echo "rss_after_fill {\"rss_kib\": $(vm_rss_kib)}" >>"$log"
  stop_daemon
  launch_daemon
  echo "restart $("$bench" recovery wait --jobs 2000000 --pid "$pid" \
    --server "127.0.0.1:$port" --json | tail -1)" >>"$log"
  stop_daemon
}

for r in $(seq 1 "$rounds"); do
  echo "round $r of $rounds" >&2
  run enqueue enqueue --batches 100 --producers 1,4,16
  run cycle cycle
  run latency latency
  run ping ping
  run flood flood --prefetch 8
  run backlog backlog
  recovery
done

python3 - "$log" <<'EOF'
import json, sys

runs = {}
for line in open(sys.argv[1]):
    tag, js = line.split(" ", 1)
    runs.setdefault(tag, []).append(json.loads(js))

def rows(tag): return [d["rows"] for d in runs.get(tag, [])]
def span(values, fmt):
    if not values: return "-"
    lo, hi = min(values), max(values)
    return fmt % lo if lo == hi else (fmt % lo) + " - " + (fmt % hi)

enqueue = [max(x["jobs_per_s"] for x in r) for r in rows("enqueue")]
cycle = [x["jobs_per_s"] for r in rows("cycle") for x in r if x.get("phase") == "drain"]
lat50 = [r[0]["lease_ms_p50"] for r in rows("latency")]
lat99 = [r[0]["lease_ms_p99"] for r in rows("latency")]
ping99 = [r[0]["rtt_ms_p99"] for r in rows("ping") if "rtt_ms_p99" in r[0]]
flood = [{x["tenant"]: x for x in r} for r in rows("flood")]
bc99 = [max(f["B"]["wait_ms_p99"], f["C"]["wait_ms_p99"]) for f in flood]
a_fin = [f["A"]["finish_s"] for f in flood]
work = [f["A"]["work_ms_mean"] for f in flood]
ratio = [r[-1]["cycles_per_s"] / r[0]["cycles_per_s"] for r in rows("backlog")]
restart = [r[0]["seconds"] for r in rows("restart")]
rss = [d["rss_kib"] / 1000 * 1.024 for d in runs.get("rss_after_fill", [])]
rss += [r[0]["rss_mib"] * 1.048576 for r in rows("restart")]

table = [
    ("enqueue, batch 100 (best of 1/4/16 producers)", ">= 120,000 jobs/s", span(enqueue, "%.0f"), all(v >= 120000 for v in enqueue)),
    ("full cycle", ">= 75,000 jobs/s", span(cycle, "%.0f"), all(v >= 75000 for v in cycle)),
    ("enqueue to lease at 2,000/s, p50", "<= 0.5 ms", span(lat50, "%.2f ms"), all(v <= 0.5 for v in lat50)),
    ("enqueue to lease at 2,000/s, p99", "<= 1 ms", span(lat99, "%.2f ms") + " (ping p99 " + span(ping99, "%.2f ms") + ")", all(v <= 1 for v in lat99)),
    ("flood: B and C wait p99", "<= 30 ms", span(bc99, "%.1f ms"), all(v <= 30 for v in bc99)),
    ("flood: A finishes", "<= 3.4 s", span(a_fin, "%.3f s") + " (sleep " + span(work, "%.2f ms") + ")", all(v <= 3.4 for v in a_fin)),
    ("backlog: 2M rate / 1k rate", ">= 0.90", span(ratio, "%.2f"), all(v >= 0.9 for v in ratio)),
    ("restart with 2M queued", "<= 10 s", span(restart, "%.2f s"), all(v <= 10 for v in restart)),
    ("RSS with 2M queued (steady after fill; after restart)", "<= 300 MB", span(rss, "%.0f MB"), all(v <= 300 for v in rss)),
]
print("%-55s %-20s %-45s %s" % ("target", "goal", "measured (range over rounds)", "met in every round"))
for name, goal, got, met in table:
    print("%-55s %-20s %-45s %s" % (name, goal, got, "yes" if met else "no"))
EOF
echo "raw JSON lines: $log"
