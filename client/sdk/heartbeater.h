// Heartbeater: extends the leases of the jobs a worker holds (running or
// prefetched), each every its heartbeat_interval (from the lease length of
// the last answer: a broker restart may have changed it), and passes the
// broker's yield flag to the job's context. A heartbeat that finds the lease
// gone settles the job as lost and cancels its context.
//
// Heartbeats of different jobs are in flight at once (gRPC's callback
// API), at most one per job: a slow answer for one job does not delay the
// others' and let their leases lapse. Answers are handled on the
// heartbeat thread, which alone runs on_error for them. Add and Remove are
// thread-safe.
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
#include <vector>

#include "client/sdk/worker_internal.h"
#include "fairq/v1/fairq.grpc.pb.h"

namespace fairq::client::internal {

class Heartbeater {
 public:
  // `stub`, `options` and `counters` must outlive this.
  Heartbeater(v1::Worker::Stub* stub, const WorkerOptions* options,
              Counters* counters);
  // Cancels the heartbeats in flight, waits for their answers (which are
  // dropped) and stops the thread; no heartbeat is sent afterwards.
  ~Heartbeater();

  // First heartbeat one interval from now (for a job already here whose
  // heartbeat is in flight: one interval after its answer).
  void Add(std::shared_ptr<RunningJob> job);
  // No further heartbeat is sent for `job` once this returns, except the
  // one that may be in flight, whose answer is then dropped.
  void Remove(const RunningJob* job);

 private:
  using Clock = std::chrono::steady_clock;
  struct Call;  // one Heartbeat RPC and what it answers for

  struct Entry {
    std::shared_ptr<RunningJob> job;
    Clock::time_point due;
    const Call* call = nullptr;  // in flight; then it has no place in `due_`
    // The grant's pace, then the one the last answer's lease length sets.
    std::chrono::milliseconds interval{0};
  };

  void Loop();
  // Waits on `changed_` until `until` (max: until signalled), with
  // `wakes_at_` telling Add meanwhile whether a new beat needs a wake-up.
  void SleepUntil(Clock::time_point until, std::unique_lock<std::mutex>& lock);
  // Sends the heartbeat of `key`'s job; called with `lock` held, which it
  // releases while the call starts.
  void Send(const RunningJob* key, std::unique_lock<std::mutex>& lock);
  // Runs on a gRPC thread: hands the answered call to the heartbeat thread.
  void Finished(Call* call);
  // Handles answered calls; called with `lock` held, which it releases
  // while each answer is acted on.
  void HandleFinished(std::unique_lock<std::mutex>& lock);
  // Acts on one answer. Returns false when the lease is gone.
  bool Handle(Call& call);
  // Cancels the calls in flight and waits until every one is answered.
  void CancelInFlight(std::unique_lock<std::mutex>& lock);

  v1::Worker::Stub* const stub_;
  const WorkerOptions* const options_;
  Counters* const counters_;

  std::mutex mu_;
  // Signalled by an Add due before `wakes_at_`, by an answered call and by
  // the destructor.
  std::condition_variable changed_;
  // When the loop's sleep ends: max while it sleeps until signalled, min
  // while it is awake (it looks at `due_` before it sleeps again).
  Clock::time_point wakes_at_ = Clock::time_point::min();
  // Invariant: `due_` holds one (time, job) for each entry of `jobs_` that
  // is not in flight.
  std::map<const RunningJob*, Entry> jobs_;
  std::set<std::pair<Clock::time_point, const RunningJob*>> due_;
  // Calls are owned here until the heartbeat thread has handled them.
  std::map<const Call*, std::unique_ptr<Call>> in_flight_;
  std::vector<std::unique_ptr<Call>> finished_;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace fairq::client::internal

#endif  // FAIRQ_CLIENT_SDK_HEARTBEATER_H_
