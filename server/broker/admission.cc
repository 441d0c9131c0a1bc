#include "server/broker/admission.h"

#include <algorithm>
#include <cmath>

namespace fairq::server {
namespace {

// How soon to suggest a retry when the backlog, not the rate, is full: the
// queue drains at the workers' pace, which admission cannot know.
constexpr int64_t kBacklogRetryMs = 1000;
// The longest retry delay suggested: a day (a rate of 0.001 jobs/s, the
// least allowed, suggests at most 1,000 s).
constexpr double kMaxRetryAfterMs = 24.0 * 3600 * 1000;

}  // namespace

std::optional<Admission::Rejection> Admission::Admit(
    uint32_t tenant, const v1::Quotas& quotas, uint64_t tenant_queued,
    uint64_t total_queued, int64_t now_ms) {
  if (global_max_queued_ != 0 && total_queued >= global_max_queued_) {
    return Rejection{"max_queued_total", metrics::Rejection::kBrokerFull,
                     kBacklogRetryMs};
  }
  if (quotas.max_queued() != 0 && tenant_queued >= quotas.max_queued()) {
    return Rejection{"quotas.max_queued", metrics::Rejection::kTenantQueueFull,
                     kBacklogRetryMs};
  }
  double rate = quotas.enqueue_rate();
  if (rate <= 0) return std::nullopt;
  if (tenant >= buckets_.size()) buckets_.resize(tenant + 1);
  Bucket& bucket = buckets_[tenant];
  double burst = quotas.enqueue_burst() != 0
                     ? static_cast<double>(quotas.enqueue_burst())
                     : std::max(1.0, rate);
  if (!bucket.primed) {
    bucket = Bucket{burst, now_ms, true};
  }
  double elapsed_s = static_cast<double>(now_ms - bucket.refilled_ms) / 1000;
  bucket.tokens = std::min(burst, bucket.tokens + std::max(0.0, elapsed_s) * rate);
  bucket.refilled_ms = now_ms;
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1;
    return std::nullopt;
  }
  // Capped for a rate stored before config::kMinEnqueueRate bounded it: a
  // delay past int64 would be undefined.
  auto wait_ms = static_cast<int64_t>(
      std::min(std::ceil((1 - bucket.tokens) / rate * 1000), kMaxRetryAfterMs));
  return Rejection{"quotas.enqueue_rate", metrics::Rejection::kRateLimited,
                   std::max<int64_t>(1, wait_ms)};
}

}  // namespace fairq::server
