#include "fairq/client/producer.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "client/sdk/backoff.h"
#include "client/sdk/duration_limit.h"
#include "client/sdk/grpc_util.h"
#include "fairq/v1/fairq.grpc.pb.h"

namespace fairq::client {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxBatch = 1000;  // the API's limit per EnqueueBatch

Status Invalid(const std::string& field, const std::string& rule) {
  return Status(Code::kInvalidArgument, "ProducerOptions." + field + ": " + rule);
}

Status Validate(const ProducerOptions& o) {
  if (o.max_batch < 1 || o.max_batch > kMaxBatch) {
    return Invalid("max_batch", "must be between 1 and 1000");
  }
  if (o.max_batch_bytes < 1) return Invalid("max_batch_bytes", "must be >= 1");
  if (!internal::WithinADay(o.linger)) {
    return Invalid("linger", "must be between 0 and 24 h");
  }
  if (o.max_pending < 1) return Invalid("max_pending", "must be >= 1");
  if (o.rpc_timeout.count() <= 0 || !internal::WithinADay(o.rpc_timeout)) {
    return Invalid("rpc_timeout", "must be above 0 and at most 24 h");
  }
  if (!internal::WithinADay(o.close_timeout)) {
    return Invalid("close_timeout", "must be between 0 and 24 h");
  }
  return internal::ValidateRetry(o.retry, "ProducerOptions.retry.");
}

StatusOr<EnqueueResult> ResultOf(const v1::EnqueueResult& result) {
  Status status = internal::FromEnqueueResult(result);
  if (!status.ok()) return status;
  return EnqueueResult{result.job_id(), result.duplicate()};
}

// A job waiting for its batch. `seq` numbers jobs in enqueue order, which
// is also the order batches are sent and acknowledged in.
struct PendingJob {
  uint64_t seq = 0;
  v1::JobSpec spec;
  size_t bytes = 0;
  Clock::time_point enqueued;
  Producer::Callback done;
};

class ProducerImpl final : public Producer {
 public:
  ProducerImpl(std::shared_ptr<grpc::Channel> channel, ProducerOptions options)
      : options_(std::move(options)),
        channel_(std::move(channel)),
        stub_(v1::Producer::NewStub(channel_)),
        sender_([this] { SenderLoop(); }) {}
  ~ProducerImpl() override;

  StatusOr<EnqueueResult> Enqueue(const JobSpec& job) override;
  StatusOr<EnqueueResult> Enqueue(const v1::JobSpec& job) override;
  std::future<StatusOr<EnqueueResult>> EnqueueAsync(
      const JobSpec& job) override;
  std::future<StatusOr<EnqueueResult>> EnqueueAsync(
      const v1::JobSpec& job) override;
  void EnqueueAsync(const JobSpec& job, Callback done) override;
  void EnqueueAsync(const v1::JobSpec& job, Callback done) override;
  void Flush() override;
  bool Flush(std::chrono::milliseconds timeout) override;
  ProducerStats stats() const override;

 private:
  void SenderLoop();
  // REQUIRES: mu_ held. A batch is to be sent now.
  bool BatchDue(Clock::time_point now) const;
  // REQUIRES: mu_ held, pending_ not empty. The oldest jobs, within limits.
  std::vector<PendingJob> TakeBatch();
  void SendBatch(std::vector<PendingJob>& batch);
  // Flush, waiting until `until` at most (max: no limit).
  bool FlushUntil(Clock::time_point until);
  Status WithRetry(const std::function<Status()>& attempt);
  // The deadline of an attempt begun now: rpc_timeout, cut at close_by_.
  std::chrono::system_clock::time_point AttemptDeadline() const;

  const ProducerOptions options_;
  const std::shared_ptr<grpc::Channel> channel_;
  const std::unique_ptr<v1::Producer::Stub> stub_;
  std::atomic<uint64_t> batches_{0}, jobs_sent_{0}, retries_{0};

  mutable std::mutex mu_;
  std::condition_variable work_;   // the sender waits for jobs or deadlines
  std::condition_variable acked_;  // Flush waits for acked_through_
  std::deque<PendingJob> pending_;
  size_t pending_bytes_ = 0;
  uint64_t next_seq_ = 1;
  uint64_t acked_through_ = 0;  // every job up to here has its result
  uint64_t flush_through_ = 0;  // jobs up to here go without lingering
  bool closing_ = false;
  // Set once, by the destructor: no call is begun or retried past it.
  std::atomic<Clock::time_point> close_by_{Clock::time_point::max()};
  std::thread sender_;  // last: it starts once the members above exist
};

ProducerImpl::~ProducerImpl() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
    close_by_ = Clock::now() + options_.close_timeout;
  }
  work_.notify_one();
  sender_.join();
}

