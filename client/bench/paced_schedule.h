// RunPaced: a fixed steady_clock schedule for open-loop load. Calls
// issue(i) for i in [0, count) at start + i * interval. A call that falls
// behind its slot (the issuing thread was descheduled) is made at once; the
// schedule itself never drifts. Returns how many calls were late by more
// than 200 us. Runs on the calling thread.
#ifndef FAIRQ_CLIENT_BENCH_PACED_SCHEDULE_H_
#define FAIRQ_CLIENT_BENCH_PACED_SCHEDULE_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

namespace fairq::bench {

// The calls of a run at `rate` per second for `duration` seconds.
struct Pace {
  uint64_t count;
  std::chrono::nanoseconds interval;
};
inline Pace PaceFor(double rate, double duration) {
  return {std::max<uint64_t>(1, static_cast<uint64_t>(rate * duration)),
          std::chrono::nanoseconds(static_cast<int64_t>(1e9 / rate))};
}

template <typename Issue>
uint64_t RunPaced(std::chrono::steady_clock::time_point start, uint64_t count,
                  std::chrono::nanoseconds interval, Issue&& issue) {
  constexpr std::chrono::microseconds kLate{200};
  uint64_t late = 0;
  for (uint64_t i = 0; i < count; ++i) {
    auto slot = start + interval * i;
    std::this_thread::sleep_until(slot);
    if (std::chrono::steady_clock::now() - slot > kLate) ++late;
    issue(i);
  }
  return late;
}

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_PACED_SCHEDULE_H_
