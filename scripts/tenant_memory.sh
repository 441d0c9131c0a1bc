#!/usr/bin/env bash
# What many tenants and pools cost a fresh fairqd (docs/benchmarks.md,
# thirteenth round): makes POOLS pools (one `fairqctl enqueue --pool pN`
# each), then TENANTS tenants with one job each in a pool of their own
# (`fairq-bench cycle --tenants TENANTS`), and prints fairqd's VmRSS after
# each step and the time of three `fairqctl stats --json` calls.
#   scripts/tenant_memory.sh [TENANTS] [POOLS] [FAIRQD] [CONFIG]
# Defaults: 20000 tenants, 100 pools, build/server/fairqd,
# config/fairqd.yaml. Traffic goes to 127.0.0.1 only.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tenants=${1:-20000}
pools=${2:-100}
fairqd=${3:-$root/build/server/fairqd}
cfg=${4:-$root/config/fairqd.yaml}
ctl=$root/build/client/fairqctl
bench=$root/build/client/bench/fairq-bench
fail() {
  echo "tenant_memory: $*" >&2
  exit 1
}
[[ $tenants =~ ^[1-9][0-9]*$ ]] || fail "TENANTS must be a positive number, not '$tenants'"
[[ $pools =~ ^[0-9]+$ ]] || fail "POOLS must be a number, not '$pools'"
for binary in "$fairqd" "$ctl" "$bench"; do
  [ -x "$binary" ] || fail "no $binary (build it first)"
done

# shellcheck source=scripts/fairqd_daemon.sh
source "$root/scripts/fairqd_daemon.sh"
trap cleanup EXIT
rss() { awk '/^VmRSS/ {print $2 " kB"}' "/proc/$pid/status"; }

fresh_daemon
echo "fresh: $(rss)"
for i in $(seq 1 "$pools"); do
  "$ctl" enqueue --server "127.0.0.1:$port" --tenant seed --pool "p$i" >/dev/null
done
echo "after $pools pools: $(rss)"
timeout 600 "$bench" cycle --server "127.0.0.1:$port" --jobs "$tenants" \
  --tenants "$tenants" --keep >/dev/null
echo "after $tenants tenants: $(rss)"
for _ in 1 2 3; do
  start=$(date +%s%N)
  "$ctl" stats --server "127.0.0.1:$port" --json >/dev/null
  echo "fairqctl stats: $((($(date +%s%N) - start) / 1000000)) ms"
done
