#include "bench/latency_loop.h"

#include <algorithm>

#include "bench/job_ops.h"
#include "google/protobuf/util/time_util.h"

namespace fairq::bench {

using google::protobuf::util::TimeUtil;

struct LatencyLoop::EnqueueCall final
    : CompletionLoop::UnaryCall<v1::EnqueueResponse> {
  explicit EnqueueCall(LatencyLoop* l) : loop(l) {}
  void Done() override { loop->Enqueued(*this); }
  LatencyLoop* loop;
  Clock::time_point issued;
};

struct LatencyLoop::LeaseCall final
    : CompletionLoop::UnaryCall<v1::LeaseResponse> {
  LeaseCall(LatencyLoop* l, size_t w) : loop(l), worker(w) {}
  void Done() override { loop->Leased(*this); }
  LatencyLoop* loop;
  size_t worker;
};

struct LatencyLoop::CompleteCall final
    : CompletionLoop::UnaryCall<v1::AckResponse> {
  explicit CompleteCall(LatencyLoop* l) : loop(l) {}
  void Done() override { loop->Completed(*this); }
  LatencyLoop* loop;
};

LatencyLoop::LatencyLoop(const BenchContext& bench, LatencyOptions options)
    : bench_(bench),
      options_(std::move(options)),
      producer_(bench.Producer(options_.workers)),
      reporter_(bench.Worker(options_.workers + 1)),
      polls_(options_.workers, nullptr) {
  for (size_t w = 0; w < options_.workers; ++w) {
    workers_.push_back(bench.Worker(w));
    worker_ids_.push_back(bench.run_id() + "-lat" + std::to_string(w));
  }
}

Status LatencyLoop::Run(Clock::time_point start, double bound_seconds) {
  Clock::time_point give_up = SecondsFromNow(bound_seconds);
  for (size_t w = 0; w < options_.workers; ++w) Poll(w);
  issued_.reserve(options_.count);
  // After a failure the loop serves on until every Enqueue the pacer issues
  // is answered, so that none is left behind.
  late_ = ServePaced(
      loop_, start, options_.count, options_.interval,
      [this](uint64_t i) { IssueEnqueue(i); },
      [this] { return Finished() || (Answered() && !first_error_.ok()); },
      give_up);
  EndCalls();
  return first_error_;
}

void LatencyLoop::IssueEnqueue(uint64_t i) {
  auto* call = new EnqueueCall(this);
  v1::EnqueueRequest request;
  *request.mutable_job() = MakeJob(bench_, options_.tenant, i + 1);
  bench_.SetDeadline(call->context);
  call->issued = Clock::now();
  issued_.push_back(call->issued);
  loop_.Start(call, producer_->PrepareAsyncEnqueue(&call->context, request,
                                                   loop_.queue()));
}

void LatencyLoop::Poll(size_t worker) {
  auto* call = new LeaseCall(this, worker);
  v1::LeaseRequest request;
  request.set_worker_id(worker_ids_[worker]);
  request.add_pools(bench_.pool());
  request.set_slots(options_.slots);
  request.set_max_jobs(options_.slots);
  *request.mutable_wait() = TimeUtil::MillisecondsToDuration(
      static_cast<int64_t>(options_.lease_wait_seconds * 1000));
  bench_.SetDeadline(call->context, options_.lease_wait_seconds);
  polls_[worker] = call;
  loop_.Start(call, workers_[worker]->PrepareAsyncLease(&call->context, request,
                                                        loop_.queue()));
}

void LatencyLoop::Complete(const v1::LeaseResponse& leased) {
  for (const v1::LeasedJob& job : leased.jobs()) {
    v1::Completion* completion = unsent_.add_completions();
    completion->set_job_id(job.job().id());
    completion->set_lease_token(job.lease_token());
    *completion->mutable_runtime() = TimeUtil::NanosecondsToDuration(0);
  }
  if (!reporting_) SendCompletions();
}

// At most kFillBatch a call, the broker's limit.
void LatencyLoop::SendCompletions() {
  auto* call = new CompleteCall(this);
  v1::CompleteRequest request;
  auto* unsent = unsent_.mutable_completions();
  const int count = std::min(unsent->size(), static_cast<int>(kFillBatch));
  for (int i = 0; i < count; ++i) {
    request.add_completions()->Swap(unsent->Mutable(i));
  }
  unsent->DeleteSubrange(0, count);
  bench_.SetDeadline(call->context);
  reporting_ = true;
  loop_.Start(call, reporter_->PrepareAsyncComplete(&call->context, request,
                                                    loop_.queue()));
}

void LatencyLoop::Enqueued(const EnqueueCall& call) {
  ++answered_;
  if (call.status.ok()) {
    enqueue_ms_.push_back(MillisSince(call.issued));
  } else if (call.status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
    ++refused_;
  } else {
    Fail(call.status, "Enqueue");
  }
}

void LatencyLoop::Leased(LeaseCall& call) {
  Clock::time_point now = Clock::now();
  polls_[call.worker] = nullptr;
  if (!call.status.ok()) {
    if (!stopping_) Fail(call.status, "Lease");
    return;
  }
  if (!stopping_) Poll(call.worker);
  for (const v1::LeasedJob& leased : call.response.jobs()) {
    arrivals_.emplace_back(PayloadTag(leased.job().spec().payload()), now);
  }
  if (call.response.jobs_size() > 0) Complete(call.response);
}

void LatencyLoop::Completed(const CompleteCall& call) {
  reporting_ = false;
  if (!call.status.ok()) Fail(call.status, "Complete");
  if (unsent_.completions_size() > 0) SendCompletions();
}

bool LatencyLoop::Answered() const { return answered_ == options_.count; }

bool LatencyLoop::Finished() const {
  return Answered() && arrivals_.size() >= accepted();
}

void LatencyLoop::EndCalls() {
  stopping_ = true;
  for (LeaseCall* poll : polls_) {
    if (poll != nullptr) poll->context.TryCancel();
  }
  if (!loop_.Drain(SecondsFromNow(bench_.rpc_timeout() +
                                  options_.lease_wait_seconds + 5)) &&
      first_error_.ok()) {
    first_error_ = Unavailable("latency: replies missing after their deadline");
  }
}

void LatencyLoop::Fail(const grpc::Status& status, std::string_view rpc) {
  if (first_error_.ok()) first_error_ = FromGrpc(status, rpc);
}

}  // namespace fairq::bench
