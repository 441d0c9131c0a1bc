#include "client/sdk/heartbeater.h"

#include <algorithm>

#include "client/sdk/grpc_util.h"

namespace fairq::client::internal {

struct Heartbeater::Call {
  const RunningJob* key = nullptr;
  std::shared_ptr<RunningJob> job;  // keeps `key` from being reused
  grpc::ClientContext context;
  v1::HeartbeatRequest request;
  v1::HeartbeatResponse response;
  grpc::Status status;  // written by the callback, before Finished
  Clock::time_point sent;
};

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

// Only a beat due before the loop's sleep ends must wake it. A job's first
// beat is a third of its lease away, so while jobs come and go the loop
// sleeps until a due time and most Adds (one per leased job) wake nothing:
// about one wake-up an interval instead of one a job, each a thread switch.
void Heartbeater::Add(std::shared_ptr<RunningJob> job) {
  const RunningJob* key = job.get();
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto [found, added] = jobs_.try_emplace(key);
    Entry& entry = found->second;
    // The same job (its key is its address) with a beat in flight: that
    // beat's answer schedules the next.
    if (!added && entry.call != nullptr) return;
    // A job here already keeps the pace the broker's answers gave it.
    std::chrono::milliseconds interval =
        added ? job->heartbeat_interval : entry.interval;
    if (!added) due_.erase({entry.due, key});
    entry = Entry{job, Clock::now() + interval, nullptr, interval};
    due_.insert({entry.due, key});
    wake = entry.due < wakes_at_;
  }
  if (wake) changed_.notify_one();
}

void Heartbeater::Remove(const RunningJob* job) {
  std::lock_guard<std::mutex> lock(mu_);
  auto found = jobs_.find(job);
  if (found == jobs_.end()) return;
  if (found->second.call == nullptr) due_.erase({found->second.due, job});
  jobs_.erase(found);
}

// Sleeps until an answer comes or a heartbeat is due. Calls are started
// and answers acted on without the lock, so Add and Remove never wait for
// the network or for on_error.
void Heartbeater::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (!finished_.empty()) {
      HandleFinished(lock);
      continue;
    }
    if (due_.empty()) {
      SleepUntil(Clock::time_point::max(), lock);
      continue;
    }
    auto [due, key] = *due_.begin();
    if (Clock::now() < due) {
      SleepUntil(due, lock);
      continue;
    }
    Send(key, lock);
  }
  CancelInFlight(lock);
}

void Heartbeater::SleepUntil(Clock::time_point until,
                             std::unique_lock<std::mutex>& lock) {
  wakes_at_ = until;
  if (until == Clock::time_point::max()) {
    changed_.wait(lock);
  } else {
    changed_.wait_until(lock, until);
  }
  wakes_at_ = Clock::time_point::min();
}

void Heartbeater::Send(const RunningJob* key,
                       std::unique_lock<std::mutex>& lock) {
  Entry& entry = jobs_.at(key);
  due_.erase({entry.due, key});
  auto call = std::make_unique<Call>();
  call->key = key;
  call->job = entry.job;
  call->request.set_job_id(entry.job->context.id());
  call->request.set_lease_token(entry.job->token);
  // Waiting for a connection (rather than failing at once) keeps it being
  // made while the broker restarts. One interval bounds the wait, and the
  // next beat is due one interval after this one was sent, not after its
  // answer: a beat that times out is followed at once by the next, and
  // two beats still come inside the lease that the last answered one
  // extended (three intervals by default).
  call->context.set_wait_for_ready(true);
  call->context.set_deadline(
      DeadlineIn(std::min(options_->rpc_timeout, entry.interval)));
  call->sent = Clock::now();
  Call* started = call.get();
  entry.call = started;
  in_flight_.emplace(started, std::move(call));
  // Only this thread destroys calls, so `started` outlives the unlock.
  lock.unlock();
  stub_->async()->Heartbeat(&started->context, &started->request,
                            &started->response,
                            [this, started](grpc::Status status) {
                              started->status = std::move(status);
                              Finished(started);
                            });
  lock.lock();
}

void Heartbeater::Finished(Call* call) {
  std::lock_guard<std::mutex> lock(mu_);
  auto found = in_flight_.find(call);
  finished_.push_back(std::move(found->second));
  in_flight_.erase(found);
  // Under the lock: once it is released the destructor may finish.
  changed_.notify_one();
}

// The answer for a job removed while its call was in flight is dropped:
// the job is settled or given back already, and an error about it would
// name a job the worker no longer holds.
void Heartbeater::HandleFinished(std::unique_lock<std::mutex>& lock) {
  std::vector<std::unique_ptr<Call>> answered;
  answered.swap(finished_);
  std::vector<char> alive;  // not vector<bool>: one flag per call
  for (const std::unique_ptr<Call>& call : answered) {
    auto found = jobs_.find(call->key);
    alive.push_back(found != jobs_.end() && found->second.call == call.get());
  }
  lock.unlock();
  for (size_t i = 0; i < answered.size(); ++i) {
    if (alive[i]) alive[i] = Handle(*answered[i]);
  }
  lock.lock();
  for (size_t i = 0; i < answered.size(); ++i) {
    auto found = jobs_.find(answered[i]->key);
    // Removed meanwhile, and perhaps added again: not this call's entry.
    if (found == jobs_.end() || found->second.call != answered[i].get()) {
      continue;
    }
    if (!alive[i]) {
      jobs_.erase(found);
      continue;
    }
    Entry& entry = found->second;
    entry.call = nullptr;
    const Call& call = *answered[i];
    if (call.status.ok() && call.response.has_lease_duration()) {
      entry.interval = BeatEvery(ToMillis(call.response.lease_duration()),
                                 options_->heartbeat_interval);
    }
    entry.due = std::max(Clock::now(), call.sent + entry.interval);
    due_.insert({entry.due, found->first});
  }
}

bool Heartbeater::Handle(Call& call) {
  RunningJob& job = *call.job;
  Status status = FromGrpc(call.status, call.context);
  if (status.ok()) {
    ++counters_->heartbeats;
    job.context.SetShouldYield(call.response.yield());
    return true;
  }
  bool lost = status.code() == Code::kFailedPrecondition ||
              status.code() == Code::kNotFound;
  if (!lost) {
    // Transient: the next beat goes out one interval after this one was
    // sent, still inside the lease (see Send).
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

void Heartbeater::CancelInFlight(std::unique_lock<std::mutex>& lock) {
  std::vector<Call*> calls;
  for (const auto& [key, call] : in_flight_) calls.push_back(call.get());
  // Without the lock: gRPC may run a callback (which takes it) inside
  // TryCancel. The calls stay alive: only this thread destroys them.
  lock.unlock();
  for (Call* call : calls) call->context.TryCancel();
  lock.lock();
  changed_.wait(lock, [this] { return in_flight_.empty(); });
  finished_.clear();
}

}  // namespace fairq::client::internal
