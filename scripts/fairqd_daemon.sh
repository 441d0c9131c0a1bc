# shellcheck shell=bash
# A throwaway fairqd for the benchmark scripts (bench_ab.sh,
# bench_targets.sh, peer_latency.sh, profile.sh); source it. The caller sets
# `fairqd` and `cfg`, and may set `metrics` (a --metrics-listen address; off
# by default), the array `daemon_wrapper` (a command fairqd runs under, e.g.
# valgrind), and `daemon_wait_tries` (tenths of a second to wait for the
# daemon to listen, and to exit; default 600). `daemon_failed MESSAGE`
# prints the daemon's last log lines and exits; a caller may redefine it,
# and it must still exit. Sets `dir` (the daemon's temporary directory,
# data in $dir/data), `pid` and `port`.
# shellcheck disable=SC2154  # fairqd and cfg are the caller's
dir="" pid="" port=""

daemon_failed() {
  echo "$(basename "$0" .sh): $*; fairqd's last log lines:" >&2
  tail -n 20 "$dir/log" >&2 || true
  exit 1
}

# SIGTERM drains; a daemon that has not exited in time is killed.
stop_daemon() {
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 "${daemon_wait_tries:-600}"); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" || true
  fi
  pid=""
}

cleanup() {
  stop_daemon
  if [ -n "$dir" ]; then rm -rf "$dir"; fi
  dir=""
}

# Starts fairqd on $dir/data (kept across a restart) and $port (0: any free
# port), in the background. $dir/out is emptied first, here, so that a
# restart is not taken for started by the last run's "listening" line.
launch_daemon() {
  : >"$dir/out"
  "${daemon_wrapper[@]}" "$fairqd" --config "$cfg" --data-dir "$dir/data" \
    --listen "127.0.0.1:$port" --metrics-listen "${metrics:-}" \
    >>"$dir/out" 2>>"$dir/log" &
  pid=$!
}

# launch_daemon, then waits until it listens and reads the port it bound.
start_daemon() {
  launch_daemon
  for _ in $(seq 1 "${daemon_wait_tries:-600}"); do
    if grep -q "listening on port" "$dir/out"; then
      port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$dir/out")
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  daemon_failed "fairqd did not start"
}

# A new daemon with its own empty directory, on any free port.
fresh_daemon() {
  cleanup
  dir=$(mktemp -d)
  port=0
  start_daemon
}
