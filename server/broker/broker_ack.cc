// Heartbeat, Complete, Fail, and the timers that end leases and wake
// scheduled jobs.
#include "google/protobuf/util/time_util.h"
#include "server/broker/broker.h"

namespace fairq::server {
namespace {

using google::protobuf::util::TimeUtil;

double Seconds(const google::protobuf::Duration& d) {
  return static_cast<double>(TimeUtil::DurationToNanoseconds(d)) / 1e9;
}

void SetResult(v1::AckResult* result, const Status& status) {
  result->set_code(static_cast<int32_t>(status.code()));
  result->set_message(status.message());
}

// Whether `token` is the lease of `job` (found by `job_id`, or null).
Status LeaseStatus(const JobMeta* job, uint64_t job_id, uint64_t token) {
  if (job == nullptr) {
    return NotFound("job: " + std::to_string(job_id) +
                    " is not live (unknown, finished or dead)");
  }
  if (job->state != v1::JOB_STATE_LEASED || job->token != token) {
    return FailedPrecondition("lease_token: stale for job " +
                              std::to_string(job_id) +
                              " (the lease lapsed or was granted again)");
  }
  return Status::Ok();
}

}  // namespace

Status Broker::CheckLease(uint64_t job_id, uint64_t token) const {
  return LeaseStatus(jobs_.Find(job_id), job_id, token);
}

// A lease reply may go out before its grant is written (Turn::
// replies_before_apply), so after a process crash a worker can hold a lease
// the store never saw, for a job restored READY. Refusing its report would
// make the job run twice; the store cannot tell that lease from a forged
// one, and this broker has no other check of who a worker is, so the first
// report of such a job is taken as its lease, under the token the worker
// holds. Only until the lost lease would have lapsed: it was granted
// before the restart, so it ended within a lease duration after it.
Status Broker::CheckOrAdoptLease(uint64_t job_id, uint64_t token,
                                 int64_t now_ms, Turn& turn) {
  JobMeta* job = jobs_.Find(job_id);
  if (job != nullptr && job->state == v1::JOB_STATE_READY && job->adoptable &&
      token != 0 && now_ms <= restored_ms_ + job->lease_ms) {
    ExpectOk(scheduler_->Cancel(job->tenant, job->pool, job_id),
             "take an adopted job off its queue", job_id);
    StartLease(job_id, *job, token, "", now_ms, turn);
    // Only a job READY since its enqueue may have its lease answered before
    // the write (broker_read_ahead.cc): a spec read ahead for this one must
    // not stay cached for its next lease.
    payloads_.Erase(job_id);
    AdoptRunning(job_id, *job, now_ms);
    LogJob(spdlog::level::info, "lease adopted after a restart", job_id);
  }
  return LeaseStatus(job, job_id, token);
}

// Heartbeats change memory only (unless they adopt a lease): a lease
// restored after a restart gets a fresh lease duration anyway
// (broker_restore.cc), so persisting each extension would buy nothing but
// an fsync per heartbeat.
void Broker::HandleHeartbeat(HeartbeatCommand& c, int64_t now_ms,
                             Turn& turn) {
  uint64_t job_id = c.request->job_id();
  Status status =
      CheckOrAdoptLease(job_id, c.request->lease_token(), now_ms, turn);
  if (status.ok()) {
    JobMeta& job = *jobs_.Find(job_id);
    job.at_ms = now_ms + job.lease_ms;
    *c.response->mutable_deadline() =
        TimeUtil::MillisecondsToTimestamp(job.at_ms);
    *c.response->mutable_lease_duration() =
        TimeUtil::MillisecondsToDuration(job.lease_ms);
    StatusOr<bool> over = scheduler_->OverShare(job.tenant, job.pool);
    c.response->set_yield(over.ok() && *over);
  }
  Reply(turn, std::move(c.done), status);
}

// A report repeated exactly (its first answer was lost on the way) fails
// the lease check, changing nothing, and is then answered OK, as the first
// was. Its reply still waits for this turn's sync, which comes after the
// first report's. (The lease check comes first as it is the common case;
// it adopts leases only after a restart, when no report is remembered.)
bool Broker::TakeReport(uint64_t job_id, uint64_t token,
                        TakenReports::Kind kind, int64_t now_ms, Turn& turn,
                        Status* answer) {
  *answer = CheckOrAdoptLease(job_id, token, now_ms, turn);
  if (answer->ok()) {
    taken_.Add(job_id, token, kind);
    return true;
  }
  if (taken_.Contains(job_id, token, kind)) {
    metrics_.ReportRepeated();
    *answer = Status::Ok();
  }
  return false;
}

// Each item whose report is taken now is carried out by `act`; every item
// gets its result, and the call its reply, after this turn's sync.
template <class Items, class Act>
void Broker::AnswerReports(const Items& items, TakenReports::Kind kind,
                           int64_t now_ms, Turn& turn,
                           v1::AckResponse* response, Done done, Act act) {
  for (const auto& item : items) {
    Status status;
    if (TakeReport(item.job_id(), item.lease_token(), kind, now_ms, turn,
                   &status)) {
      act(item);
    }
    SetResult(response->add_results(), status);
  }
  Reply(turn, std::move(done), Status::Ok());
}

void Broker::HandleComplete(CompleteCommand& c, int64_t now_ms, Turn& turn) {
  AnswerReports(
      c.request->completions(), TakenReports::Kind::kCompleted, now_ms, turn,
      c.response, std::move(c.done), [&](const v1::Completion& done) {
        ExpectOk(scheduler_->Complete(done.job_id(), Seconds(done.runtime())),
                 "complete a leased job", done.job_id());
        LogJob(spdlog::level::debug, "job completed", done.job_id(),
               {{"runtime_s", Seconds(done.runtime())}});
        JobMeta& job = *jobs_.Find(done.job_id());
        LeaseEnded(done.job_id(), job, Seconds(done.runtime()), now_ms);
        metrics_.Count(job.tenant, job.pool, metrics::JobEvent::kCompleted);
        Forget(done.job_id(), job, turn);
      });
}

void Broker::HandleFail(FailCommand& c, int64_t now_ms, Turn& turn) {
  AnswerReports(
      c.request->failures(), TakenReports::Kind::kFailed, now_ms, turn,
      c.response, std::move(c.done), [&](const v1::Failure& failure) {
        LogJob(
            spdlog::level::debug, "job failed", failure.job_id(),
            {{"retryable", failure.retryable()}, {"error", failure.error()}});
        const JobMeta& job = *jobs_.Find(failure.job_id());
        metrics_.Count(job.tenant, job.pool, metrics::JobEvent::kFailed);
        EndAttempt(failure.job_id(), Seconds(failure.runtime()),
                   failure.error(), failure.retryable(), now_ms, turn);
      });
}

// Released jobs are counted apart from failures: a worker that stops
// gives back what it prefetched, which says nothing of the jobs.
void Broker::HandleRelease(ReleaseCommand& c, int64_t now_ms, Turn& turn) {
  AnswerReports(
      c.request->leases(), TakenReports::Kind::kReleased, now_ms, turn,
      c.response, std::move(c.done), [&](const v1::ReleasedLease& lease) {
        const JobMeta& job = *jobs_.Find(lease.job_id());
        metrics_.Count(job.tenant, job.pool, metrics::JobEvent::kReleased);
        ReturnUnstarted(lease.job_id(), now_ms, turn);
        LogJob(spdlog::level::debug, "lease released", lease.job_id());
      });
}

void Broker::ReturnUnstarted(uint64_t job_id, int64_t now_ms, Turn& turn) {
  JobMeta& job = *jobs_.Find(job_id);
  ExpectOk(scheduler_->Fail(job_id, 0), "return an unstarted job", job_id);
  LeaseEnded(job_id, job, 0, now_ms);
  Leave(job_id, job, turn);
  --job.attempts;
  MakeReady(job_id, job, now_ms, turn);
}

// Null if its job was completed, failed or leased again since: a new lease
// has a new random token.
JobMeta* Broker::JobOfLeaseTimer(const Timer& timer) {
  JobMeta* job = jobs_.Find(timer.job_id);
  return job != nullptr && job->state == v1::JOB_STATE_LEASED &&
                 job->token == timer.stamp
             ? job
             : nullptr;
}

// Null if its job was canceled, purged or rescheduled since.
JobMeta* Broker::JobOfScheduledTimer(const Timer& timer) {
  JobMeta* job = jobs_.Find(timer.job_id);
  return job != nullptr && job->state == v1::JOB_STATE_SCHEDULED &&
                 job->at_ms == static_cast<int64_t>(timer.stamp)
             ? job
             : nullptr;
}

// A lapsed lease is a failed attempt that held its worker from the grant to
// its deadline: the whole lease, and every heartbeat's extension (not the
// timer's lateness, which is the broker's). Entries
// whose lease was extended are pushed again at the new deadline, so each
// lease has one entry however often it is heartbeated.
void Broker::ExpireLeases(int64_t now_ms, Turn& turn) {
  while (!lease_timers_.empty() && lease_timers_.top().at_ms <= now_ms) {
    Timer timer = lease_timers_.top();
    lease_timers_.pop();
    JobMeta* job = JobOfLeaseTimer(timer);
    if (job == nullptr) continue;
    if (job->at_ms > now_ms) {
      lease_timers_.Push({job->at_ms, timer.job_id, timer.stamp});
      continue;
    }
    LogJob(spdlog::level::debug, "lease expired", timer.job_id);
    metrics_.Count(job->tenant, job->pool, metrics::JobEvent::kLeaseExpired);
    EndAttempt(timer.job_id,
               static_cast<double>(job->at_ms - job->leased_ms) / 1000,
               "lease expired", true, now_ms, turn);
  }
}

void Broker::PromoteScheduled(int64_t now_ms, Turn& turn) {
  while (!scheduled_timers_.empty() &&
         scheduled_timers_.top().at_ms <= now_ms) {
    Timer timer = scheduled_timers_.top();
    scheduled_timers_.pop();
    JobMeta* job = JobOfScheduledTimer(timer);
    if (job == nullptr) continue;
    Leave(timer.job_id, *job, turn);
    MakeReady(timer.job_id, *job, now_ms, turn);
    LogJob(spdlog::level::debug, "job ready", timer.job_id);
  }
}

}  // namespace fairq::server
