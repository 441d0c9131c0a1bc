#include "fairq/client/worker.h"

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "base/names.h"
#include "client/sdk/backoff.h"
#include "client/sdk/duration_limit.h"
#include "client/sdk/grpc_util.h"
#include "client/sdk/heartbeater.h"
#include "client/sdk/reporter.h"
#include "client/sdk/utf8.h"
#include "client/sdk/worker_internal.h"
#include "fairq/v1/fairq.grpc.pb.h"

namespace fairq::client {
namespace {

using Clock = std::chrono::steady_clock;
using internal::Reporter;
using internal::RunningJob;
using std::chrono::milliseconds;

constexpr uint32_t kMaxSlots = 10'000;
constexpr uint32_t kMaxReportBatch = 1000;  // the API's largest batch
constexpr size_t kMaxPools = 64;
constexpr milliseconds kMaxLeaseWait{30'000};
// The least pause of the lease loop after an error or an empty answer that
// came sooner than this, whatever the retry options say: the loop runs as
// long as the worker, so it must not spin.
constexpr milliseconds kMinLeasePause{100};

Status Invalid(const std::string& field, const std::string& rule) {
  return Status(Code::kInvalidArgument, "WorkerOptions." + field + ": " + rule);
}

Status Validate(const WorkerOptions& o) {
  if (o.worker_id.size() > 128) return Invalid("worker_id", "at most 128 chars");
  if (!internal::IsValidUtf8(o.worker_id)) {
    return Invalid("worker_id", "not valid UTF-8");
  }
  if (o.slots < 1 || o.slots > kMaxSlots) {
    return Invalid("slots", "must be between 1 and 10000");
  }
  if (o.prefetch > o.slots) return Invalid("prefetch", "must be <= slots");
  if (o.max_report_batch < 1 || o.max_report_batch > kMaxReportBatch) {
    return Invalid("max_report_batch", "must be between 1 and 1000");
  }
  // The broker's rules, so that a worker it would refuse on every Lease
  // fails here instead.
  if (o.pools.size() > kMaxPools) return Invalid("pools", "at most 64");
  for (size_t i = 0; i < o.pools.size(); ++i) {
    if (std::optional<std::string> problem = NameProblem(o.pools[i])) {
      return Invalid("pools[" + std::to_string(i) + "]", *problem);
    }
    for (size_t j = 0; j < i; ++j) {
      if (o.pools[i] == o.pools[j]) {
        return Invalid("pools[" + std::to_string(i) + "]",
                       "the same as pools[" + std::to_string(j) + "]");
      }
    }
  }
  if (o.lease_wait.count() < 0 || o.lease_wait > kMaxLeaseWait) {
    return Invalid("lease_wait", "must be between 0 and 30 s");
  }
  if (!internal::WithinADay(o.heartbeat_interval)) {
    return Invalid("heartbeat_interval", "must be between 0 and 24 h");
  }
  if (!internal::WithinADay(o.stop_timeout)) {
    return Invalid("stop_timeout", "must be between 0 and 24 h");
  }
  if (o.rpc_timeout.count() <= 0 || !internal::WithinADay(o.rpc_timeout)) {
    return Invalid("rpc_timeout", "must be above 0 and at most 24 h");
  }
  return internal::ValidateRetry(o.retry, "WorkerOptions.retry.");
}

std::string DefaultWorkerId() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return (host[0] != '\0' ? std::string(host) : "worker") + "-" +
         std::to_string(getpid());
}

// The heartbeat interval for a grant (BeatEvery of its lease length). A
// broker older than LeasedJob.lease_duration left the length to be worked
// out from the job's spec or, when the job left it to the broker's default,
// from the deadline and this machine's clock.
milliseconds HeartbeatInterval(const v1::LeasedJob& leased,
                               milliseconds configured) {
  milliseconds lease;
  if (leased.has_lease_duration()) {
    lease = internal::ToMillis(leased.lease_duration());
  } else if (leased.job().spec().has_lease_duration()) {
    lease = internal::ToMillis(leased.job().spec().lease_duration());
  } else {
    lease = std::chrono::duration_cast<milliseconds>(
        internal::ToTimePoint(leased.deadline()) -
        std::chrono::system_clock::now());
  }
  return internal::BeatEvery(lease, configured);
}

class WorkerImpl final : public Worker {
 public:
  WorkerImpl(std::shared_ptr<grpc::Channel> channel, WorkerOptions options)
      : options_(std::move(options)),
        channel_(std::move(channel)),
        stub_(v1::Worker::NewStub(channel_)),
        room_(options_.slots + options_.prefetch) {}
  ~WorkerImpl() override {
    Stop();
    // A thread still on its way out of Run() must leave before the members.
    std::unique_lock<std::mutex> lock(mu_);
    run_left_.wait(lock, [this] { return in_run_ == 0; });
  }

