// CpuReadings: readings of the machine's CPU times (host_cpu.h) in time
// order, and which stretches between them the hypervisor left alone, so
// that a scenario can keep the samples taken then and set them beside the
// rest (docs/benchmarks.md, twenty-fourth round). A stretch is quiet if it
// lasted at least kMinQuietStretch and under kQuietStealPct of its CPU
// time was stolen: on this 2-vCPU machine's 100 ticks a second per CPU, a
// second without a stolen tick. A shorter stretch has too few ticks to
// tell.
//
// A value; not thread-safe.
#ifndef FAIRQ_CLIENT_BENCH_CPU_READINGS_H_
#define FAIRQ_CLIENT_BENCH_CPU_READINGS_H_

#include <chrono>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "bench/host_cpu.h"

namespace fairq::bench {

class CpuReadings {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kMinQuietStretch{900};

  // REQUIRES: `at` is not before the last reading's time.
  void Add(Clock::time_point at, std::optional<CpuTimes> times);

  // True if [from, to] lies between two readings and every stretch between
  // readings from the one at or before `from` to the one at or after `to`
  // was quiet; false where a reading is missing.
  bool Quiet(Clock::time_point from, Clock::time_point to) const;
  // Stretches between readings, and those of them that were quiet.
  size_t stretches() const;
  size_t quiet_stretches() const;

 private:
  bool QuietStretch(size_t i) const;  // between readings i and i + 1

  std::vector<std::pair<Clock::time_point, std::optional<CpuTimes>>> readings_;
};

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_CPU_READINGS_H_
