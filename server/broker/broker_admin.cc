// GetJob, CancelJob, queue stats, dead-letter requeue and purge.
#include "google/protobuf/util/time_util.h"
#include "server/broker/broker.h"

namespace fairq::server {
namespace {

using google::protobuf::util::TimeUtil;

}  // namespace

void Broker::HandleGetJob(GetJobCommand& c, Turn& turn) {
  const JobMeta* job = jobs_.Find(c.job->id());
  if (job == nullptr) {
    // Dead: it died after the service read the store, its dead letter not
    // yet applied, and the caller reads the letter once this reply comes.
    const bool dead = dead_ids_.contains(c.job->id());
    if (dead) c.job->set_state(v1::JOB_STATE_DEAD);
    Reply(turn, std::move(c.done),
          dead ? Status::Ok()
               : NotFound("job: " + std::to_string(c.job->id()) +
                          " has finished"));
    return;
  }
  c.job->set_state(job->state);
  c.job->set_attempts(job->attempts);
  c.job->set_last_error(jobs_.LastError(c.job->id()));
  if (job->state != v1::JOB_STATE_LEASED) {
    *c.job->mutable_ready_at() = TimeUtil::MillisecondsToTimestamp(job->at_ms);
  }
  Reply(turn, std::move(c.done), Status::Ok());
}

void Broker::RemoveQueued(uint64_t job_id, JobMeta& job, Turn& turn) {
  if (job.state == v1::JOB_STATE_READY) {
    ExpectOk(scheduler_->Cancel(job.tenant, job.pool, job_id),
             "cancel a ready job", job_id);
  }
  Forget(job_id, job, turn);
}

void Broker::HandleCancelJob(CancelJobCommand& c, Turn& turn) {
  uint64_t job_id = c.job->id();
  JobMeta* job = jobs_.Find(job_id);
  if (job == nullptr) {  // not live: dead, or finished since it was read
    Reply(turn, std::move(c.done),
          dead_ids_.contains(job_id)
              ? FailedPrecondition("job: " + std::to_string(job_id) +
                                   " is dead; only READY or SCHEDULED jobs "
                                   "can be canceled")
              : NotFound("job: " + std::to_string(job_id) + " has finished"));
    return;
  }
  if (job->state == v1::JOB_STATE_LEASED) {
    Reply(turn, std::move(c.done),
          FailedPrecondition("job: " + std::to_string(job_id) +
                             " is leased; only READY or SCHEDULED jobs can "
                             "be canceled"));
    return;
  }
  c.job->set_attempts(job->attempts);
  c.job->set_state(v1::JOB_STATE_CANCELED);
  LogJob(spdlog::level::debug, "job canceled", job_id);
  metrics_.Count(job->tenant, job->pool, metrics::JobEvent::kCanceled);
  RemoveQueued(job_id, *job, turn);
  Reply(turn, std::move(c.done), Status::Ok());
}

void Broker::HandleQueueStats(QueueStatsCommand& c, int64_t now_ms,
                              Turn& turn) {
  const v1::GetQueueStatsRequest& request = *c.request;
  std::vector<Pair> pairs = PairsInUse();
  // Every pair's usage counts towards its pool's total, filtered or not.
  std::vector<sched::TenantPoolStats> all(pairs.size());
  std::vector<double> pool_seconds(pools_.size(), 0);
  for (size_t i = 0; i < pairs.size(); ++i) {
    all[i] = *scheduler_->Stats(pairs[i].tenant, pairs[i].pool);
    pool_seconds[pairs[i].pool] += all[i].worker_seconds;
  }
  for (size_t i = 0; i < pairs.size(); ++i) {
    auto [t, p] = pairs[i];
    const std::string& tenant = tenants_[t].config.name();
    if (!request.tenant().empty() && request.tenant() != tenant) continue;
    if (!request.pool().empty() && request.pool() != pools_[p].name) continue;
    const sched::TenantPoolStats& stats = all[i];
    const Depth& depth = PeekDepth(t, p);
    if (stats.queued + depth.scheduled + depth.leased + depth.dead == 0 &&
        stats.worker_seconds == 0) {
      continue;
    }
    v1::TenantStats* out = c.response->add_tenants();
    out->set_tenant(tenant);
    out->set_pool(pools_[p].name);
    out->set_ready(stats.queued);
    out->set_scheduled(depth.scheduled);
    out->set_leased(depth.leased);
    out->set_dead(depth.dead);
    // Zeros are set, not left out, so that JSON readers find every key.
    int64_t age_ms = 0;
    if (stats.oldest_ready_at) {
      age_ms = std::max<int64_t>(
          0, now_ms - static_cast<int64_t>(*stats.oldest_ready_at * 1000));
    }
    *out->mutable_oldest_ready_age() = TimeUtil::MillisecondsToDuration(age_ms);
    *out->mutable_wait_p99() = TimeUtil::MillisecondsToDuration(
        depth.waits ? depth.waits->Percentile(0.99) : 0);
    out->set_worker_seconds(stats.worker_seconds);
    out->set_share(pool_seconds[p] > 0 ? stats.worker_seconds / pool_seconds[p]
                                       : 0);
    out->set_deficit(stats.deficit);
  }
  Reply(turn, std::move(c.done), Status::Ok());
}

void Broker::HandleRequeueDead(RequeueDeadCommand& c, int64_t now_ms,
                               Turn& turn) {
  uint64_t requeued = 0;
  for (const v1::JobRecord& record : c.jobs) {
    // The handler read these dead letters earlier, on a gRPC thread; another
    // requeue may have revived the job since (and it may even have finished,
    // its record gone). Only a job that is dead now comes back.
    if (!dead_ids_.erase(record.id())) continue;
    JobMeta& job = jobs_.Insert(
        record.id(),
        MetaFor(record.spec(), record.tenant_id(), record.pool_id()));
    turn.batch.DeleteDead(record.id());
    --DepthOf(job.tenant, job.pool).dead;
    MakeReady(record.id(), job, now_ms, turn);
    LogJob(spdlog::level::debug, "job requeued from dead", record.id());
    ++requeued;
  }
  c.response->set_requeued(requeued);
  if (c.by_id && requeued == 0 && !c.jobs.empty()) {
    Reply(turn, std::move(c.done),
          NotFound("job_id: " + std::to_string(c.jobs[0].id()) +
                   " is not a dead letter"));
    return;
  }
  Reply(turn, std::move(c.done), Status::Ok());
}

void Broker::HandlePurge(PurgeTenantCommand& c, Turn& turn) {
  auto it = tenant_ids_.find(c.request->tenant());
  if (it == tenant_ids_.end()) {
    Reply(turn, std::move(c.done),
          NotFound("tenant: unknown tenant \"" + c.request->tenant() + "\""));
    return;
  }
  uint32_t tenant = it->second;
  const std::string& pool = c.request->pool();
  if (!pool.empty() && !pool_ids_.contains(pool)) {
    Reply(turn, std::move(c.done),
          NotFound("pool: unknown pool \"" + pool + "\""));
    return;
  }
  // One pass over the live jobs finds READY and SCHEDULED alike; a purge is
  // an admin action, so O(live jobs) is fine here.
  std::vector<uint64_t> doomed;
  jobs_.ForEach([&](uint64_t id, const JobMeta& job) {
    bool queued = job.state == v1::JOB_STATE_READY ||
                  job.state == v1::JOB_STATE_SCHEDULED;
    if (queued && job.tenant == tenant &&
        (pool.empty() || pools_[job.pool].name == pool)) {
      doomed.push_back(id);
    }
  });
  for (uint32_t p = 0; p < pools_.size(); ++p) {
    if (pool.empty() || pools_[p].name == pool) {
      ExpectOk(scheduler_->Purge(tenant, p).status(), "purge a tenant");
    }
  }
  for (uint64_t id : doomed) {
    JobMeta& job = *jobs_.Find(id);
    metrics_.Count(job.tenant, job.pool, metrics::JobEvent::kCanceled);
    Forget(id, job, turn);
  }
  c.response->set_purged(doomed.size());
  logging::Log(spdlog::level::info, "tenant purged",
               {{"tenant", c.request->tenant()},
                {"pool", pool},
                {"jobs", doomed.size()}});
  Reply(turn, std::move(c.done), Status::Ok());
}

}  // namespace fairq::server
