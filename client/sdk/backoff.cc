#include "client/sdk/backoff.h"

#include <algorithm>
#include <cmath>

#include "client/sdk/duration_limit.h"

namespace fairq::client::internal {

Status ValidateRetry(const RetryOptions& retry, const std::string& prefix) {
  auto invalid = [&](const std::string& field, const std::string& rule) {
    return Status(Code::kInvalidArgument, prefix + field + ": " + rule);
  };
  if (retry.max_attempts < 1) return invalid("max_attempts", "must be >= 1");
  if (!WithinADay(retry.initial_backoff)) {
    return invalid("initial_backoff", "must be between 0 and 24 h");
  }
  if (retry.max_backoff < retry.initial_backoff) {
    return invalid("max_backoff", "must be >= initial_backoff");
  }
  if (!WithinADay(retry.max_backoff)) {
    return invalid("max_backoff", "must be at most 24 h");
  }
  if (!(retry.jitter >= 0 && retry.jitter <= 1)) {
    return invalid("jitter", "must be between 0 and 1");
  }
  return Status();
}

Backoff::Backoff(const RetryOptions& options)
    : options_(options), random_(std::random_device{}()) {}

std::chrono::milliseconds Backoff::Next() {
  // Doubling in floating point cannot overflow; the cap applies before the
  // jitter so that callers in step do not stay in step at the cap.
  double base = static_cast<double>(options_.initial_backoff.count()) *
                std::pow(2.0, std::min(failures_, 62));
  base = std::min(base, static_cast<double>(options_.max_backoff.count()));
  ++failures_;
  std::uniform_real_distribution<double> factor(1 - options_.jitter,
                                                1 + options_.jitter);
  return std::chrono::milliseconds(
      static_cast<int64_t>(std::llround(base * factor(random_))));
}

namespace {

bool Retryable(Code code, RetryOn retry_on) {
  return code == Code::kUnavailable ||
         (retry_on == RetryOn::kReport && (code == Code::kResourceExhausted ||
                                           code == Code::kDeadlineExceeded));
}

}  // namespace

Status CallWithRetry(const RetryOptions& options,
                     const std::function<Status()>& attempt,
                     const RetryWait& wait, RetryOn retry_on) {
  Backoff backoff(options);
  for (int n = 1;; ++n) {
    Status status = attempt();
    if (!Retryable(status.code(), retry_on) || n >= options.max_attempts) {
      return status;
    }
    std::chrono::milliseconds delay =
        std::max(backoff.Next(),
                 status.retry_after().value_or(std::chrono::milliseconds(0)));
    if (!wait(status, n, delay)) return status;
  }
}

}  // namespace fairq::client::internal
