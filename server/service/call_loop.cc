#include "server/service/call_loop.h"

#include <pthread.h>

#include <algorithm>
#include <cstdint>

namespace fairq::server {
namespace {

// Calls of one method gRPC may hold matched before the loop asks again.
constexpr int kRequestsPerMethod = 4;

// Handlers waiting for the store-reads thread; beyond this their calls get
// RESOURCE_EXHAUSTED, as commands do when the dispatcher's queue is full.
constexpr size_t kReadsQueueCapacity = 1024;

// Events handled per Collect, so that a burst of calls becomes several
// turns rather than one that keeps every answer waiting.
constexpr int kEventsPerCollect = 256;

gpr_timespec Until(
    std::optional<std::chrono::steady_clock::time_point> deadline) {
  if (!deadline) return gpr_inf_future(GPR_CLOCK_MONOTONIC);
  int64_t left_us = std::max<int64_t>(
      0, std::chrono::duration_cast<std::chrono::microseconds>(
             *deadline - std::chrono::steady_clock::now())
             .count());
  return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                      gpr_time_from_micros(left_us, GPR_TIMESPAN));
}

}  // namespace

CallLoop::CallLoop(std::unique_ptr<grpc::ServerCompletionQueue> cq)
    : cq_(std::move(cq)), reads_(kReadsQueueCapacity) {
  reads_thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "fairq-rpc-reads");
    RunReads();
  });
}

CallLoop::~CallLoop() { Shutdown(); }

Offload CallLoop::offload() {
  return [this](std::function<void()> handler) {
    switch (reads_.Push(std::move(handler))) {
      case CommandQueue<std::function<void()>>::PushResult::kOk:
        return grpc::Status::OK;
      case CommandQueue<std::function<void()>>::PushResult::kFull:
        return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                            "rpc reads: queue full; retry after a short "
                            "backoff");
      case CommandQueue<std::function<void()>>::PushResult::kClosed:
        break;
    }
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        "fairqd is shutting down");
  };
}

void CallLoop::Start() {
  for (int i = 0; i < kRequestsPerMethod; ++i) {
    for (const auto& request : first_requests_) request();
  }
}

void CallLoop::Collect(
    std::optional<std::chrono::steady_clock::time_point> deadline) {
  void* tag;
  bool ok;
  auto got = cq_->AsyncNext(&tag, &ok, Until(deadline));
  for (int n = 0; got == grpc::CompletionQueue::GOT_EVENT; ++n) {
    static_cast<CallEvent*>(tag)->Happened(ok);
    if (n + 1 == kEventsPerCollect) return;
    got = cq_->AsyncNext(&tag, &ok, gpr_time_0(GPR_CLOCK_MONOTONIC));
  }
}

// The flag keeps one alarm in flight: gRPC allows an Alarm to be set again
// only once it has fired. A Kick that finds it set is covered by the alarm
// already coming, which fires after the Kick's command was queued.
// Kicks come from the few handlers off the loop thread (store reads,
// metrics scrapes, reloads), so the lock costs little; it keeps a late one
// from setting an alarm on a queue already shut down.
void CallLoop::Kick() {
  if (kicked_.exchange(true)) return;
  std::lock_guard lock(kick_mu_);
  if (open_) alarm_.Set(cq_.get(), gpr_time_0(GPR_CLOCK_MONOTONIC), &kick_);
}

void CallLoop::Drain() {
  drain_thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "fairq-rpc-drain");
    void* tag;
    bool ok;
    while (cq_->Next(&tag, &ok)) static_cast<CallEvent*>(tag)->Happened(ok);
  });
}

void CallLoop::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  reads_.Close();
  if (reads_thread_.joinable()) reads_thread_.join();
  {
    std::lock_guard lock(kick_mu_);
    open_ = false;
  }
  cq_->Shutdown();
  if (!drain_thread_.joinable()) Drain();
  drain_thread_.join();
}

void CallLoop::RunReads() {
  std::vector<std::function<void()>> handlers;
  while (reads_.PopAll(std::nullopt, &handlers)) {
    for (auto& handler : handlers) handler();
    handlers.clear();
  }
}

}  // namespace fairq::server
