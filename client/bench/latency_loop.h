// LatencyLoop: the `latency` scenario's client. Single-job Enqueue calls go
// out on a steady_clock schedule from a pacer thread, while `workers`
// workers wait in long-poll Lease calls; every reply is handled on one
// thread (CompletionLoop). A Lease reply is stamped, its worker polls again
// at once, and its jobs are completed in the background as the SDK's
// Reporter does: one Complete call at a time, carrying every completion
// that queued up while the previous one was in flight.
// With `sdk_workers` the workers are the SDK's own `Worker`s instead, and a
// job arrives when its handler starts: what an application on the SDK sees.
//
// Not thread-safe: one thread calls Run(); the accessors are for after it
// returned. Inside Run(), arrivals come from the loop thread or from the
// SDK workers' handler threads, hence their lock.
#ifndef FAIRQ_CLIENT_BENCH_LATENCY_LOOP_H_
#define FAIRQ_CLIENT_BENCH_LATENCY_LOOP_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "bench/bench_context.h"
#include "bench/completion_loop.h"
#include "bench/stats.h"
#include "fairq/client/worker.h"

namespace fairq::bench {

struct LatencyOptions {
  std::string tenant;  // a run tenant (BenchContext::Tenant); tags 1..count
  uint64_t count = 0;  // Enqueue calls to make
  std::chrono::nanoseconds interval{std::chrono::milliseconds(1)};
  size_t workers = 4;   // worker w polls on channel w
  uint32_t slots = 16;  // slots and max_jobs per Lease
  double lease_wait_seconds = 1;
  // SDK Workers with `slots` slots each instead of the loop's own polls.
  bool sdk_workers = false;
};

class LatencyLoop {
 public:
  using Clock = CompletionLoop::Clock;
  // A leased job's tag and when the Lease reply carrying it was read (with
  // SDK workers: when its handler started).
  using Arrival = std::pair<uint64_t, Clock::time_point>;

  // `bench` must outlive this.
  LatencyLoop(const BenchContext& bench, LatencyOptions options);

  // Starts the workers (polls or SDK Workers), issues the Enqueues from
  // `start` on, and serves replies until every accepted job arrived or
  // `bound_seconds` passed (jobs not leased by then only count as such);
  // then stops the workers and ends every call. Returns the first error: a
  // failed call, other than an Enqueue refused with RESOURCE_EXHAUSTED (only
  // counted), or an SDK worker's on_error.
  Status Run(Clock::time_point start, double bound_seconds);

  // When Enqueue i was issued (its job's tag is i + 1).
  const std::vector<Clock::time_point>& issued() const { return issued_; }
  const std::vector<Arrival>& arrivals() const { return arrivals_; }
  uint64_t accepted() const { return enqueue_ms_.size(); }
  uint64_t refused() const { return refused_; }
  uint64_t late() const { return late_; }
  // Enqueue call latency, issue to reply, in milliseconds.
  Summary reply_ms() const { return Summarize(enqueue_ms_); }

 private:
  struct EnqueueCall;
  struct LeaseCall;
  struct CompleteCall;

  // Each on its own channel, as the loop's workers are.
  Status StartSdkWorkers();
  void StopSdkWorkers();
  // Any thread: the job tagged `tag` reached its worker at `at`.
  void Arrived(uint64_t tag, Clock::time_point at);
  // An SDK worker reported an error through on_error.
  bool SdkFailed();
  // Pacer thread.
  void IssueEnqueue(uint64_t i);
  // Loop thread, from here on.
  void Poll(size_t worker);
  // Queues the completions of `leased`; sends them unless a call is out.
  void Complete(const v1::LeaseResponse& leased);
  void SendCompletions();
  void Enqueued(const EnqueueCall& call);
  void Leased(LeaseCall& call);
  void Completed(const CompleteCall& call);
  // Every Enqueue answered.
  bool Answered() const;
  // That, and every accepted job leased.
  bool Finished();
  // Cancels the polls and waits for every call in flight to end.
  void EndCalls();
  void Fail(const grpc::Status& status, std::string_view rpc);

  const BenchContext& bench_;
  const LatencyOptions options_;
  CompletionLoop loop_;
  std::unique_ptr<v1::Producer::Stub> producer_;  // on channel `workers`
  std::unique_ptr<v1::Worker::Stub> reporter_;    // Complete, the next one
  std::vector<std::unique_ptr<v1::Worker::Stub>> workers_;
  std::vector<std::string> worker_ids_;

  // The pacer thread's while it runs; read once it is joined.
  std::vector<Clock::time_point> issued_;
  uint64_t late_ = 0;

  // Loop thread only.
  std::vector<LeaseCall*> polls_;  // each worker's Lease in flight, or null
  bool stopping_ = false;          // no more polls
  uint64_t answered_ = 0;          // Enqueue replies, of every outcome
  uint64_t refused_ = 0;
  v1::CompleteRequest unsent_;  // completions queued behind `reporting_`
  bool reporting_ = false;      // a Complete call is in flight
  std::vector<double> enqueue_ms_;
  Status first_error_;

  std::mutex arrivals_mu_;
  std::vector<Arrival> arrivals_;  // guarded by arrivals_mu_ inside Run()
  Status sdk_error_;  // guarded by arrivals_mu_: the first on_error
  // Last: destroyed first, so that no handler outlives what it records to.
  std::vector<std::unique_ptr<client::Worker>> sdk_workers_;
};

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_LATENCY_LOOP_H_