  Status Start(Handler handler) override;
  Status Run(Handler handler) override;
  void Stop() override;
  WorkerStats stats() const override { return counters_.Snapshot(); }

 private:
  void LeaseLoop();
  StatusOr<std::vector<v1::LeasedJob>> Lease(grpc::ClientContext& context,
                                             uint32_t max_jobs);
  // REQUIRES: mu_ held. Queues the jobs for the slots, or gives them back
  // if stopping; returns how many it queued, for the caller to wake as many
  // slots once it lets go of mu_ (a slot woken under the lock would only
  // wake to wait for it: one more thread switch a job).
  size_t Hand(const std::vector<v1::LeasedJob>& jobs);
  // Lease thread, without mu_: says once, through on_error, that a
  // configured heartbeat_interval is not well under a lease's length.
  void WarnOfSlowBeats(const std::vector<v1::LeasedJob>& jobs);
  void SlotLoop();
  // Blocks for the next job; null once stopping with none left to start.
  std::shared_ptr<RunningJob> NextJob();
  void RunJob(const std::shared_ptr<RunningJob>& job);
  // Calls the handler and reports its outcome.
  void RunHandler(const std::shared_ptr<RunningJob>& job,
                  Clock::time_point start);
  Outcome CallHandler(JobContext& context);
  // Gives back a job the worker holds and will not report: released if no
  // slot took it to run, else failed (retryable) with `why`.
  void GiveBack(const std::shared_ptr<RunningJob>& job,
                const std::string& why = "");
  // Stops leasing and tells running handlers; safe from any thread.
  void BeginStop();
  // BeginStop, then the joins; never on the worker's own threads.
  void DoStop();
  void WaitForHandlers();

  const WorkerOptions options_;
  const std::shared_ptr<grpc::Channel> channel_;
  const std::unique_ptr<v1::Worker::Stub> stub_;
  internal::Counters counters_;
  Handler handler_;
  std::unique_ptr<Reporter> reporter_;
  std::unique_ptr<internal::Heartbeater> heartbeater_;

  std::mutex mu_;
  std::condition_variable slot_freed_;  // lease thread: room or stop
  std::condition_variable job_ready_;   // slot threads: a job or stop
  std::condition_variable job_done_;    // Stop: a running handler returned
  std::condition_variable stopping_cv_;  // Run: a stop began
  std::condition_variable run_left_;     // destructor: a Run() returned
  // Jobs the worker may still take on. Invariant:
  // room_ + ready_.size() + running_.size() == slots + prefetch.
  uint32_t room_;
  std::deque<std::shared_ptr<RunningJob>> ready_;
  std::set<std::shared_ptr<RunningJob>> running_;
  grpc::ClientContext* lease_call_ = nullptr;  // the long poll in flight
  bool warned_of_slow_beats_ = false;          // lease thread only
  bool started_ = false;
  bool stopping_ = false;
  int in_run_ = 0;  // threads inside Run()
  std::once_flag stop_once_;

