#include "client/sdk/heartbeater.h"

#include <algorithm>

#include "client/sdk/grpc_util.h"

namespace fairq::client::internal {

Heartbeater::Heartbeater(v1::Worker::Stub* stub, const WorkerOptions* options,
                         Counters* counters)
    : stub_(stub), options_(options), counters_(counters), thread_([this] {
        worker_of_this_thread = options_;
        Loop();
      }) {}

Heartbeater::~Heartbeater() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  changed_.notify_one();
  thread_.join();
}

void Heartbeater::Add(std::shared_ptr<RunningJob> job) {
  Clock::time_point due = Clock::now() + job->heartbeat_interval;
  const RunningJob* key = job.get();
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_[key] = {std::move(job), due};
    due_.insert({due, key});
  }
  changed_.notify_one();
}

void Heartbeater::Remove(const RunningJob* job) {
  std::lock_guard<std::mutex> lock(mu_);
  auto found = jobs_.find(job);
  if (found == jobs_.end()) return;
  due_.erase({found->second.second, job});
  jobs_.erase(found);
}

// Sleeps until the earliest due heartbeat; the call itself is made without
// the lock, so Add and Remove never wait for the network.
void Heartbeater::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (due_.empty()) {
      changed_.wait(lock);
      continue;
    }
    auto [due, key] = *due_.begin();
    if (Clock::now() < due) {
      changed_.wait_until(lock, due);
      continue;
    }
    std::shared_ptr<RunningJob> job = jobs_[key].first;
    lock.unlock();
    bool alive = Beat(*job);
    lock.lock();
    auto found = jobs_.find(key);
    if (found == jobs_.end() || found->second.first != job) continue;
    due_.erase({found->second.second, key});
    if (!alive) {
      jobs_.erase(found);
      continue;
    }
    found->second.second = Clock::now() + job->heartbeat_interval;
    due_.insert({found->second.second, key});
  }
}

bool Heartbeater::Beat(RunningJob& job) {
  v1::HeartbeatRequest request;
  request.set_job_id(job.context.id());
  request.set_lease_token(job.token);
  v1::HeartbeatResponse response;
  grpc::ClientContext context;
  // Waiting for a connection (rather than failing at once) keeps it
  // being made while the broker restarts; one interval bounds the wait so
  // that the other jobs' heartbeats are not held up longer.
  context.set_wait_for_ready(true);
  context.set_deadline(
      DeadlineIn(std::min(options_->rpc_timeout, job.heartbeat_interval)));
  Status status =
      FromGrpc(stub_->Heartbeat(&context, request, &response), context);
  if (status.ok()) {
    ++counters_->heartbeats;
    job.context.SetShouldYield(response.yield());
    return true;
  }
  bool lost = status.code() == Code::kFailedPrecondition ||
              status.code() == Code::kNotFound;
  if (!lost) {
    // Transient: the next interval is still inside the lease (by default
    // two more heartbeats come before it lapses).
    ReportError(*options_, status);
    return true;
  }
  if (job.Settle()) {  // else the handler already finished: nothing lost
    ++counters_->lost_leases;
    job.context.Cancel();
    ReportError(*options_,
                Status(status.code(), "job " + std::to_string(job.context.id()) +
                                          ": lease lost: " + status.message()));
  }
  return false;
}

}  // namespace fairq::client::internal
