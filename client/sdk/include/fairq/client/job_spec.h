// JobSpec: what a producer submits, as a plain struct mirroring
// fairq.v1.JobSpec (proto/fairq/v1/fairq.proto documents every field's
// range; the broker validates them). RetryOptions: how the SDK itself
// retries a call that failed with UNAVAILABLE.
//
// Plain values; no synchronisation of their own.
#ifndef FAIRQ_CLIENT_JOB_SPEC_H_
#define FAIRQ_CLIENT_JOB_SPEC_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace fairq::client {

struct JobSpec {
  std::string tenant;  // required
  std::string pool;    // empty: "default"
  int32_t priority = 0;
  // Absent: the broker's learned estimate for the tenant and pool.
  std::optional<double> estimated_cost_seconds;
  std::string payload;  // opaque bytes
  // Reusing a key of the same tenant within the broker's idempotency window
  // returns the first job's id with duplicate = true. Set one when an enqueue
  // must not be doubled by the SDK's retries (see RetryOptions).
  std::string idempotency_key;
  uint32_t max_attempts = 0;  // 0: the tenant default
  // The broker's backoff between attempts of the job; absent: its default.
  std::optional<std::chrono::milliseconds> retry_initial_backoff;
  std::optional<std::chrono::milliseconds> retry_max_backoff;
  // Absent: the broker default (30 s).
  std::optional<std::chrono::milliseconds> lease_duration;
  // When the job may first run; at most one of the two. Absent: now.
  std::optional<std::chrono::milliseconds> delay;
  std::optional<std::chrono::system_clock::time_point> not_before;
  std::map<std::string, std::string> labels;
};

// Calls failing with UNAVAILABLE (broker down, restarting, store failed)
// are tried again after min(max_backoff, initial_backoff * 2^(n-1)), each
// delay scaled by a random factor in [1 - jitter, 1 + jitter].
//
// UNAVAILABLE from the broker means nothing was written; but a connection
// that breaks after the request was sent gives UNAVAILABLE too, when the job
// may exist. Jobs with an idempotency key are never doubled by a retry.
struct RetryOptions {
  int max_attempts = 5;  // including the first; 1 turns retries off
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{5000};
  double jitter = 0.2;  // 0..1
};

}  // namespace fairq::client

#endif  // FAIRQ_CLIENT_JOB_SPEC_H_
