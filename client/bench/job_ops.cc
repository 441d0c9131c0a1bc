#include "bench/job_ops.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>

#include "bench/parallel.h"
#include "google/protobuf/util/time_util.h"

namespace fairq::bench {
namespace {

using google::protobuf::util::TimeUtil;
using std::chrono::milliseconds;

// Bounds on resending refused jobs of one fill chunk; the fill's timeout
// bounds the time.
constexpr int kMaxFillAttempts = 10'000;
constexpr milliseconds kDefaultRetry{20};
constexpr milliseconds kMaxRetry{1000};
// A batch of 1,000 is one dispatcher turn and one sync; allow for a slow disk.
constexpr double kBatchExtraSeconds = 20;

milliseconds ClampRetry(milliseconds delay) {
  return std::clamp(delay, milliseconds(1), kMaxRetry);
}

// The broker's hint from a call refused as a whole (command queue full).
milliseconds RetryHint(const grpc::ClientContext& context) {
  const auto& trailers = context.GetServerTrailingMetadata();
  auto hint = trailers.find("fairq-retry-after-ms");
  if (hint == trailers.end()) return kDefaultRetry;
  std::string text(hint->second.data(), hint->second.size());
  return ClampRetry(milliseconds(std::strtoll(text.c_str(), nullptr, 10)));
}

// Keeps the jobs of `request` refused with RESOURCE_EXHAUSTED for another
// try and returns the longest suggested delay; any other refusal is an error.
StatusOr<milliseconds> KeepRefused(v1::EnqueueBatchRequest& request,
                                   const v1::EnqueueBatchResponse& response) {
  v1::EnqueueBatchRequest refused;
  milliseconds delay{0};
  for (int i = 0; i < response.results_size(); ++i) {
    const v1::EnqueueResult& result = response.results(i);
    if (result.code() == 0) continue;
    if (result.code() != static_cast<int>(StatusCode::kResourceExhausted)) {
      return Status(
          static_cast<StatusCode>(result.code()),
          "EnqueueBatch: jobs[" + std::to_string(i) + "]: " + result.message());
    }
    refused.add_jobs()->Swap(request.mutable_jobs(i));
    delay = std::max(
        delay,
        milliseconds(TimeUtil::DurationToMilliseconds(result.retry_after())));
  }
  request = std::move(refused);
  return ClampRetry(delay);
}

// Sends one chunk until all of it is queued.
Status SendChunk(const BenchContext& bench, v1::Producer::Stub& stub,
                 v1::EnqueueBatchRequest request,
                 std::chrono::steady_clock::time_point give_up) {
  for (int attempt = 0; attempt < kMaxFillAttempts; ++attempt) {
    if (std::chrono::steady_clock::now() > give_up) break;
    grpc::ClientContext context;
    bench.SetDeadline(context, kBatchExtraSeconds);
    v1::EnqueueBatchResponse response;
    grpc::Status status = stub.EnqueueBatch(&context, request, &response);
    if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      std::this_thread::sleep_for(RetryHint(context));
      continue;
    }
    if (!status.ok()) return FromGrpc(status, "EnqueueBatch");
    StatusOr<milliseconds> delay = KeepRefused(request, response);
    if (!delay.ok()) return delay.status();
    if (request.jobs_size() == 0) return Status::Ok();
    std::this_thread::sleep_for(*delay);
  }
  return Unavailable("fill: jobs still refused when the fill timed out");
}

}  // namespace

v1::JobSpec MakeJob(const BenchContext& bench, const std::string& tenant,
                    uint64_t tag, double cost_seconds) {
  v1::JobSpec job;
  job.set_tenant(tenant);
  job.set_pool(bench.pool());
  std::string payload(kPayloadBytes, 'x');
  std::memcpy(payload.data(), &tag, sizeof(tag));  // host byte order
  job.set_payload(std::move(payload));
  if (cost_seconds >= 0) job.set_estimated_cost_seconds(cost_seconds);
  return job;
}

uint64_t PayloadTag(const std::string& payload) {
  uint64_t tag = 0;
  if (payload.size() >= sizeof(tag)) {
    std::memcpy(&tag, payload.data(), sizeof(tag));
  }
  return tag;
}

Status FillBacklog(const BenchContext& bench,
                   const std::vector<std::string>& tenants, uint64_t count,
                   size_t producers, double timeout_seconds, uint64_t first_tag,
                   double cost_seconds) {
  auto give_up =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(timeout_seconds));
  std::atomic<uint64_t> next{0};
  std::mutex mu;
  Status first_error;
  RunParallel(producers, [&](size_t p) {
    std::unique_ptr<v1::Producer::Stub> stub = bench.Producer(p);
    // Each chunk is claimed once, so the loop ends after count/producers
    // chunks at most; an error anywhere stops every producer.
    for (uint64_t start = next.fetch_add(kFillBatch); start < count;
         start = next.fetch_add(kFillBatch)) {
      v1::EnqueueBatchRequest request;
      for (uint64_t i = start;
           i < std::min<uint64_t>(count, start + kFillBatch); ++i) {
        *request.add_jobs() = MakeJob(bench, tenants[i % tenants.size()],
                                      first_tag + i, cost_seconds);
      }
      Status sent = SendChunk(bench, *stub, std::move(request), give_up);
      if (!sent.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.ok()) first_error = sent;
        next.store(count);
        return;
      }
    }
  });
  return first_error;
}

