#include "bench/completion_loop.h"

#include <algorithm>
#include <thread>

#include "bench/paced_schedule.h"

namespace fairq::bench {
namespace {

using Clock = CompletionLoop::Clock;
constexpr std::chrono::milliseconds kCheckEvery{100};

// gRPC's deadlines take the system clock or gRPC's own monotonic one.
gpr_timespec Monotonic(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::microseconds>(
      deadline - Clock::now());
  return gpr_time_add(
      gpr_now(GPR_CLOCK_MONOTONIC),
      gpr_time_from_micros(std::max<int64_t>(0, left.count()), GPR_TIMESPAN));
}

}  // namespace

CompletionLoop::~CompletionLoop() {
  cq_.Shutdown();
  void* tag;
  bool ok;
  while (cq_.Next(&tag, &ok)) delete static_cast<Call*>(tag);
}

void CompletionLoop::ServeUntil(const std::function<bool()>& done,
                                Clock::time_point deadline) {
  while (!done() && Clock::now() < deadline) {
    Next(std::min(deadline, Clock::now() + kCheckEvery));
  }
}

Status CompletionLoop::Drain(Clock::time_point deadline) {
  while (in_flight_.load() > 0 && Clock::now() < deadline) Next(deadline);
  if (in_flight_.load() == 0) return Status::Ok();
  return Unavailable("replies missing after their deadline");
}

void CompletionLoop::Next(Clock::time_point deadline) {
  void* tag;
  bool ok;  // always true for a client's Finish: the outcome is the status
  if (cq_.AsyncNext(&tag, &ok, Monotonic(deadline)) !=
      grpc::CompletionQueue::GOT_EVENT) {
    return;
  }
  std::unique_ptr<Call> call(static_cast<Call*>(tag));
  call->Done();
  in_flight_.fetch_sub(1);
}

uint64_t ServePaced(CompletionLoop& loop, Clock::time_point start,
                    uint64_t count, std::chrono::nanoseconds interval,
                    const std::function<void(uint64_t)>& issue,
                    const std::function<bool()>& done,
                    Clock::time_point give_up) {
  uint64_t late = 0;
  std::thread pacer([&] { late = RunPaced(start, count, interval, issue); });
  loop.ServeUntil(done, give_up);
  pacer.join();
  return late;
}

}  // namespace fairq::bench
