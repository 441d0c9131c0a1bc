// Job state transitions shared by every command.
#include <algorithm>
#include <cmath>

#include "server/broker/broker.h"

namespace fairq::server {
namespace {

// Ids are reserved on disk a block at a time, so a restart never hands out
// an id (and so a lease) that an old worker may still hold. The exception
// is a job whose enqueue was never acknowledged: leased and answered before
// its turn was applied (Turn::replies_before_apply), it can be lost in a
// crash with the reservation that covered it.
constexpr uint64_t kIdBlock = 1 << 16;

double Seconds(int64_t ms) { return static_cast<double>(ms) / 1000.0; }

}  // namespace

uint64_t Broker::NextJobId(Turn& turn) {
  if (next_job_id_ >= reserved_job_id_) {
    reserved_job_id_ = next_job_id_ + kIdBlock;
    v1::IdReservation reservation;
    reservation.set_next_unreserved(reserved_job_id_);
    turn.batch.PutIdReservation(reservation);
  }
  return next_job_id_++;
}

void Broker::MakeReady(uint64_t job_id, JobMeta& job, int64_t now_ms,
                       Turn& turn, bool since_enqueue) {
  job.state = v1::JOB_STATE_READY;
  job.at_ms = now_ms;
  job.seq = next_seq_++;
  job.ready_entry = !since_enqueue;
  job.adoptable = false;
  if (job.ready_entry) {
    v1::ReadyEntry entry;
    entry.set_job_id(job_id);
    entry.set_attempts(job.attempts);
    entry.set_ready_unix_ms(now_ms);
    entry.set_last_error(jobs_.LastError(job_id));
    turn.batch.PutReady({job.tenant, job.pool, job.priority, job.seq}, entry);
  }
  ExpectOk(scheduler_->Enqueue(
               {job_id, job.tenant, job.pool, job.priority, job.declared_cost()},
               Seconds(now_ms)),
           "queue a ready job", job_id);
  ++tenants_[job.tenant].queued;
  ++total_queued_;
  ++total_ready_;
  pool_has_news_[job.pool] = true;
}

void Broker::MakeScheduled(uint64_t job_id, JobMeta& job, int64_t due_ms,
                           Turn& turn) {
  job.state = v1::JOB_STATE_SCHEDULED;
  job.at_ms = due_ms;
  v1::ScheduledEntry entry;
  entry.set_attempts(job.attempts);
  entry.set_last_error(jobs_.LastError(job_id));
  turn.batch.PutScheduled({due_ms, job_id}, entry);
  scheduled_timers_.Push({due_ms, job_id, static_cast<uint64_t>(due_ms)});
  ++DepthOf(job.tenant, job.pool).scheduled;
  ++tenants_[job.tenant].queued;
  ++total_queued_;
}

void Broker::Leave(uint64_t job_id, JobMeta& job, Turn& turn) {
  switch (job.state) {
    case v1::JOB_STATE_READY:
      if (job.ready_entry) {
        turn.batch.DeleteReady({job.tenant, job.pool, job.priority, job.seq});
      }
      --tenants_[job.tenant].queued;
      --total_queued_;
      --total_ready_;
      break;
    case v1::JOB_STATE_SCHEDULED:
      turn.batch.DeleteScheduled({job.at_ms, job_id});
      --DepthOf(job.tenant, job.pool).scheduled;
      --tenants_[job.tenant].queued;
      --total_queued_;
      break;
    case v1::JOB_STATE_LEASED:
      turn.batch.DeleteLease(job_id);
      --DepthOf(job.tenant, job.pool).leased;
      pool_has_news_[job.pool] = true;  // a slot under its cap came free
      break;
    default:
      break;
  }
  job.state = v1::JOB_STATE_UNSPECIFIED;
}

void Broker::Forget(uint64_t job_id, JobMeta& job, Turn& turn) {
  Leave(job_id, job, turn);
  DropRecord(job_id, turn);
  jobs_.Erase(job_id);
  payloads_.Erase(job_id);
}

void Broker::DropRecord(uint64_t job_id, Turn& turn) {
  const JobPages::Finish finish = pages_.Finished(job_id);
  if (!finish.delete_page) {
    turn.batch.PutJobDone(job_id);
    return;
  }
  turn.batch.DeleteJobPage(finish.first_id);
  if (finish.clear_marks) {
    turn.batch.DeleteJobsDone(finish.first_id, finish.end_id);
  }
}

// min(max, initial * 2^(attempts-1)) with +-20% jitter, so retries of a
// burst that failed together do not come back together.
int64_t Broker::Backoff(const JobMeta& job) {
  double base = job.initial_backoff_ms *
                std::pow(2.0, std::max(0, static_cast<int>(job.attempts) - 1));
  base = std::min(base, static_cast<double>(job.max_backoff_ms));
  double jitter = 0.8 + 0.4 * std::uniform_real_distribution<double>()(random_);
  return static_cast<int64_t>(base * jitter);
}

void Broker::LeaseEnded(uint64_t job_id, const JobMeta& job, double runtime_s,
                        int64_t now_ms) {
  metrics_.LeaseEnded(job.tenant, job.pool, runtime_s, now_ms);
  workers_.LeaseEnded(job_id, now_ms);
}

void Broker::EndAttempt(uint64_t job_id, double runtime_s,
                        const std::string& error, bool retryable,
                        int64_t now_ms, Turn& turn) {
  JobMeta& job = *jobs_.Find(job_id);
  ExpectOk(scheduler_->Fail(job_id, runtime_s), "end a leased attempt", job_id);
  LeaseEnded(job_id, job, runtime_s, now_ms);
  Leave(job_id, job, turn);
  jobs_.SetLastError(job_id, error);
  if (!retryable || job.attempts >= job.max_attempts) {
    MakeDead(job_id, job, now_ms, turn);
  } else {
    metrics_.Count(job.tenant, job.pool, metrics::JobEvent::kRetried);
    MakeScheduled(job_id, job, now_ms + Backoff(job), turn);
    LogJob(spdlog::level::debug, "job retry scheduled", job_id,
           {logging::Field::Time("due", job.at_ms)});
  }
}

void Broker::MakeDead(uint64_t job_id, JobMeta& job, int64_t now_ms,
                      Turn& turn) {
  v1::DeadRecord dead;
  dead.set_attempts(job.attempts);
  dead.set_last_error(jobs_.LastError(job_id));
  dead.set_died_unix_ms(now_ms);
  dead.set_tenant(tenants_[job.tenant].config.name());
  dead.set_pool(pools_[job.pool].name);
  turn.batch.PutDead(job_id, dead);
  dead_ids_.insert(job_id);
  ++DepthOf(job.tenant, job.pool).dead;
  LogJob(spdlog::level::debug, "job dead", job_id,
         {{"error", jobs_.LastError(job_id)}});
  metrics_.Count(job.tenant, job.pool, metrics::JobEvent::kDead);
  jobs_.Erase(job_id);  // the record stays on disk with the dead letter
  payloads_.Erase(job_id);
}

}  // namespace fairq::server
