#include "bench/completer.h"

#include "bench/job_ops.h"

namespace fairq::bench {

Completer::Completer(const BenchContext& bench, size_t channel,
                     SentCallback sent)
    : bench_(bench),
      stub_(bench.Worker(channel)),
      sent_(std::move(sent)),
      thread_([this] { Loop(); }) {}

Completer::~Completer() { (void)Close(); }

void Completer::Add(uint64_t job_id, uint64_t token,
                    std::chrono::nanoseconds runtime) {
  std::lock_guard<std::mutex> lock(mu_);
  AddCompletion(pending_, job_id, token, runtime);
  queued_.notify_one();
}

void Completer::WaitAtMost(size_t count) {
  std::unique_lock<std::mutex> lock(mu_);
  drained_.wait(lock, [&] {
    return in_call_ + static_cast<size_t>(pending_.completions_size()) <= count;
  });
}

Status Completer::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
    queued_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  return first_error_;
}

uint64_t Completer::completed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return completed_;
}

// Ends once closing and nothing is queued; every pass sends at least one
// completion, so it ends after the last Add().
void Completer::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    queued_.wait(
        lock, [this] { return closing_ || pending_.completions_size() > 0; });
    if (pending_.completions_size() == 0) return;  // closing, all sent
    v1::CompleteRequest request = TakeCompletions(pending_);
    in_call_ = static_cast<size_t>(request.completions_size());
    lock.unlock();
    Send(request);
    lock.lock();
    in_call_ = 0;
    drained_.notify_all();
  }
}

void Completer::Send(const v1::CompleteRequest& request) {
  grpc::ClientContext context;
  bench_.SetDeadline(context);
  v1::AckResponse response;
  auto call = std::chrono::steady_clock::now();
  grpc::Status status = stub_->Complete(&context, request, &response);
  double call_ms = MillisSince(call);
  Status outcome = status.ok() ? Status::Ok() : FromGrpc(status, "Complete");
  size_t accepted = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!outcome.ok() && first_error_.ok()) first_error_ = outcome;
    for (const v1::AckResult& result : response.results()) {
      if (result.code() == 0) ++accepted;
    }
    completed_ += accepted;
  }
  if (sent_) sent_(outcome, accepted, call_ms);
}

}  // namespace fairq::bench
