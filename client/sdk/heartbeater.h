// Heartbeater: one thread that extends the leases of the jobs a worker
// holds (running or prefetched), each every its heartbeat_interval, and
// passes the broker's yield flag to the job's context. A heartbeat that
// finds the lease gone settles the job as lost and cancels its context.
//
// Add and Remove are thread-safe; heartbeats are sent one at a time.
#ifndef FAIRQ_CLIENT_SDK_HEARTBEATER_H_
#define FAIRQ_CLIENT_SDK_HEARTBEATER_H_

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "client/sdk/worker_internal.h"
#include "fairq/v1/fairq.grpc.pb.h"

namespace fairq::client::internal {

class Heartbeater {
 public:
  // `stub`, `options` and `counters` must outlive this.
  Heartbeater(v1::Worker::Stub* stub, const WorkerOptions* options,
              Counters* counters);
  ~Heartbeater();  // stops the thread; no heartbeat is sent afterwards

  // First heartbeat one interval from now.
  void Add(std::shared_ptr<RunningJob> job);
  // No further heartbeat is sent for `job` once this returns, except the
  // one that may be in flight.
  void Remove(const RunningJob* job);

 private:
  using Clock = std::chrono::steady_clock;

  void Loop();
  // Returns false when the lease is gone.
  bool Beat(RunningJob& job);

  v1::Worker::Stub* const stub_;
  const WorkerOptions* const options_;
  Counters* const counters_;

  std::mutex mu_;
  std::condition_variable changed_;
  // Invariant: `due_` holds exactly one (time, job) per entry of `jobs_`.
  std::map<const RunningJob*, std::pair<std::shared_ptr<RunningJob>,
                                        Clock::time_point>>
      jobs_;
  std::set<std::pair<Clock::time_point, const RunningJob*>> due_;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace fairq::client::internal

#endif  // FAIRQ_CLIENT_SDK_HEARTBEATER_H_
