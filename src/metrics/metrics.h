// Metrics: the hooks through which fairqd's broker, dispatcher, writer and
// gRPC layer report what happens: plain calls with dense tenant and pool
// ids, so none of them depends on Prometheus (PrometheusMetrics in
// prometheus_metrics.h implements this; docs/metrics.md lists what it
// exports). Standard library only.
//
// Threading: each hook names the thread that calls it. The broker hooks run
// for every job on the dispatcher thread, so implementations keep them to a
// few array lookups and atomic adds: no string hashing, no clock reads, no
// allocation once a tenant's series exist. Time is passed in.
#ifndef FAIRQ_METRICS_METRICS_H_
#define FAIRQ_METRICS_METRICS_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

namespace fairq::metrics {

// Per tenant and pool job counters (fairq_jobs_<event>_total).
enum class JobEvent : uint8_t {
  kEnqueued,      // a new job was accepted (READY or SCHEDULED)
  kCompleted,     // a leased attempt succeeded
  kFailed,        // a worker reported a failed attempt
  kRetried,       // a failed or lapsed attempt will be retried
  kLeaseExpired,  // a lease lapsed without an answer
  kCanceled,      // a queued job was canceled or purged
  kDead,          // a job moved to DEAD
  kReleased,      // a worker gave back a leased job it never started
};
inline constexpr size_t kJobEventCount = 8;

// Why an enqueue was refused (fairq_admission_rejections_total's reason).
enum class Rejection : uint8_t {
  kTenantQueueFull,  // the tenant's max_queued quota
  kRateLimited,      // the tenant's enqueue_rate quota
  kBrokerFull,       // max_queued_total
  kUnknownTenant,    // auto_create_tenants is off and the tenant is unknown
  kTenantLimit,      // a new tenant would pass max_tenants
};
inline constexpr size_t kRejectionCount = 5;

// Where a leased job's spec came from (fairq_leased_specs_total's source).
enum class SpecSource : uint8_t {
  kEnqueueCache,  // cached when the job was enqueued
  kReadAhead,     // read ahead of a deep backlog's leases
  kStore,         // read by id once the lease was written
};
inline constexpr size_t kSpecSourceCount = 3;

// The tenant of a rejection whose tenant does not exist.
inline constexpr uint32_t kNoTenant = std::numeric_limits<uint32_t>::max();

class Metrics {
 public:
  virtual ~Metrics() = default;

  // --- Dispatcher thread (and main during restore, before it starts) ----
  // Names a tenant or pool id before any event for it.
  virtual void NameTenant(uint32_t tenant, std::string_view name) = 0;
  virtual void NamePool(uint32_t pool, std::string_view name) = 0;
  virtual void Count(uint32_t tenant, uint32_t pool, JobEvent event) = 0;
  // `tenant` may be kNoTenant (kUnknownTenant).
  virtual void Rejected(uint32_t tenant, Rejection reason) = 0;
  // A lease was granted after the job waited `wait_ms` in READY.
  virtual void LeaseStarted(uint32_t tenant, uint32_t pool, int64_t wait_ms,
                            int64_t now_ms) = 0;
  // A lease this run did not grant (restored at startup, or adopted from
  // its worker after it): it holds a slot but was granted before.
  virtual void LeaseAdopted(uint32_t tenant, uint32_t pool, int64_t now_ms) = 0;
  // A leased attempt ended (completed, failed, lapsed or never delivered)
  // after the worker-seconds `runtime_s` it reported (the lease length for
  // a lapse, 0 when undelivered).
  virtual void LeaseEnded(uint32_t tenant, uint32_t pool, double runtime_s,
                          int64_t now_ms) = 0;
  // One dispatcher turn took `seconds` (commands, timers, matching).
  virtual void TurnDone(double seconds) = 0;
  // A lease was granted whose job's spec comes from `source`.
  virtual void LeasedSpec(SpecSource source) = 0;
  // `specs` read ahead were pushed out of the payload cache unleased.
  virtual void ReadAheadUnused(size_t specs) = 0;
  // A report item (Complete, Fail, Release) repeated one taken before and
  // was answered OK.
  virtual void ReportRepeated() = 0;

  // --- Writer sync thread -----------------------------------------------
  // A group of `turns` dispatcher turns that wrote became durable `seconds`
  // after its (longest) apply began: apply plus fsync.
  virtual void GroupCommitted(double seconds, size_t turns) = 0;

  // --- gRPC threads -----------------------------------------------------
  // A call to `method` ("/package.Service/Method") ended with the gRPC
  // status `code` after `seconds`.
  virtual void RpcFinished(std::string_view method, int code,
                           double seconds) = 0;
};

// Ignores everything: for tests, and when the exporter is off.
Metrics& NoMetrics();

}  // namespace fairq::metrics

#endif  // FAIRQ_METRICS_METRICS_H_