StatusOr<EnqueueResult> ProducerImpl::Enqueue(const JobSpec& job) {
  StatusOr<v1::JobSpec> spec = internal::ToProto(job);
  if (!spec.ok()) return spec.status();
  return Enqueue(*spec);
}

StatusOr<EnqueueResult> ProducerImpl::Enqueue(const v1::JobSpec& job) {
  if (Status utf8 = internal::CheckUtf8(job); !utf8.ok()) return utf8;
  v1::EnqueueRequest request;
  *request.mutable_job() = job;
  v1::EnqueueResponse response;
  Status status = WithRetry([&] {
    grpc::ClientContext context;
    context.set_deadline(internal::DeadlineIn(options_.rpc_timeout));
    return internal::FromGrpc(stub_->Enqueue(&context, request, &response),
                              context);
  });
  if (!status.ok()) return status;
  return EnqueueResult{response.job_id(), response.duplicate()};
}

std::future<StatusOr<EnqueueResult>> ProducerImpl::EnqueueAsync(
    const JobSpec& job) {
  StatusOr<v1::JobSpec> spec = internal::ToProto(job);
  if (spec.ok()) return EnqueueAsync(*spec);
  std::promise<StatusOr<EnqueueResult>> refused;
  refused.set_value(spec.status());
  return refused.get_future();
}

std::future<StatusOr<EnqueueResult>> ProducerImpl::EnqueueAsync(
    const v1::JobSpec& job) {
  // std::function must be copyable; the promise is not.
  auto promise = std::make_shared<std::promise<StatusOr<EnqueueResult>>>();
  std::future<StatusOr<EnqueueResult>> future = promise->get_future();
  EnqueueAsync(job, [promise](StatusOr<EnqueueResult> result) {
    promise->set_value(std::move(result));
  });
  return future;
}

void ProducerImpl::EnqueueAsync(const JobSpec& job, Callback done) {
  StatusOr<v1::JobSpec> spec = internal::ToProto(job);
  if (!spec.ok()) {
    if (done) done(spec.status());
    return;
  }
  EnqueueAsync(*spec, std::move(done));
}

void ProducerImpl::EnqueueAsync(const v1::JobSpec& job, Callback done) {
  if (!done) done = [](StatusOr<EnqueueResult>) {};
  // Checked here, not left to the broker: its parser would refuse the
  // whole batch this job joins, other callers' jobs with it.
  Status refused = internal::CheckUtf8(job);
  if (!refused.ok()) return done(refused);
  size_t bytes = job.ByteSizeLong();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_) {
      refused = Status(Code::kFailedPrecondition, "producer: closing");
    } else if (pending_.size() >= options_.max_pending) {
      refused = Status(Code::kResourceExhausted,
                       "producer: " + std::to_string(options_.max_pending) +
                           " jobs already waiting to be sent (max_pending)");
    } else {
      pending_.push_back(
          PendingJob{next_seq_++, job, bytes, Clock::now(), std::move(done)});
      pending_bytes_ += bytes;
      // The first job sets the linger deadline; a full batch ends it.
      if (pending_.size() == 1 || BatchDue(Clock::now())) work_.notify_one();
      return;
    }
  }
  done(refused);
}

void ProducerImpl::Flush() { FlushUntil(Clock::time_point::max()); }

bool ProducerImpl::Flush(std::chrono::milliseconds timeout) {
  return FlushUntil(
      Clock::now() +
      std::clamp(timeout, std::chrono::milliseconds(0),
                 std::chrono::milliseconds(std::chrono::hours(24))));
}

bool ProducerImpl::FlushUntil(Clock::time_point until) {
  std::unique_lock<std::mutex> lock(mu_);
  uint64_t target = next_seq_ - 1;
  if (acked_through_ >= target) return true;
  flush_through_ = std::max(flush_through_, target);
  work_.notify_one();
  auto answered = [&] { return acked_through_ >= target; };
  if (until == Clock::time_point::max()) {
    acked_.wait(lock, answered);
    return true;
  }
  return acked_.wait_until(lock, until, answered);
}

ProducerStats ProducerImpl::stats() const {
  return ProducerStats{batches_.load(), jobs_sent_.load(), retries_.load()};
}