  std::thread lease_thread_;
  std::vector<std::thread> slot_threads_;
};

Status WorkerImpl::Start(Handler handler) {
  if (!handler) return Status(Code::kInvalidArgument, "handler: empty");
  std::lock_guard<std::mutex> lock(mu_);
  if (started_ || stopping_) {
    return Status(Code::kFailedPrecondition, "worker: already started");
  }
  started_ = true;
  handler_ = std::move(handler);
  // A job's heartbeats go on until its report is acknowledged.
  reporter_ = std::make_unique<Reporter>(
      channel_.get(), stub_.get(), &options_, &counters_,
      [this](const RunningJob* job) { heartbeater_->Remove(job); });
  heartbeater_ = std::make_unique<internal::Heartbeater>(stub_.get(), &options_,
                                                         &counters_);
  for (uint32_t i = 0; i < options_.slots; ++i) {
    slot_threads_.emplace_back([this] {
      internal::worker_of_this_thread = &options_;
      SlotLoop();
    });
  }
  lease_thread_ = std::thread([this] {
    internal::worker_of_this_thread = &options_;
    LeaseLoop();
  });
  return Status();
}

// This thread finishes the stop, whoever began it: a Stop() from the
// worker's own threads (a handler, on_error) only begins one.
Status WorkerImpl::Run(Handler handler) {
  std::unique_lock<std::mutex> lock(mu_);
  ++in_run_;
  lock.unlock();
  Status status = Start(std::move(handler));
  if (status.ok()) {
    lock.lock();
    stopping_cv_.wait(lock, [this] { return stopping_; });
    lock.unlock();
    Stop();
  }
  lock.lock();
  --in_run_;
  run_left_.notify_all();
  return status;
}

void WorkerImpl::Stop() {
  if (internal::worker_of_this_thread == &options_) {
    BeginStop();  // joining would wait for this very thread
    return;
  }
  std::call_once(stop_once_, [this] { DoStop(); });
}

void WorkerImpl::LeaseLoop() {
  internal::Backoff backoff(options_.retry);
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    slot_freed_.wait(lock, [this] { return stopping_ || room_ > 0; });
    if (stopping_) return;
    grpc::ClientContext context;
    lease_call_ = &context;  // so that Stop() can cancel the long poll
    // The broker takes at most `slots` per call; the rest comes next call.
    uint32_t want = std::min(room_, options_.slots);
    lock.unlock();
    Clock::time_point asked = Clock::now();
    StatusOr<std::vector<v1::LeasedJob>> jobs = Lease(context, want);
    if (jobs.ok()) WarnOfSlowBeats(*jobs);
    // An empty answer that came at once (lease_wait 0 or a few ms, or a
    // broker that stopped waiting early) is paused after, as an error is.
    bool waited = Clock::now() - asked >= kMinLeasePause;
    lock.lock();
    lease_call_ = nullptr;
    if (jobs.ok() && (!jobs->empty() || waited)) {
      backoff.Reset();
      size_t queued = Hand(*jobs);
      lock.unlock();
      for (size_t i = 0; i < queued; ++i) job_ready_.notify_one();
      lock.lock();
      continue;
    }
    if (stopping_) return;
    if (!jobs.ok()) {
      lock.unlock();
      internal::ReportError(options_, jobs.status());
      lock.lock();
    }
    // A growing pause, not a spin.
    slot_freed_.wait_for(lock, std::max(backoff.Next(), kMinLeasePause),
                         [this] { return stopping_; });
  }
}

// The broker gives no sign of a pace too slow for its leases until one
// lapses between two beats, and the job runs again.
void WorkerImpl::WarnOfSlowBeats(const std::vector<v1::LeasedJob>& jobs) {
  const milliseconds every = options_.heartbeat_interval;
  if (every.count() == 0 || warned_of_slow_beats_) return;
  for (const v1::LeasedJob& leased : jobs) {
    if (!leased.has_lease_duration()) continue;
    milliseconds lease = internal::ToMillis(leased.lease_duration());
    if (every * 2 <= lease) continue;
    warned_of_slow_beats_ = true;
    internal::ReportError(
        options_,
        Invalid("heartbeat_interval",
                std::to_string(every.count()) + " ms is over half of job " +
                    std::to_string(leased.job().id()) + "'s " +
                    std::to_string(lease.count()) +
                    " ms lease: its lease may lapse between beats (0 paces "
                    "beats by each lease)"));
    return;
  }
}

StatusOr<std::vector<v1::LeasedJob>> WorkerImpl::Lease(
    grpc::ClientContext& context, uint32_t max_jobs) {
  v1::LeaseRequest request;
  request.set_worker_id(options_.worker_id);
  for (const std::string& pool : options_.pools) request.add_pools(pool);
  request.set_slots(options_.slots);
  request.set_max_jobs(max_jobs);
  *request.mutable_wait() = internal::ToDuration(options_.lease_wait);
  // A worker waits for work, and so for a broker that is down, too: the
  // call stays pending (and keeps the connection being retried) instead of
  // failing at once. Stop() cancels it either way.
  context.set_wait_for_ready(true);
  context.set_deadline(
      internal::DeadlineIn(options_.lease_wait + options_.rpc_timeout));
  v1::LeaseResponse response;
  Status status =
      internal::FromGrpc(stub_->Lease(&context, request, &response), context);
  if (!status.ok()) return status;
  return std::vector<v1::LeasedJob>(response.jobs().begin(),
                                    response.jobs().end());
}

size_t WorkerImpl::Hand(const std::vector<v1::LeasedJob>& jobs) {
  size_t queued = 0;
  for (const v1::LeasedJob& leased : jobs) {
    ++counters_.leased;
    auto job = std::make_shared<RunningJob>(
        internal::FromLeasedJob(leased), leased.lease_token(),
        HeartbeatInterval(leased, options_.heartbeat_interval));
    // Its lease runs from now: beaten while it waits for a slot, and, if it
    // is given back, until the give-back is acknowledged.
    heartbeater_->Add(job);
    // Stop() began while the reply was on its way. (No room cannot happen,
    // as max_jobs was at most room_; it is handled the same way.)
    if (stopping_ || room_ == 0) {
      GiveBack(job);
      continue;
    }
    --room_;
    ready_.push_back(std::move(job));
    ++queued;
  }
  return queued;
}

void WorkerImpl::SlotLoop() {
  while (std::shared_ptr<RunningJob> job = NextJob()) RunJob(job);
}

// While stopping, slots still start the jobs already held (prefetched),
// until Stop()'s deadline gives back what is left.
std::shared_ptr<RunningJob> WorkerImpl::NextJob() {
  std::unique_lock<std::mutex> lock(mu_);
  job_ready_.wait(lock, [this] { return stopping_ || !ready_.empty(); });
  if (ready_.empty()) return nullptr;
  std::shared_ptr<RunningJob> job = std::move(ready_.front());
  ready_.pop_front();
  running_.insert(job);
  if (stopping_) job->context.NotifyStopping();
  return job;
}

// A settled job's heartbeats end without the slot: the heartbeat that
// found its lease lost ends them, and a give-back's acknowledgement does
// (the Reporter's `reported`), not before, so its lease holds meanwhile.
void WorkerImpl::RunJob(const std::shared_ptr<RunningJob>& job) {
  // Marked started before the check, as GiveBack settles before it reads
  // the mark: a job released as never started is never run. (Both may see
  // the other's write; then the job is not run but failed, not released,
  // which costs an attempt and nothing else.) A job settled while it
  // waited (its lease lost, or given back) is not started.
  Clock::time_point start = Clock::now();
  job->started.store(start.time_since_epoch().count());
  if (!job->settled.load()) RunHandler(job, start);
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_.erase(job);
    ++room_;
  }
  slot_freed_.notify_one();
  job_done_.notify_all();
}

