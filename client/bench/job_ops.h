// The RPC building blocks the scenarios share: the benchmark's job (a
// 100-byte payload whose first 8 bytes carry a tag the scenario uses to
// find the job's enqueue time again), filling a backlog, leasing,
// completing, and counting what the broker holds.
//
// Free functions; safe from any thread (each call uses its own stub or the
// one passed in, and gRPC stubs are thread-safe). Every RPC has a deadline.
#ifndef FAIRQ_CLIENT_BENCH_JOB_OPS_H_
#define FAIRQ_CLIENT_BENCH_JOB_OPS_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench/bench_context.h"
#include "fairq/client/worker.h"
#include "fairq/v1/fairq.grpc.pb.h"

namespace fairq::bench {

inline constexpr size_t kPayloadBytes = 100;
// The broker's default max_batch, and so the fill batch size.
inline constexpr size_t kFillBatch = 1000;

// A job of `tenant` in the run's pool whose payload carries `tag`.
// `cost_seconds` < 0 leaves the estimate out (the broker then uses its
// learned or default cost).
v1::JobSpec MakeJob(const BenchContext& bench, const std::string& tenant,
                    uint64_t tag, double cost_seconds = -1);
// The tag of a payload made by MakeJob; 0 for anything shorter.
uint64_t PayloadTag(const std::string& payload);

// Enqueues `count` jobs, tags `first_tag` onwards, round robin over
// `tenants`, in EnqueueBatch calls of kFillBatch from `producers` threads.
// Jobs refused with RESOURCE_EXHAUSTED (back-pressure) are sent again after
// the suggested delay. Gives up (UNAVAILABLE) after `timeout_seconds`.
// `cost_seconds` as for MakeJob.
Status FillBacklog(const BenchContext& bench,
                   const std::vector<std::string>& tenants, uint64_t count,
                   size_t producers, double timeout_seconds,
                   uint64_t first_tag = 1, double cost_seconds = -1);

// A Lease request on the run's pool.
v1::LeaseRequest MakeLeaseRequest(const BenchContext& bench,
                                  const std::string& worker_id, uint32_t slots,
                                  uint32_t max_jobs, double wait_seconds);
// One Lease call on the run's pool.
StatusOr<v1::LeaseResponse> Lease(const BenchContext& bench,
                                  v1::Worker::Stub& stub,
                                  const std::string& worker_id, uint32_t slots,
                                  uint32_t max_jobs, double wait_seconds);

// Adds one completion with `runtime` to `request`.
void AddCompletion(v1::CompleteRequest& request, uint64_t job_id,
                   uint64_t lease_token, std::chrono::nanoseconds runtime);
// Moves the first kFillBatch completions of `pending` (all, if fewer) into a
// request of their own: one Complete call's worth.
v1::CompleteRequest TakeCompletions(v1::CompleteRequest& pending);

// An SDK Worker on channel `channel` leasing from the run's pool (this sets
// `options.pools`), started with `handler`.
StatusOr<std::unique_ptr<client::Worker>> StartSdkWorker(
    const BenchContext& bench, size_t channel, client::WorkerOptions options,
    client::Handler handler);

// Completes the leases of `leased` with the given runtime, in Complete
// calls of at most kFillBatch. Returns how many the broker accepted; items
// it refused (stale token) are not errors of the call.
StatusOr<size_t> CompleteAll(const BenchContext& bench, v1::Worker::Stub& stub,
                             const v1::LeaseResponse& leased,
                             std::chrono::nanoseconds runtime);

// READY + SCHEDULED + LEASED jobs in `pool` over all tenants; every pool
// when `pool` is empty.
StatusOr<uint64_t> QueuedJobs(const BenchContext& bench, v1::Admin::Stub& stub,
                              const std::string& pool);

// "<prefix>0" .. "<prefix>(n-1)" as run tenants (bench.Tenant()).
std::vector<std::string> TenantNames(const BenchContext& bench,
                                     const std::string& prefix, size_t n);

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_JOB_OPS_H_
