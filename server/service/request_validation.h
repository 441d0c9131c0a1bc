// Field-by-field checks of incoming requests, done by the handlers before
// anything reaches the broker. Each error is INVALID_ARGUMENT naming the
// field, e.g. "jobs[3].priority: must be between -1000 and 1000, got 5000".
//
// Pure functions; safe from any thread.
#ifndef FAIRQ_SERVER_SERVICE_REQUEST_VALIDATION_H_
#define FAIRQ_SERVER_SERVICE_REQUEST_VALIDATION_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fairq/v1/fairq.pb.h"

namespace fairq::server {

struct RequestLimits {
  uint32_t max_payload_bytes = 1u << 20;
  uint32_t max_batch = 1000;
  // A whole spec, unknown fields included (DaemonConfig::max_spec_bytes).
  uint64_t max_spec_bytes = (1u << 20) + (80 << 10);
};

inline constexpr int32_t kMaxPriority = 1000;
inline constexpr size_t kMaxIdempotencyKey = 256;
inline constexpr size_t kMaxErrorText = 4096;
inline constexpr uint32_t kMaxSlots = 10000;
inline constexpr int64_t kMaxLeaseWaitMs = 30'000;
// Pools one worker serves; each Lease call names them, and with
// auto_create_pools a name is a pool created for good.
inline constexpr int kMaxWorkerPools = 64;

// `field` prefixes the names in an error ("job" gives "job.priority");
// empty, they stand alone ("priority"), for InItem to place.
[[nodiscard]] Status ValidateJobSpec(const v1::JobSpec& spec,
                                     const RequestLimits& limits,
                                     std::string_view field);
// An item's error placed in its list: "priority: ..." becomes
// "jobs[3].priority: ...". Per-item checks name the item only this way, on
// an error, since every item of every batch passes through them.
[[nodiscard]] Status InItem(Status status, std::string_view list, int index);
[[nodiscard]] Status ValidateBatchSize(int size, const RequestLimits& limits,
                                       std::string_view field);
// EnqueueBatch's per-job checks: one status per job, placed in "jobs[i]".
// A bad job is refused alone; the batch's valid jobs still go in.
[[nodiscard]] std::vector<Status> ValidateBatchJobs(
    const v1::EnqueueBatchRequest& request, const RequestLimits& limits);
// SetTenant: the tenant (config::ValidateTenant), then the update_mask if
// the request has one.
[[nodiscard]] Status ValidateSetTenant(const v1::SetTenantRequest& request);
[[nodiscard]] Status ValidateLeaseRequest(const v1::LeaseRequest& request);
[[nodiscard]] Status ValidateComplete(const v1::CompleteRequest& request,
                                      const RequestLimits& limits);
[[nodiscard]] Status ValidateFail(const v1::FailRequest& request,
                                  const RequestLimits& limits);
[[nodiscard]] Status ValidateRelease(const v1::ReleaseRequest& request,
                                     const RequestLimits& limits);

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_SERVICE_REQUEST_VALIDATION_H_
