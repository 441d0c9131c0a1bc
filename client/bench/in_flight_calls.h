// InFlightCalls: counts asynchronous RPCs between their start and their
// reply callback, keeps the reply times of those that succeeded and the
// first error, and lets the issuing thread wait for every reply. For the
// open-loop load of `latency` and `ping`, where replies arrive on gRPC's
// callback threads.
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
#include <vector>

#include "base/status.h"
#include "bench/stats.h"

namespace fairq::bench {

class InFlightCalls {
 public:
  // `rpc` names the call in errors ("Enqueue").
  explicit InFlightCalls(std::string rpc) : rpc_(std::move(rpc)) {}

  void Started() {
    std::lock_guard<std::mutex> lock(mu_);
    ++in_flight_;
  }
  // A call that succeeded, its reply `ms` after it was issued.
  void Replied(double ms) {
    std::lock_guard<std::mutex> lock(mu_);
    reply_ms_.push_back(ms);
    EndCall();
  }
  // A call the server refused (the broker's back-pressure): only counted.
  void Refused() {
    std::lock_guard<std::mutex> lock(mu_);
    ++refused_;
    EndCall();
  }
  // A call that failed; the first `error` fails the run.
  void Failed(const Status& error) {
    std::lock_guard<std::mutex> lock(mu_);
    if (first_error_.ok()) first_error_ = error;
    EndCall();
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
  // Issue to reply of the calls that succeeded, in milliseconds.
  Summary reply_ms() const {
    std::lock_guard<std::mutex> lock(mu_);
    return Summarize(reply_ms_);
  }
  uint64_t replied() const {
    std::lock_guard<std::mutex> lock(mu_);
    return reply_ms_.size();
  }
  uint64_t refused() const {
    std::lock_guard<std::mutex> lock(mu_);
    return refused_;
  }

 private:
  void EndCall() {  // REQUIRES: mu_ held
    --in_flight_;
    replied_.notify_all();
  }

  const std::string rpc_;
  mutable std::mutex mu_;
  std::condition_variable replied_;
  uint64_t in_flight_ = 0;        // guarded by mu_
  uint64_t refused_ = 0;          // guarded by mu_
  std::vector<double> reply_ms_;  // guarded by mu_
  Status first_error_;            // guarded by mu_
};

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_IN_FLIGHT_CALLS_H_
