// InFlightCalls: counts asynchronous RPCs between their start and their
// reply callback, keeps the reply times of those that succeeded and the
// first error, and lets the issuing thread wait for every reply. For
// PacedEnqueuer's open-loop load (`flood`), where replies arrive on gRPC's
// callback threads.
//
// Thread-safe.
#ifndef FAIRQ_CLIENT_BENCH_IN_FLIGHT_CALLS_H_
#define FAIRQ_CLIENT_BENCH_IN_FLIGHT_CALLS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "bench/bench_context.h"
#include "bench/stats.h"

namespace fairq::bench {

class InFlightCalls {
 public:
  // What a RESOURCE_EXHAUSTED reply is: the broker's back-pressure, only
  // counted (refused()), or a failure like any other.
  enum class Refusals { kCounted, kFail };

  // `rpc` names the call in errors ("Enqueue").
  explicit InFlightCalls(std::string rpc, Refusals refusals = Refusals::kFail)
      : rpc_(std::move(rpc)), refusals_(refusals) {}

  void Started() {
    std::lock_guard<std::mutex> lock(mu_);
    ++in_flight_;
  }
  // Ends a call from its reply callback: keeps its reply time if it
  // succeeded, counts a refusal, or keeps the first error, which fails the
  // run. `call` (with `issued` and its ClientContext) is freed before it is
  // counted: once every call is counted the run may end, and a ClientContext
  // freed while gRPC was being torn down crashed inside it (main.cc).
  template <class Call>
  void Finish(std::unique_ptr<Call> call, const grpc::Status& status) {
    const double ms = MillisSince(call->issued);
    call.reset();
    std::lock_guard<std::mutex> lock(mu_);
    if (status.ok()) {
      reply_ms_.push_back(ms);
    } else if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
               refusals_ == Refusals::kCounted) {
      ++refused_;
    } else if (first_error_.ok()) {
      first_error_ = FromGrpc(status, rpc_);
    }
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
  const Refusals refusals_;
  mutable std::mutex mu_;
  std::condition_variable replied_;
  uint64_t in_flight_ = 0;        // guarded by mu_
  uint64_t refused_ = 0;          // guarded by mu_
  std::vector<double> reply_ms_;  // guarded by mu_
  Status first_error_;            // guarded by mu_
};

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_IN_FLIGHT_CALLS_H_
