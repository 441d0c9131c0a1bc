// Admission: per-tenant quotas checked at enqueue (maximum queued jobs, and
// an enqueue rate with a burst, as a token bucket) plus a global maximum.
// Turns a burst into back-pressure with a retry hint instead of a hidden
// queue.
//
// Not thread-safe; owned by the Broker on the dispatcher thread.
#ifndef FAIRQ_SERVER_BROKER_ADMISSION_H_
#define FAIRQ_SERVER_BROKER_ADMISSION_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "fairq/v1/fairq.pb.h"
#include "metrics/metrics.h"

namespace fairq::server {

class Admission {
 public:
  struct Rejection {
    // The setting that refused: "max_queued_total" (the broker's),
    // "quotas.max_queued" or "quotas.enqueue_rate" (the tenant's).
    const char* reason;
    metrics::Rejection kind;  // the same, for fairq_admission_rejections_total
    int64_t retry_after_ms;
  };

  explicit Admission(uint64_t global_max_queued)
      : global_max_queued_(global_max_queued) {}

  // Takes one job's admission for `tenant`, whose queued count (READY and
  // SCHEDULED) is `tenant_queued`; `total_queued` is everyone's.
  std::optional<Rejection> Admit(uint32_t tenant, const v1::Quotas& quotas,
                                 uint64_t tenant_queued,
                                 uint64_t total_queued, int64_t now_ms);

 private:
  struct Bucket {
    double tokens = 0;
    int64_t refilled_ms = 0;
    bool primed = false;
  };

  const uint64_t global_max_queued_;
  std::vector<Bucket> buckets_;  // by tenant
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_ADMISSION_H_
