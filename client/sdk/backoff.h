// Backoff and CallWithRetry: how the SDK repeats a call that failed with
// UNAVAILABLE, or RESOURCE_EXHAUSTED where asked (see RetryOptions in
// fairq/client/job_spec.h).
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

// Which failures CallWithRetry repeats. A producer's RESOURCE_EXHAUSTED is
// an admission quota, its caller's to handle, and its DEADLINE_EXCEEDED may
// have enqueued the job. A worker's reports have no caller to hand either
// to: for them RESOURCE_EXHAUSTED means the broker's command queue was full
// for a moment, and a report repeated after it landed is harmless (the
// Reporter reads the broker's answer to the repeat).
enum class RetryOn { kUnavailable, kReport };

// Runs `attempt` until it returns a failure that `retry_on` does not name,
// or options.max_attempts attempts were made; the last status is returned.
// The delay before the next attempt is the backoff's, or the failure's
// retry_after if that is longer.
Status CallWithRetry(const RetryOptions& options,
                     const std::function<Status()>& attempt,
                     const RetryWait& wait,
                     RetryOn retry_on = RetryOn::kUnavailable);

}  // namespace fairq::client::internal

#endif  // FAIRQ_CLIENT_SDK_BACKOFF_H_
