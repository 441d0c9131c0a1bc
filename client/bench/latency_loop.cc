#include "bench/latency_loop.h"

#include "bench/job_ops.h"

namespace fairq::bench {

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
  issued_.reserve(options_.count);
  arrivals_.reserve(options_.count);
  if (options_.sdk_workers) {
    if (Status started = StartSdkWorkers(); !started.ok()) {
      StopSdkWorkers();
      return started;
    }
  } else {
    for (size_t w = 0; w < options_.workers; ++w) Poll(w);
  }
  // After a failure the loop serves on until every Enqueue the pacer issues
  // is answered, so that none is left behind.
  late_ = ServePaced(
      loop_, start, options_.count, options_.interval,
      [this](uint64_t i) { IssueEnqueue(i); },
      [this] {
        return Finished() ||
               (Answered() && (!first_error_.ok() || SdkFailed()));
      },
      give_up);
  StopSdkWorkers();
  EndCalls();
  return first_error_;
}

Status LatencyLoop::StartSdkWorkers() {
  for (size_t w = 0; w < options_.workers; ++w) {
    client::WorkerOptions options;
    options.worker_id = worker_ids_[w];
    options.slots = options_.slots;
    options.lease_wait = std::chrono::milliseconds(
        static_cast<int64_t>(options_.lease_wait_seconds * 1000));
    options.on_error = [this](const client::Status& error) {
      std::lock_guard<std::mutex> lock(arrivals_mu_);
      if (sdk_error_.ok()) {
        sdk_error_ =
            Status(StatusCode::kInternal, "worker: " + error.ToString());
      }
    };
    auto worker = StartSdkWorker(
        bench_, w, std::move(options), [this](client::JobContext& job) {
          Arrived(PayloadTag(job.payload()), Clock::now());
          return client::Outcome::Success();
        });
    if (!worker.ok()) return worker.status();
    sdk_workers_.push_back(std::move(*worker));
  }
  return Status::Ok();
}

// Stop() sends the reports still queued before it returns.
void LatencyLoop::StopSdkWorkers() {
  for (auto& worker : sdk_workers_) worker->Stop();
  std::lock_guard<std::mutex> lock(arrivals_mu_);
  if (first_error_.ok()) first_error_ = sdk_error_;
}

void LatencyLoop::Arrived(uint64_t tag, Clock::time_point at) {
  std::lock_guard<std::mutex> lock(arrivals_mu_);
  arrivals_.emplace_back(tag, at);
}

bool LatencyLoop::SdkFailed() {
  std::lock_guard<std::mutex> lock(arrivals_mu_);
  return !sdk_error_.ok();
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
  v1::LeaseRequest request =
      MakeLeaseRequest(bench_, worker_ids_[worker], options_.slots,
                       options_.slots, options_.lease_wait_seconds);
  bench_.SetDeadline(call->context, options_.lease_wait_seconds);
  polls_[worker] = call;
  loop_.Start(call, workers_[worker]->PrepareAsyncLease(&call->context, request,
                                                        loop_.queue()));
}

void LatencyLoop::Complete(const v1::LeaseResponse& leased) {
  for (const v1::LeasedJob& job : leased.jobs()) {
    AddCompletion(unsent_, job.job().id(), job.lease_token(),
                  std::chrono::nanoseconds(0));
  }
  if (!reporting_) SendCompletions();
}

void LatencyLoop::SendCompletions() {
  auto* call = new CompleteCall(this);
  v1::CompleteRequest request = TakeCompletions(unsent_);
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
    Arrived(PayloadTag(leased.job().spec().payload()), now);
  }
  if (call.response.jobs_size() > 0) Complete(call.response);
}

void LatencyLoop::Completed(const CompleteCall& call) {
  reporting_ = false;
  if (!call.status.ok()) Fail(call.status, "Complete");
  if (unsent_.completions_size() > 0) SendCompletions();
}

bool LatencyLoop::Answered() const { return answered_ == options_.count; }

bool LatencyLoop::Finished() {
  if (!Answered()) return false;
  std::lock_guard<std::mutex> lock(arrivals_mu_);
  return arrivals_.size() >= accepted();
}

void LatencyLoop::EndCalls() {
  stopping_ = true;
  for (LeaseCall* poll : polls_) {
    if (poll != nullptr) poll->context.TryCancel();
  }
  Status drained = loop_.Drain(
      SecondsFromNow(bench_.rpc_timeout() + options_.lease_wait_seconds + 5));
  if (first_error_.ok()) first_error_ = drained;
}

void LatencyLoop::Fail(const grpc::Status& status, std::string_view rpc) {
  if (first_error_.ok()) first_error_ = FromGrpc(status, rpc);
}

}  // namespace fairq::bench