v1::LeaseRequest MakeLeaseRequest(const BenchContext& bench,
                                  const std::string& worker_id, uint32_t slots,
                                  uint32_t max_jobs, double wait_seconds) {
  v1::LeaseRequest request;
  request.set_worker_id(worker_id);
  request.add_pools(bench.pool());
  request.set_slots(slots);
  request.set_max_jobs(max_jobs);
  *request.mutable_wait() = TimeUtil::MillisecondsToDuration(
      static_cast<int64_t>(wait_seconds * 1000));
  return request;
}

StatusOr<v1::LeaseResponse> Lease(const BenchContext& bench,
                                  v1::Worker::Stub& stub,
                                  const std::string& worker_id, uint32_t slots,
                                  uint32_t max_jobs, double wait_seconds) {
  v1::LeaseRequest request =
      MakeLeaseRequest(bench, worker_id, slots, max_jobs, wait_seconds);
  grpc::ClientContext context;
  bench.SetDeadline(context, wait_seconds);
  v1::LeaseResponse response;
  grpc::Status status = stub.Lease(&context, request, &response);
  if (!status.ok()) return FromGrpc(status, "Lease");
  return response;
}

void AddCompletion(v1::CompleteRequest& request, uint64_t job_id,
                   uint64_t lease_token, std::chrono::nanoseconds runtime) {
  v1::Completion* completion = request.add_completions();
  completion->set_job_id(job_id);
  completion->set_lease_token(lease_token);
  *completion->mutable_runtime() =
      TimeUtil::NanosecondsToDuration(runtime.count());
}

v1::CompleteRequest TakeCompletions(v1::CompleteRequest& pending) {
  v1::CompleteRequest request;
  if (pending.completions_size() <= static_cast<int>(kFillBatch)) {
    request.Swap(&pending);
    return request;
  }
  auto* all = pending.mutable_completions();
  for (int i = 0; i < static_cast<int>(kFillBatch); ++i) {
    request.add_completions()->Swap(all->Mutable(i));
  }
  all->DeleteSubrange(0, static_cast<int>(kFillBatch));
  return request;
}

StatusOr<std::unique_ptr<client::Worker>> StartSdkWorker(
    const BenchContext& bench, size_t channel, client::WorkerOptions options,
    client::Handler handler) {
  options.pools = {bench.pool()};
  client::StatusOr<std::unique_ptr<client::Worker>> worker =
      client::Worker::Create(bench.Channel(channel), std::move(options));
  if (!worker.ok()) {
    return Status(StatusCode::kInvalidArgument, worker.status().ToString());
  }
  client::Status started = (*worker)->Start(std::move(handler));
  if (!started.ok()) return Status(StatusCode::kInternal, started.ToString());
  return std::move(*worker);
}

StatusOr<size_t> CompleteAll(const BenchContext& bench, v1::Worker::Stub& stub,
                             const v1::LeaseResponse& leased,
                             std::chrono::nanoseconds runtime) {
  size_t accepted = 0;
  for (int start = 0; start < leased.jobs_size();
       start += static_cast<int>(kFillBatch)) {
    v1::CompleteRequest request;
    int end =
        std::min(leased.jobs_size(), start + static_cast<int>(kFillBatch));
    for (int i = start; i < end; ++i) {
      AddCompletion(request, leased.jobs(i).job().id(),
                    leased.jobs(i).lease_token(), runtime);
    }
    grpc::ClientContext context;
    bench.SetDeadline(context);
    v1::AckResponse response;
    grpc::Status status = stub.Complete(&context, request, &response);
    if (!status.ok()) return FromGrpc(status, "Complete");
    for (const v1::AckResult& result : response.results()) {
      if (result.code() == 0) ++accepted;
    }
  }
  return accepted;
}

StatusOr<uint64_t> QueuedJobs(const BenchContext& bench, v1::Admin::Stub& stub,
                              const std::string& pool) {
  v1::GetQueueStatsRequest request;
  request.set_pool(pool);
  grpc::ClientContext context;
  bench.SetDeadline(context);
  v1::GetQueueStatsResponse response;
  grpc::Status status = stub.GetQueueStats(&context, request, &response);
  if (!status.ok()) return FromGrpc(status, "GetQueueStats");
  uint64_t total = 0;
  for (const v1::TenantStats& stats : response.tenants()) {
    total += stats.ready() + stats.scheduled() + stats.leased();
  }
  return total;
}

std::vector<std::string> TenantNames(const BenchContext& bench,
                                     const std::string& prefix, size_t n) {
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) {
    names.push_back(bench.Tenant(prefix + std::to_string(i)));
  }
  return names;
}

}  // namespace fairq::bench
