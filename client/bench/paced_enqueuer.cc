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
  stub_->async()->Enqueue(&call->context, &call->request, &call->response,
                          [this, call](grpc::Status status) {
                            calls_.Finish(std::unique_ptr<Call>(call), status);
                          });
}

}  // namespace fairq::bench
