// WorkSleep: a handler's simulated work, a sleep that ends --work-ms after
// the job started, on average, rather than --work-ms plus the machine's
// wake-up latency. On the 2-core VM every sleep woke ~0.1 ms late even
// with 1 ns timer slack, so 10 ms jobs ran 10.10-10.14 ms; over the flood's
// ~290 jobs a slot that is ~30 ms of A's finish that neither the scenario's
// jobs nor fairqd account for. WorkSleep learns how late its own wake-ups
// are (a moving average) and asks to wake that much early; it never spins.
//
// Thread-safe: any number of handler threads may share one.
#ifndef FAIRQ_CLIENT_BENCH_WORK_SLEEP_H_
#define FAIRQ_CLIENT_BENCH_WORK_SLEEP_H_

#include <atomic>
#include <chrono>
#include <cstdint>

namespace fairq::bench {

class WorkSleep {
 public:
  using Clock = std::chrono::steady_clock;

  // `correct` false: sleep `work` plainly (for comparison runs).
  WorkSleep(Clock::duration work, bool correct)
      : work_(work), correct_(correct) {}

  // Sleeps until about start + work; returns when it woke.
  Clock::time_point Until(Clock::time_point start);

  // When Until(start) asks to wake: start + work, less lead() if correcting.
  Clock::time_point WakeTime(Clock::time_point start) const {
    return start + work_ - (correct_ ? lead() : std::chrono::nanoseconds(0));
  }

  // How early the sleeps now ask to wake.
  std::chrono::nanoseconds lead() const {
    return std::chrono::nanoseconds(lead_ns_.load(std::memory_order_relaxed));
  }

  // Moves lead() toward one sleep's lateness. Until calls it after each
  // sleep; tests call it to check the estimate without sleeping.
  void Learn(std::chrono::nanoseconds late);

 private:
  const Clock::duration work_;
  const bool correct_;
  // Shared by the handler threads; a lost update between two of them only
  // delays learning by one sample, so it is a plain load and store.
  std::atomic<int64_t> lead_ns_{0};
};

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_WORK_SLEEP_H_
