#include "bench/work_sleep.h"

#include <algorithm>
#include <thread>

namespace fairq::bench {

namespace {
// A new sample moves the estimate by 1/16 of its difference: steady within
// a few jobs, and one descheduled wake-up moves it by little.
constexpr int64_t kSmoothing = 16;
}  // namespace

WorkSleep::Clock::time_point WorkSleep::Until(Clock::time_point start) {
  Clock::time_point wake = WakeTime(start);
  std::this_thread::sleep_until(wake);
  Clock::time_point woke = Clock::now();
  if (correct_) {
    Learn(std::chrono::duration_cast<std::chrono::nanoseconds>(woke - wake));
  }
  return woke;
}

void WorkSleep::Learn(std::chrono::nanoseconds late) {
  int64_t lead = lead_ns_.load(std::memory_order_relaxed);
  lead += (late.count() - lead) / kSmoothing;
  // Never more than half the work early: a stalled machine must not turn
  // the work into nothing.
  int64_t most =
      std::chrono::duration_cast<std::chrono::nanoseconds>(work_).count() / 2;
  lead_ns_.store(std::clamp<int64_t>(lead, 0, most), std::memory_order_relaxed);
}

}  // namespace fairq::bench
