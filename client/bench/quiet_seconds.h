// Which stretches of a run the hypervisor left alone, from readings of the
// machine's CPU times (host_cpu.h), so that a scenario can keep the samples
// taken while it took (almost) nothing and set them beside the rest
// (docs/benchmarks.md, twenty-fourth round).
//
//  - CpuReadings: readings in time order and what they say; a value, not
//    thread-safe.
//  - QuietSeconds: takes a reading once a second on a thread of its own,
//    from construction until Stop(); readings() is for after Stop().
#ifndef FAIRQ_CLIENT_BENCH_QUIET_SECONDS_H_
#define FAIRQ_CLIENT_BENCH_QUIET_SECONDS_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "bench/host_cpu.h"

namespace fairq::bench {

class CpuReadings {
 public:
  using Clock = std::chrono::steady_clock;

  // REQUIRES: `at` is not before the last reading's time.
  void Add(Clock::time_point at, std::optional<CpuTimes> times);

  // True if [from, to] lies between two readings and every stretch between
  // readings from the one at or before `from` to the one at or after `to`
  // was quiet (QuietBetween); false where a reading is missing.
  bool Quiet(Clock::time_point from, Clock::time_point to) const;
  // Stretches between readings, and those of them that were quiet.
  size_t stretches() const;
  size_t quiet_stretches() const;

 private:
  bool QuietStretch(size_t i) const;  // between readings i and i + 1

  std::vector<std::pair<Clock::time_point, std::optional<CpuTimes>>> readings_;
};

class QuietSeconds {
 public:
  QuietSeconds();  // takes the first reading and starts the thread
  ~QuietSeconds();
  QuietSeconds(const QuietSeconds&) = delete;
  QuietSeconds& operator=(const QuietSeconds&) = delete;

  // Takes the last reading and ends the thread.
  void Stop();
  const CpuReadings& readings() const { return readings_; }

 private:
  void Loop();
  void Read();

  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  CpuReadings readings_;
  std::thread thread_;
};

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_QUIET_SECONDS_H_
