// Lease: long-polling workers, grants, and calls whose client went away.
#include "google/protobuf/util/time_util.h"
#include "server/broker/broker.h"

namespace fairq::server {
namespace {

using google::protobuf::util::TimeUtil;

constexpr int64_t kDefaultWaitMs = 30'000;

// A Lease reply is built in memory and sent as one message (protobuf's
// limit is 2 GiB). Its jobs are bounded so that it stays within 256 MiB
// with every spec at its largest.
constexpr uint64_t kMaxLeaseReplyBytes = 256 << 20;

uint32_t MaxJobsPerReply(const config::DaemonConfig& config) {
  return static_cast<uint32_t>(
      std::max<uint64_t>(1, kMaxLeaseReplyBytes / config.max_spec_bytes()));
}

// A spec read ahead is still encoded (PayloadCache::PutEncoded). Its bytes
// go into the reply as an unknown field of the Job numbered as `spec`:
// protobuf writes unknown fields out as they are, so on the wire they are
// the Job's spec, and a client parses them as it would a spec set here.
void AttachSpec(PayloadCache::Entry& cached, v1::Job* out) {
  if (cached.spec) {
    out->set_allocated_spec(cached.spec.release());
    return;
  }
  out->GetReflection()
      ->MutableUnknownFields(out)
      ->AddLengthDelimited(v1::Job::kSpecFieldNumber)
      ->swap(cached.encoded_spec);
}

bool HasSpec(const v1::Job& job) {
  if (job.has_spec()) return true;
  const auto& unknown = job.GetReflection()->GetUnknownFields(job);
  for (int i = 0; i < unknown.field_count(); ++i) {
    if (unknown.field(i).number() == v1::Job::kSpecFieldNumber) return true;
  }
  return false;
}

// Runs on the writer's apply thread once the grants are applied: jobs whose
// spec was not in the broker's PayloadCache are completed from the store.
Status FillLeasedJobs(const store::Store& store, v1::LeaseResponse& response) {
  std::vector<uint64_t> ids;
  std::vector<int> missing;  // indexes into response.jobs()
  for (int i = 0; i < response.jobs_size(); ++i) {
    if (HasSpec(response.jobs(i).job())) continue;
    ids.push_back(response.jobs(i).job().id());
    missing.push_back(i);
  }
  if (ids.empty()) return Status::Ok();
  auto records = store.GetJobs(ids);
  if (!records.ok()) {
    logging::Log(
        spdlog::level::err, "reading leased jobs failed",
        {{"jobs", ids.size()}, {"error", records.status().ToString()}});
    return records.status();
  }
  for (size_t k = 0; k < ids.size(); ++k) {
    std::optional<v1::JobRecord>& record = (*records)[k];
    if (!record) {
      logging::Log(spdlog::level::err, "leased job has no record",
                   {{"job_id", ids[k]}});
      return Internal("store: leased job " + std::to_string(ids[k]) +
                      " has no record");
    }
    v1::Job* job = response.mutable_jobs(missing[k])->mutable_job();
    job->mutable_spec()->Swap(record->mutable_spec());  // the record is ours
    *job->mutable_enqueued_at() =
        TimeUtil::MillisecondsToTimestamp(record->enqueued_unix_ms());
  }
  return Status::Ok();
}

bool HasEverySpec(const v1::LeaseResponse& response) {
  for (const v1::LeasedJob& leased : response.jobs()) {
    if (!HasSpec(leased.job())) return false;
  }
  return true;
}

}  // namespace

void Broker::HandleLease(LeaseCommand& c, int64_t now_ms, Turn& turn) {
  const v1::LeaseRequest& request = *c.request;
  LeaseWaiters::Waiter waiter;
  waiter.id = c.waiter;
  waiter.worker_id = request.worker_id();
  for (int i = 0; i < request.pools_size(); ++i) {
    StatusOr<sched::PoolId> pool = FindOrCreatePool(
        request.pools(i), turn, "pools[" + std::to_string(i) + "]");
    if (!pool.ok()) {
      Reply(turn, std::move(c.done), pool.status());
      return;
    }
    waiter.pools.push_back(*pool);
  }
  if (waiter.pools.empty()) waiter.pools.push_back(*FindOrCreatePool("", turn));
  int64_t wait_ms = request.has_wait()
                        ? TimeUtil::DurationToMilliseconds(request.wait())
                        : kDefaultWaitMs;
  waiter.deadline_ms = now_ms + wait_ms;
  for (uint32_t pool : workers_.Seen(waiter.worker_id, request.slots(),
                                     waiter.pools, waiter.deadline_ms)) {
    RefreshCapacity(pool);
  }
  waiter.max_jobs = std::min(std::max<uint32_t>(1, request.max_jobs()),
                             MaxJobsPerReply(config_));
  waiter.response = c.response;
  waiter.done = std::move(c.done);
  if (TryFill(waiter, now_ms, turn) || wait_ms <= 0) {
    AnswerWaiter(std::move(waiter), turn);
  } else {
    waiters_.Add(std::move(waiter));
  }
}

bool Broker::TryFill(const LeaseWaiters::Waiter& waiter, int64_t now_ms,
                     Turn& turn) {
  for (uint32_t pool : waiter.pools) {
    while (static_cast<uint32_t>(waiter.response->jobs_size()) <
           waiter.max_jobs) {
      auto dispatch = scheduler_->LeaseNextJob(pool);
      if (!dispatch.ok() || !*dispatch) break;
      GrantLease((*dispatch)->job, waiter.worker_id, now_ms, turn,
                 waiter.response);
    }
  }
  return waiter.response->jobs_size() > 0;
}

void Broker::GrantLease(uint64_t job_id, const std::string& worker_id,
                        int64_t now_ms, Turn& turn,
                        v1::LeaseResponse* response) {
  JobMeta& job = *jobs_.Find(job_id);
  Depth& depth = DepthOf(job.tenant, job.pool);
  if (!depth.waits) depth.waits = std::make_unique<WaitWindow>();
  depth.waits->Add(now_ms - job.at_ms);  // READY: at_ms is when it got ready
  metrics_.LeaseStarted(job.tenant, job.pool, now_ms - job.at_ms, now_ms);
  uint64_t token;
  do {
    token = random_();
  } while (token == 0);
  const std::string& last_error =
      StartLease(job_id, job, token, worker_id, now_ms, turn);
  LogJob(spdlog::level::debug, "job leased", job_id,
         {{"worker", worker_id}, logging::Field::Time("deadline", job.at_ms)});

  v1::LeasedJob* leased = response->add_jobs();
  v1::Job* out = leased->mutable_job();
  out->set_id(job_id);
  out->set_state(v1::JOB_STATE_LEASED);
  out->set_attempts(job.attempts);
  out->set_last_error(last_error);
  leased->set_lease_token(job.token);
  *leased->mutable_deadline() = TimeUtil::MillisecondsToTimestamp(job.at_ms);
  *leased->mutable_lease_duration() =
      TimeUtil::MillisecondsToDuration(job.lease_ms);
  std::optional<PayloadCache::Entry> cached = payloads_.Take(job_id);
  if (std::optional<IdRange> range = read_ahead_plan_.OnLease(
          job_id, cached.has_value(), cached && cached->read_ahead(),
          next_job_id_)) {
    read_ahead_requests_.push_back(*range);
  }
  metrics_.LeasedSpec(!cached ? metrics::SpecSource::kStore
                      : cached->read_ahead()
                          ? metrics::SpecSource::kReadAhead
                          : metrics::SpecSource::kEnqueueCache);
  if (cached) {
    AttachSpec(*cached, out);
    *out->mutable_enqueued_at() =
        TimeUtil::MillisecondsToTimestamp(cached->enqueued_ms);
  }
}

const std::string& Broker::StartLease(uint64_t job_id, JobMeta& job,
                                      uint64_t token,
                                      const std::string& worker_id,
                                      int64_t now_ms, Turn& turn) {
  Leave(job_id, job, turn);
  job.state = v1::JOB_STATE_LEASED;
  job.adoptable = false;
  ++job.attempts;
  job.token = token;
  job.leased_ms = now_ms;
  job.at_ms = now_ms + job.lease_ms;
  ++DepthOf(job.tenant, job.pool).leased;
  v1::LeaseRecord lease;
  lease.set_token(job.token);
  lease.set_deadline_unix_ms(job.at_ms);
  lease.set_attempt(job.attempts);
  lease.set_worker_id(worker_id);
  lease.set_leased_unix_ms(now_ms);
  const std::string& last_error = jobs_.LastError(job_id);
  lease.set_last_error(last_error);
  turn.batch.PutLease(job_id, lease);
  lease_timers_.Push({job.at_ms, job_id, job.token});
  workers_.LeaseStarted(job_id, worker_id);
  return last_error;
}

void Broker::AnswerWaiter(LeaseWaiters::Waiter waiter, Turn& turn) {
  v1::LeaseResponse* response = waiter.response;
  // A lease is not a promise that must survive a power loss: a forgotten
  // lease is redelivered. So the reply does not wait for the fsync, nor,
  // when every spec came from the PayloadCache, for the write.
  if (HasEverySpec(*response)) {
    turn.replies_before_apply.push_back(std::move(waiter.done));
    return;
  }
  const store::Store* store = store_;
  turn.replies_before_sync.push_back([response, store,
                                      done = std::move(waiter.done)](
                             const Status& commit) {
    if (!commit.ok() || response->jobs_size() == 0) {
      done(commit);
      return;
    }
    done(FillLeasedJobs(*store, *response));
  });
}

void Broker::HandleLeaseCanceled(LeaseCanceledCommand& c, Turn& turn) {
  std::optional<LeaseWaiters::Waiter> waiter = waiters_.Take(c.waiter);
  if (!waiter) return;  // answered already; OnDone reports undelivered jobs
  Reply(turn, std::move(waiter->done), Cancelled("lease: canceled by client"));
}

// The jobs never reached a worker: back to the queue at once, and the
// attempt they were granted does not count; unless the answer failed, which
// is a failed attempt.
void Broker::HandleLeaseUndelivered(LeaseUndeliveredCommand& c,
                                    int64_t now_ms, Turn& turn) {
  for (const auto& [job_id, token] : c.leases) {
    if (!CheckLease(job_id, token).ok()) continue;
    if (c.failed) {
      EndAttempt(job_id, 0, "the lease's answer failed (reading the job)", true,
                 now_ms, turn);
      continue;
    }
    ReturnUnstarted(job_id, now_ms, turn);
    LogJob(spdlog::level::debug, "lease returned undelivered", job_id);
  }
}

void Broker::RefreshCapacity(uint32_t pool) {
  ExpectOk(scheduler_->SetCapacity(pool, workers_.Capacity(pool)),
           "set pool capacity");
  pool_has_news_[pool] = true;
}

}  // namespace fairq::server