void WorkerImpl::RunHandler(const std::shared_ptr<RunningJob>& job,
                            Clock::time_point start) {
  Outcome outcome = CallHandler(job->context);
  std::chrono::nanoseconds runtime = Clock::now() - start;
  if (!job->Settle()) return;  // lost, or given back at the stop deadline
  Reporter::Kind kind =
      outcome.kind() == Outcome::Kind::kSuccess ? Reporter::Kind::kSuccess
      : outcome.kind() == Outcome::Kind::kRetry ? Reporter::Kind::kRetry
                                                : Reporter::Kind::kFail;
  reporter_->Report(job, kind, outcome.error(), runtime);
}

Outcome WorkerImpl::CallHandler(JobContext& context) {
  // The handler is the user's code: its exceptions stop here.
  try {
    return handler_(context);
  } catch (const std::exception& e) {
    return Outcome::Retry(std::string("handler threw: ") + e.what());
  } catch (...) {
    return Outcome::Retry("handler threw a non-std exception");
  }
}

// A job never started is released: its attempt does not count, so a
// worker that stops cannot use up a job's attempts. One whose handler ran
// may have had effects: it is failed, with the time it has run, since it
// held the slot that long (and its handler may run on).
void WorkerImpl::GiveBack(const std::shared_ptr<RunningJob>& job,
                          const std::string& why) {
  if (!job->Settle()) return;
  ++counters_.given_back;
  job->context.Cancel();
  Clock::rep started = job->started.load();
  if (started == 0) {
    reporter_->Report(job, Reporter::Kind::kRelease,
                      "worker: job given back unstarted", {});
    return;
  }
  reporter_->Report(job, Reporter::Kind::kGiveBack, why,
                    Clock::now() - Clock::time_point(Clock::duration(started)));
}

