// Enqueue and EnqueueBatch: admission, idempotency, and the first state.
#include <cmath>

#include "google/protobuf/util/time_util.h"
#include "server/broker/broker.h"

namespace fairq::server {
namespace {

using google::protobuf::util::TimeUtil;

int64_t StartMs(const v1::JobSpec& spec, int64_t now_ms) {
  if (spec.has_delay()) {
    return now_ms + TimeUtil::DurationToMilliseconds(spec.delay());
  }
  if (spec.has_not_before()) {
    return TimeUtil::TimestampToMilliseconds(spec.not_before());
  }
  return now_ms;
}

// With more jobs READY than this, a new job's spec is not cached at
// enqueue unless a worker waits in its pool: the payload cache (8 MiB, ~30k
// specs of 100 bytes) could not keep the specs of all of them until their
// leases, so caching it would only push out specs leased sooner. The
// read-ahead (read_ahead_planner.h) brings it back when its turn nears.
// Half the cache's entries at 100-byte payloads. A job that a waiting worker
// may take in this very turn is cached whatever the count (READY jobs of a
// paused tenant, say), so that its lease replies before the write.
constexpr uint64_t kCacheAtEnqueueMaxReady = 16 * 1024;

// A page is closed once it holds this much, and the next job starts
// another: a lease's read by id walks one page, and a page outlives its
// jobs until the last of them finishes. About 380 jobs of 100-byte
// payloads.
constexpr size_t kMaxPageBytes = 64 * 1024;

uint32_t Millis(double seconds) {
  return static_cast<uint32_t>(std::llround(seconds * 1000));
}

}  // namespace

// The jobs of one command share a page, so that a deep backlog is read back
// in pages, not record by record (docs/storage.md, "Job pages").
void Broker::HandleEnqueue(EnqueueCommand& c, int64_t now_ms, Turn& turn) {
  for (const v1::JobSpec* spec : c.jobs) {
    v1::EnqueueResult* result = c.response->add_results();
    Status status = EnqueueOne(*spec, now_ms, turn, result);
    if (!status.ok()) {
      result->set_code(static_cast<int32_t>(status.code()));
      result->set_message(status.message());
    }
  }
  StorePage(turn);
  Reply(turn, std::move(c.done), Status::Ok());
}

void Broker::StorePage(Turn& turn) {
  if (page_.empty()) return;
  turn.batch.PutJobPage(page_);
  pages_.Add(page_.first_id(), page_.end_id(), page_.count());
  page_.Clear();
}

JobMeta Broker::MetaFor(const v1::JobSpec& spec, uint32_t tenant,
                        uint32_t pool) const {
  const config::TenantDefaults& defaults = config_.tenant_defaults;
  JobMeta job;
  job.tenant = tenant;
  job.pool = pool;
  job.priority = static_cast<int16_t>(spec.priority());  // validated
  job.lease_ms = spec.has_lease_duration()
                     ? static_cast<uint32_t>(TimeUtil::DurationToMilliseconds(
                           spec.lease_duration()))
                     : config_.default_lease_seconds * 1000;
  job.initial_backoff_ms =
      spec.retry().has_initial_backoff()
          ? static_cast<uint32_t>(TimeUtil::DurationToMilliseconds(
                spec.retry().initial_backoff()))
          : Millis(defaults.initial_backoff_seconds);
  job.max_backoff_ms =
      spec.retry().has_max_backoff()
          ? static_cast<uint32_t>(
                TimeUtil::DurationToMilliseconds(spec.retry().max_backoff()))
          : Millis(defaults.max_backoff_seconds);
  if (spec.has_estimated_cost_seconds()) {
    job.cost = static_cast<float>(spec.estimated_cost_seconds());
  }
  job.max_attempts = static_cast<uint16_t>(
      spec.max_attempts() != 0 ? spec.max_attempts() : defaults.max_attempts);
  return job;
}

Status Broker::EnqueueOne(const v1::JobSpec& spec, int64_t now_ms, Turn& turn,
                          v1::EnqueueResult* result) {
  if (StartMs(spec, now_ms) - now_ms > kMaxScheduleAheadMs) {
    return InvalidArgument("not_before: at most 365 days ahead, got " +
                           TimeUtil::ToString(spec.not_before()));
  }
  // A new pool is checked before the tenant is made and made after it, so
  // that a refused enqueue leaves neither behind; a known one is looked up
  // once.
  std::optional<sched::PoolId> known_pool = FindPool(spec.pool());
  if (!known_pool) FAIRQ_RETURN_IF_ERROR(CanUsePool(spec.pool()));
  StatusOr<sched::TenantId> tenant = FindOrCreateTenant(spec.tenant(), turn);
  if (!tenant.ok()) {
    if (tenant.status().code() == StatusCode::kNotFound) {
      metrics_.Rejected(metrics::kNoTenant, metrics::Rejection::kUnknownTenant);
    } else if (tenant.status().code() == StatusCode::kResourceExhausted) {
      metrics_.Rejected(metrics::kNoTenant, metrics::Rejection::kTenantLimit);
    }
    return tenant.status();
  }
  StatusOr<sched::PoolId> pool = known_pool
                                     ? StatusOr<sched::PoolId>(*known_pool)
                                     : FindOrCreatePool(spec.pool(), turn);
  if (!pool.ok()) return pool.status();
  const std::string& key = spec.idempotency_key();
  if (!key.empty()) {
    if (std::optional<uint64_t> existing =
            idempotency_.Find(*tenant, key, now_ms)) {
      result->set_job_id(*existing);
      result->set_duplicate(true);
      return Status::Ok();
    }
  }
  TenantInfo& info = tenants_[*tenant];
  if (auto rejected = admission_.Admit(*tenant, info.config.quotas(),
                                       info.queued, total_queued_, now_ms)) {
    metrics_.Rejected(*tenant, rejected->kind);
    *result->mutable_retry_after() =
        TimeUtil::MillisecondsToDuration(rejected->retry_after_ms);
    return ResourceExhausted("admission: tenant " + spec.tenant() + ": " +
                             rejected->reason + " reached");
  }
  uint64_t id = NextJobId(turn);
  v1::JobRecord record;
  record.set_id(id);
  record.set_tenant_id(*tenant);
  record.set_pool_id(*pool);
  *record.mutable_spec() = spec;
  record.set_enqueued_unix_ms(now_ms);
  page_.Add(record);
  if (page_.bytes().size() >= kMaxPageBytes) StorePage(turn);
  JobMeta& job = jobs_.Insert(id, MetaFor(spec, *tenant, *pool));
  int64_t start_ms = StartMs(spec, now_ms);
  if (start_ms > now_ms) {
    MakeScheduled(id, job, start_ms, turn);
  } else {
    MakeReady(id, job, now_ms, turn, /*since_enqueue=*/true);
    if (total_ready_ <= kCacheAtEnqueueMaxReady ||
        waiters_.waiting_in(job.pool) > 0) {
      ReportUnusedReadAhead(payloads_.Put(
          id, std::unique_ptr<v1::JobSpec>(record.release_spec()), now_ms));
    }
  }
  LogJob(spdlog::level::debug, "job enqueued", id,
         {{"priority", job.priority},
          logging::Field::Time("ready_at", job.at_ms)});
  if (!key.empty()) {
    int64_t expires = now_ms + int64_t{config_.idempotency_window_seconds} * 1000;
    idempotency_.Insert(*tenant, key, id, expires);
    v1::IdempotencyRecord idem;
    idem.set_job_id(id);
    idem.set_expires_unix_ms(expires);
    turn.batch.PutIdempotency(*tenant, key, idem);
  }
  metrics_.Count(*tenant, *pool, metrics::JobEvent::kEnqueued);
  result->set_job_id(id);
  return Status::Ok();
}

}  // namespace fairq::server
