#include "bench/paced_enqueuer.h"

#include "bench/job_ops.h"
#include "bench/paced_schedule.h"

namespace fairq::bench {

// One Enqueue in flight; deleted by its reply callback.
struct PacedEnqueuer::Call {
  grpc::ClientContext context;
  v1::EnqueueRequest request;
  v1::EnqueueResponse response;
  Clock::time_point issued;
};

PacedEnqueuer::PacedEnqueuer(const BenchContext& bench, PaceOptions options)
    : bench_(bench),
      options_(std::move(options)),
      stub_(bench.Producer(options_.channel)) {}

Status PacedEnqueuer::Run(Clock::time_point start) {
  issued_.reserve(options_.count);
  late_ = RunPaced(start, options_.count, options_.interval,
                   [this](uint64_t i) { Issue(i); });
  // Every call has a deadline, so every callback runs before this one.
  auto give_up = Clock::now() +
                 std::chrono::duration_cast<Clock::duration>(
                     std::chrono::duration<double>(bench_.rpc_timeout() + 5));
  std::unique_lock<std::mutex> lock(mu_);
  if (!replied_.wait_until(lock, give_up, [this] { return in_flight_ == 0; })) {
    return Unavailable("Enqueue: replies missing after their deadline");
  }
  return first_error_;
}

void PacedEnqueuer::Issue(uint64_t i) {
  auto* call = new Call;
  *call->request.mutable_job() = MakeJob(
      bench_, options_.tenant, options_.first_tag + i, options_.cost_seconds);
  bench_.SetDeadline(call->context);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++in_flight_;
  }
  call->issued = Clock::now();
  issued_.push_back(call->issued);
  stub_->async()->Enqueue(
      &call->context, &call->request, &call->response,
      [this, call](grpc::Status status) { Finished(call, status); });
}

void PacedEnqueuer::Finished(Call* call, const grpc::Status& status) {
  double ms = SecondsSince(call->issued) * 1000;
  std::unique_ptr<Call> owned(call);
  if (status.ok()) {
    accepted_.fetch_add(1);
  } else if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
    refused_.fetch_add(1);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (status.ok()) reply_ms_.push_back(ms);
  if (!status.ok() &&
      status.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED &&
      first_error_.ok()) {
    first_error_ = FromGrpc(status, "Enqueue");
  }
  --in_flight_;
  replied_.notify_all();
}

Summary PacedEnqueuer::reply_ms() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Summarize(reply_ms_);
}

}  // namespace fairq::bench
