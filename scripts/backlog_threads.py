#!/usr/bin/env python3
"""CPU per thread in the two measured windows of one `fairq-bench backlog`.

Starts a fresh fairqd on a loopback port and a temporary data directory,
runs `fairq-bench backlog` against it (default levels 1k and 2M), samples
every thread's CPU time of both processes from /proc every 0.2 s, and prints
each thread's ticks a second and microseconds a cycle in the 1k and the 2M
windows (taken from the run's JSON: warm-up, fill and measured seconds).
Where the deep level's extra time goes (docs/benchmarks.md, eighteenth
round).

  scripts/backlog_threads.py [BACKLOG FLAGS...]   e.g. --workers 16 --slots 1600

FAIRQD and FAIRQ_BENCH override the binaries.
"""
import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAIRQD = os.environ.get("FAIRQD", os.path.join(ROOT, "build/server/fairqd"))
BENCH = os.environ.get("FAIRQ_BENCH",
                       os.path.join(ROOT, "build/client/bench/fairq-bench"))
TICK = os.sysconf("SC_CLK_TCK")
WARMUP_S = 1.0  # fairq-bench backlog's default --warmup


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, proc, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit("backlog_threads: fairqd exited at start")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit("backlog_threads: fairqd did not listen within %d s" % seconds)


def cpu_by_thread(pid, tag):
    """CPU ticks by thread name (trailing numbers dropped), from /proc."""
    ticks = {}
    for task in glob.glob("/proc/%d/task/*" % pid):
        try:
            with open(task + "/comm") as f:
                name = re.sub(r"[:\-]?\d+$", "", f.read().strip())
            with open(task + "/stat") as f:
                stat = f.read()
        except OSError:
            continue  # the thread ended meanwhile
        fields = stat[stat.rfind(")") + 2:].split()
        key = tag + name
        ticks[key] = ticks.get(key, 0) + int(fields[11]) + int(fields[12])
    return ticks


def per_second(samples, begin, end):
    first = min(samples, key=lambda s: abs(s[0] - begin))
    last = min(samples, key=lambda s: abs(s[0] - end))
    span = last[0] - first[0]
    return {k: (last[1].get(k, 0) - first[1].get(k, 0)) / span
            for k in last[1]}


def main():
    data = tempfile.mkdtemp(prefix="fairq-threads.")
    port = free_port()
    daemon = subprocess.Popen(
        [FAIRQD, "--config", os.path.join(ROOT, "config/fairqd.yaml"),
         "--data-dir", os.path.join(data, "data"),
         "--listen", "127.0.0.1:%d" % port, "--metrics-listen", ""],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, daemon)
        bench = subprocess.Popen(
            [BENCH, "backlog"] + sys.argv[1:] +
            ["--server", "127.0.0.1:%d" % port, "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        start = time.monotonic()
        samples = []
        while bench.poll() is None:
            ticks = cpu_by_thread(daemon.pid, "fairqd ")
            ticks.update(cpu_by_thread(bench.pid, "bench  "))
            samples.append((time.monotonic() - start, ticks))
            time.sleep(0.2)
        out = bench.stdout.read().strip().splitlines()
        if bench.returncode != 0 or not out:
            sys.exit("backlog_threads: fairq-bench failed")
    finally:
        daemon.kill()
        daemon.wait()
        shutil.rmtree(data, ignore_errors=True)
    rows = json.loads(out[-1])["rows"]
    if len(rows) != 2:
        sys.exit("backlog_threads: expects two levels")
    # Windows trimmed by 0.2 s at each end, so that samples fall inside.
    first = WARMUP_S + rows[0]["fill_s"]
    second = first + rows[0]["seconds"] + rows[1]["fill_s"] + WARMUP_S
    low = per_second(samples, first + 0.2, first + rows[0]["seconds"] - 0.2)
    high = per_second(samples, second + 0.2, second + rows[1]["seconds"] - 0.2)
    rates = [rows[0]["cycles_per_s"], rows[1]["cycles_per_s"]]
    print("level %d: %.1fk cycles/s, level %d: %.1fk cycles/s, ratio %.3f" %
          (rows[0]["level"], rates[0] / 1e3, rows[1]["level"], rates[1] / 1e3,
           rates[1] / rates[0]))
    print("%-24s %9s %9s %9s %9s" %
          ("thread", "ticks/s", "ticks/s", "us/cycle", "us/cycle"))
    us = 1e6 / TICK
    for key in sorted(set(low) | set(high)):
        a, b = low.get(key, 0), high.get(key, 0)
        if a >= 0.5 or b >= 0.5:
            print("%-24s %9.1f %9.1f %9.2f %9.2f" %
                  (key, a, b, a * us / rates[0], b * us / rates[1]))
    for tag in ("fairqd ", "bench  "):
        a = sum(v for k, v in low.items() if k.startswith(tag))
        b = sum(v for k, v in high.items() if k.startswith(tag))
        print("%-24s %9.1f %9.1f %9.2f %9.2f" %
              (tag + "in all", a, b, a * us / rates[0], b * us / rates[1]))


if __name__ == "__main__":
    main()
