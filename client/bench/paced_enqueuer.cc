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
  return calls_.WaitForAll(bench_.rpc_timeout() + 5);
}

void PacedEnqueuer::Issue(uint64_t i) {
  auto* call = new Call;
  *call->request.mutable_job() = MakeJob(
      bench_, options_.tenant, options_.first_tag + i, options_.cost_seconds);
  bench_.SetDeadline(call->context);
  calls_.Started();
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
  if (status.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    reply_ms_.push_back(ms);
  }
  // Refusals are counted, not failures: they are the broker's back-pressure.
  const bool failed = !status.ok() && status.error_code() !=
                                          grpc::StatusCode::RESOURCE_EXHAUSTED;
  calls_.Finished(failed ? FromGrpc(status, "Enqueue") : Status::Ok());
}

Summary PacedEnqueuer::reply_ms() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Summarize(reply_ms_);
}

}  // namespace fairq::bench
