// InFlightCalls: counts asynchronous RPCs between their start and their
// reply callback, keeps the first error, and lets the issuing thread wait
// for every reply. For the open-loop load of `latency` and `ping`, where
// replies arrive on gRPC's callback threads.
//
// Thread-safe.
#ifndef FAIRQ_CLIENT_BENCH_IN_FLIGHT_CALLS_H_
#define FAIRQ_CLIENT_BENCH_IN_FLIGHT_CALLS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>

#include "base/status.h"

namespace fairq::bench {

class InFlightCalls {
 public:
  // `rpc` names the call in errors ("Enqueue").
  explicit InFlightCalls(std::string rpc) : rpc_(std::move(rpc)) {}

  void Started() {
    std::lock_guard<std::mutex> lock(mu_);
    ++in_flight_;
  }
  // `error` is OK unless the call failed in a way that should fail the run.
  void Finished(const Status& error) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error.ok() && first_error_.ok()) first_error_ = error;
    --in_flight_;
    replied_.notify_all();
  }
  // Waits until every call started has finished, at most `seconds`: each
  // call has its own deadline, so a longer wait means a lost callback.
  // Returns the first error.
  Status WaitForAll(double seconds) {
    auto give_up = std::chrono::steady_clock::now() +
                   std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::duration<double>(seconds));
    std::unique_lock<std::mutex> lock(mu_);
    if (!replied_.wait_until(lock, give_up,
                             [this] { return in_flight_ == 0; })) {
      return Unavailable(rpc_ + ": replies missing after their deadline");
    }
    return first_error_;
  }

 private:
  const std::string rpc_;
  std::mutex mu_;
  std::condition_variable replied_;
  uint64_t in_flight_ = 0;  // guarded by mu_
  Status first_error_;      // guarded by mu_
};

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_IN_FLIGHT_CALLS_H_