bool ProducerImpl::BatchDue(Clock::time_point now) const {
  const PendingJob& first = pending_.front();
  return closing_ || first.seq <= flush_through_ ||
         pending_.size() >= options_.max_batch ||
         pending_bytes_ >= options_.max_batch_bytes ||
         now >= first.enqueued + options_.linger;
}

// The only thread that sends batches: one batch in flight at a time keeps
// results in enqueue order and lets acked_through_ be a single counter.
void ProducerImpl::SenderLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (pending_.empty()) {
      if (closing_) return;
      work_.wait(lock);
      continue;
    }
    if (!BatchDue(Clock::now())) {
      work_.wait_until(lock, pending_.front().enqueued + options_.linger);
      continue;
    }
    std::vector<PendingJob> batch = TakeBatch();
    lock.unlock();
    SendBatch(batch);
    lock.lock();
    acked_through_ = batch.back().seq;
    acked_.notify_all();
  }
}

std::vector<PendingJob> ProducerImpl::TakeBatch() {
  std::vector<PendingJob> batch;
  size_t bytes = 0;
  // Always at least one job, however large: the broker judges its size.
  while (!pending_.empty() && batch.size() < options_.max_batch &&
         (batch.empty() ||
          bytes + pending_.front().bytes <= options_.max_batch_bytes)) {
    bytes += pending_.front().bytes;
    batch.push_back(std::move(pending_.front()));
    pending_.pop_front();
  }
  pending_bytes_ -= bytes;
  return batch;
}

void ProducerImpl::SendBatch(std::vector<PendingJob>& batch) {
  v1::EnqueueBatchRequest request;
  for (PendingJob& job : batch) *request.add_jobs() = std::move(job.spec);
  v1::EnqueueBatchResponse response;
  Status status = WithRetry([&] {
    if (Clock::now() >= close_by_.load()) {
      return Status(Code::kDeadlineExceeded,
                    "producer closed: close_timeout passed before the job "
                    "was sent");
    }
    grpc::ClientContext context;
    context.set_deadline(AttemptDeadline());
    response.Clear();
    return internal::FromGrpc(
        stub_->EnqueueBatch(&context, request, &response), context);
  });
  if (status.ok()) {
    ++batches_;
    jobs_sent_ += batch.size();
    // The broker took the batch, but which result is whose cannot be told;
    // retrying could enqueue every job twice, so the caller is told both.
    if (static_cast<size_t>(response.results_size()) != batch.size()) {
      status = Status(Code::kInternal,
                      "EnqueueBatch: fairqd accepted the batch but answered " +
                          std::to_string(response.results_size()) +
                          " results for " + std::to_string(batch.size()) +
                          " jobs; each job may be enqueued (a retry without an "
                          "idempotency key can enqueue it twice)");
    }
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    batch[i].done(status.ok() ? ResultOf(response.results(static_cast<int>(i)))
                              : StatusOr<EnqueueResult>(status));
  }
}

Status ProducerImpl::WithRetry(const std::function<Status()>& attempt) {
  return internal::CallWithRetry(
      options_.retry, attempt,
      [this](const Status& failure, int n, std::chrono::milliseconds delay) {
        // A retry that would begin past close_timeout is not made.
        if (Clock::now() + delay >= close_by_.load()) return false;
        ++retries_;
        if (options_.on_retry) options_.on_retry(failure, n, delay);
        internal::PauseReconnecting(*channel_, delay);
        return true;
      });
}

std::chrono::system_clock::time_point ProducerImpl::AttemptDeadline() const {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      close_by_.load() - Clock::now());
  return internal::DeadlineIn(
      std::clamp(left, std::chrono::milliseconds(0), options_.rpc_timeout));
}

}  // namespace

StatusOr<std::unique_ptr<Producer>> Producer::Create(const std::string& address,
                                                     ProducerOptions options) {
  Status valid = Validate(options);
  if (!valid.ok()) return valid;
  auto channel = internal::MakeChannel(address, options.retry);
  return std::unique_ptr<Producer>(
      new ProducerImpl(std::move(channel), std::move(options)));
}

StatusOr<std::unique_ptr<Producer>> Producer::Create(
    std::shared_ptr<grpc::Channel> channel, ProducerOptions options) {
  Status valid = Validate(options);
  if (!valid.ok()) return valid;
  if (channel == nullptr) return Status(Code::kInvalidArgument, "channel: null");
  return std::unique_ptr<Producer>(
      new ProducerImpl(std::move(channel), std::move(options)));
}

}  // namespace fairq::client
