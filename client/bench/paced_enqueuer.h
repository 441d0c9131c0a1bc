// PacedEnqueuer: single-job Enqueue calls issued on a fixed steady_clock
// schedule (call i at start + i * interval), through gRPC's callback API so
// that a slow reply never delays the next call. It records when each call
// was issued, by job tag, so that the worker side can compute the time from
// enqueue to lease.
//
// A call that falls behind its slot (the issuing thread was descheduled) is
// issued at once and counted as late; the schedule itself never drifts.
//
// Not thread-safe: one thread calls Run(); the accessors are for after it
// returned. Replies are handled on gRPC's callback threads internally.
#ifndef FAIRQ_CLIENT_BENCH_PACED_ENQUEUER_H_
#define FAIRQ_CLIENT_BENCH_PACED_ENQUEUER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench/bench_context.h"
#include "bench/in_flight_calls.h"
#include "bench/stats.h"

namespace fairq::bench {

struct PaceOptions {
  std::string tenant;      // a run tenant (BenchContext::Tenant)
  uint64_t first_tag = 1;  // call i enqueues tag first_tag + i
  uint64_t count = 0;      // calls to make
  std::chrono::nanoseconds interval{std::chrono::milliseconds(1)};
  double cost_seconds = -1;  // the jobs' estimate; < 0: none
  size_t channel = 0;
};

class PacedEnqueuer {
 public:
  using Clock = std::chrono::steady_clock;

  // `bench` must outlive this.
  PacedEnqueuer(const BenchContext& bench, PaceOptions options);

  // Issues the calls from `start` on, then waits (bounded by the RPC
  // deadline) for every reply. Fails if a call failed for another reason
  // than RESOURCE_EXHAUSTED, which is only counted.
  Status Run(Clock::time_point start);

  // When call i was issued (its job's tag is first_tag + i).
  const std::vector<Clock::time_point>& issued() const { return issued_; }
  uint64_t accepted() const { return calls_.replied(); }
  uint64_t refused() const { return calls_.refused(); }
  uint64_t late() const { return late_; }
  // Enqueue call latency, issue to reply, in milliseconds.
  Summary reply_ms() const { return calls_.reply_ms(); }

 private:
  struct Call;
  void Issue(uint64_t i);

  const BenchContext& bench_;
  const PaceOptions options_;
  std::unique_ptr<v1::Producer::Stub> stub_;
  std::vector<Clock::time_point> issued_;
  uint64_t late_ = 0;

  InFlightCalls calls_{"Enqueue", InFlightCalls::Refusals::kCounted};
};

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_PACED_ENQUEUER_H_
