// Progress: a counter that threads add to and another thread waits on, with
// a deadline, until it reaches a target: how a scenario learns that every
// job it enqueued has been leased, without polling.
//
// Thread-safe.
#ifndef FAIRQ_CLIENT_BENCH_PROGRESS_H_
#define FAIRQ_CLIENT_BENCH_PROGRESS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace fairq::bench {

class Progress {
 public:
  void Add(uint64_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    count_ += n;
    changed_.notify_all();
  }

  uint64_t count() const {
    std::lock_guard<std::mutex> lock(mu_);
    return count_;
  }

  // Wakes every waiter for good: the run failed and nobody will count on.
  void Abort() {
    std::lock_guard<std::mutex> lock(mu_);
    aborted_ = true;
    changed_.notify_all();
  }

  // True once count() >= target; false if `deadline` or Abort() came first.
  bool WaitFor(uint64_t target,
               std::chrono::steady_clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait_until(lock, deadline,
                        [&] { return aborted_ || count_ >= target; });
    return !aborted_ && count_ >= target;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable changed_;
  uint64_t count_ = 0;    // guarded by mu_
  bool aborted_ = false;  // guarded by mu_
};

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_PROGRESS_H_