void WorkerImpl::BeginStop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    if (lease_call_ != nullptr) lease_call_->TryCancel();
    for (const auto& job : running_) job->context.NotifyStopping();
  }
  slot_freed_.notify_all();
  job_ready_.notify_all();
  stopping_cv_.notify_all();
}

// The order matters: no new leases, then the jobs held finish (or are given
// back at the deadline), and only then the reports go out, with the
// heartbeats going on until they are acknowledged.
void WorkerImpl::DoStop() {
  BeginStop();
  if (lease_thread_.joinable()) lease_thread_.join();
  WaitForHandlers();
  for (std::thread& slot : slot_threads_) slot.join();
  reporter_.reset();  // sends what is queued, beating until acknowledged
  heartbeater_.reset();
}

void WorkerImpl::WaitForHandlers() {
  std::unique_lock<std::mutex> lock(mu_);
  Clock::time_point give_up = Clock::now() + options_.stop_timeout;
  if (job_done_.wait_until(lock, give_up, [this] {
        return running_.empty() && ready_.empty();
      })) {
    return;
  }
  // Emptied under the lock, so no slot starts one of these.
  // Their beats go on until the give-backs are acknowledged (Reporter).
  for (const auto& job : ready_) GiveBack(job);
  room_ += static_cast<uint32_t>(ready_.size());
  ready_.clear();
  for (const auto& job : running_) {
    GiveBack(job, "worker stopped: handler still running after " +
                      std::to_string(options_.stop_timeout.count()) + " ms");
  }
}

}  // namespace

StatusOr<std::unique_ptr<Worker>> Worker::Create(const std::string& address,
                                                 WorkerOptions options) {
  Status valid = Validate(options);
  if (!valid.ok()) return valid;
  return Create(internal::MakeChannel(address, options.retry),
                std::move(options));
}

StatusOr<std::unique_ptr<Worker>> Worker::Create(
    std::shared_ptr<grpc::Channel> channel, WorkerOptions options) {
  Status valid = Validate(options);
  if (!valid.ok()) return valid;
  if (channel == nullptr) return Status(Code::kInvalidArgument, "channel: null");
  if (options.worker_id.empty()) options.worker_id = DefaultWorkerId();
  return std::unique_ptr<Worker>(
      new WorkerImpl(std::move(channel), std::move(options)));
}

}  // namespace fairq::client
