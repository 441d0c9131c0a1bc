// Open-loop load on a fixed schedule: Pace holds a scenario's --rate and
// --duration; RunPaced runs the schedule they make. RunPaced calls
// issue(i) for i in [0, count) at start + i * interval. A call that falls
// behind its slot (the issuing thread was descheduled) is made at once; the
// schedule itself never drifts. Returns how many calls were late by more
// than 200 us. Runs on the calling thread.
#ifndef FAIRQ_CLIENT_BENCH_PACED_SCHEDULE_H_
#define FAIRQ_CLIENT_BENCH_PACED_SCHEDULE_H_

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

namespace fairq::bench {

// The --rate and --duration of an open-loop scenario, and the schedule
// they make.
struct Pace {
  double rate = 2000;   // calls per second
  double duration = 5;  // seconds

  // Adds both flags to `sub`; `what` names the calls in their help.
  void AddFlags(CLI::App* sub, const std::string& what) {
    sub->add_option("--rate", rate, what + " per second")
        ->capture_default_str()
        ->check(CLI::Range(1.0, 1'000'000.0));
    sub->add_option("--duration", duration, "seconds of " + what)
        ->capture_default_str()
        ->check(CLI::Range(0.01, 3600.0));
  }
  uint64_t count() const {
    return std::max<uint64_t>(1, static_cast<uint64_t>(rate * duration));
  }
  std::chrono::nanoseconds interval() const {
    return std::chrono::nanoseconds(static_cast<int64_t>(1e9 / rate));
  }
};

// When call `i` of the schedule that starts at `start` is due.
inline std::chrono::steady_clock::time_point SlotOf(
    std::chrono::steady_clock::time_point start,
    std::chrono::nanoseconds interval, uint64_t i) {
  return start + interval * i;
}

template <typename Issue>
uint64_t RunPaced(std::chrono::steady_clock::time_point start, uint64_t count,
                  std::chrono::nanoseconds interval, Issue&& issue) {
  constexpr std::chrono::microseconds kLate{200};
  uint64_t late = 0;
  for (uint64_t i = 0; i < count; ++i) {
    auto slot = SlotOf(start, interval, i);
    std::this_thread::sleep_until(slot);
    if (std::chrono::steady_clock::now() - slot > kLate) ++late;
    issue(i);
  }
  return late;
}

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_PACED_SCHEDULE_H_
