// Backoff and CallWithRetry: how the SDK repeats a call that failed with
// UNAVAILABLE (see RetryOptions in fairq/client/job_spec.h).
//
// A Backoff belongs to one caller at a time; CallWithRetry is reentrant.
#ifndef FAIRQ_CLIENT_SDK_BACKOFF_H_
#define FAIRQ_CLIENT_SDK_BACKOFF_H_

#include <chrono>
#include <functional>
#include <random>

#include "fairq/client/job_spec.h"
#include "fairq/client/status.h"

namespace fairq::client::internal {

// INVALID_ARGUMENT naming the field under `prefix` when out of range.
Status ValidateRetry(const RetryOptions& retry, const std::string& prefix);

// The delays between attempts: min(max, initial * 2^(n-1)) with jitter.
class Backoff {
 public:
  explicit Backoff(const RetryOptions& options);

  std::chrono::milliseconds Next();
  void Reset() { failures_ = 0; }

 private:
  const RetryOptions options_;
  int failures_ = 0;
  std::mt19937_64 random_;
};

// Given the failure, the attempt that failed (1-based) and the delay before
// the next one: waits, and returns false to give up instead.
using RetryWait = std::function<bool(const Status& failure, int attempt,
                                     std::chrono::milliseconds delay)>;

// Runs `attempt` until it returns anything but UNAVAILABLE, or
// options.max_attempts attempts were made; the last status is returned.
Status CallWithRetry(const RetryOptions& options,
                     const std::function<Status()>& attempt,
                     const RetryWait& wait);

}  // namespace fairq::client::internal

#endif  // FAIRQ_CLIENT_SDK_BACKOFF_H_
