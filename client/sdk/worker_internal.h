// What the worker's threads share: one RunningJob per leased job, the
// counters behind WorkerStats, and the error callback.
//
// RunningJob is shared by its slot thread, the heartbeat thread and Stop();
// its mutable state is atomic. Counters are atomic.
#ifndef FAIRQ_CLIENT_SDK_WORKER_INTERNAL_H_
#define FAIRQ_CLIENT_SDK_WORKER_INTERNAL_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <utility>

#include "fairq/client/job_context.h"
#include "fairq/client/worker.h"

namespace fairq::client::internal {

// How often to beat for a lease of `lease`: `configured` when set, else a
// third of the lease, at least 50 ms (below that a worker would flood the
// broker; it also guards against a lease deadline that clock skew puts in
// the past).
inline std::chrono::milliseconds BeatEvery(
    std::chrono::milliseconds lease, std::chrono::milliseconds configured) {
  constexpr std::chrono::milliseconds kMinHeartbeat{50};
  if (configured.count() > 0) return configured;
  return std::max(lease / 3, kMinHeartbeat);
}

struct RunningJob {
  RunningJob(LeasedJobInfo info, uint64_t lease_token,
             std::chrono::milliseconds beat_every)
      : context(std::move(info)),
        token(lease_token),
        heartbeat_interval(beat_every) {}

  // True for the first caller only. The lease is settled once: by the slot
  // reporting the handler's outcome, by a heartbeat finding the lease gone,
  // or by Stop() giving the job back; whoever comes later leaves it alone.
  bool Settle() { return !settled.exchange(true); }

  // When a slot took the job to run, on the steady clock's count; 0 before.
  // Written by the slot, read by Stop() giving the job back at its deadline:
  // 0 there means the handler never runs (WorkerImpl::RunJob).
  std::atomic<std::chrono::steady_clock::rep> started{0};
  JobContext context;
  const uint64_t token;
  // The configured interval, else as the grant's lease length asks; the
  // Heartbeater then follows the length each heartbeat's answer gives.
  const std::chrono::milliseconds heartbeat_interval;
  std::atomic<bool> settled{false};
};

struct Counters {
  std::atomic<uint64_t> leased{0}, succeeded{0}, retried{0}, failed{0},
      given_back{0}, lost_leases{0}, heartbeats{0}, report_errors{0};

  WorkerStats Snapshot() const {
    return WorkerStats{leased.load(),      succeeded.load(),
                       retried.load(),     failed.load(),
                       given_back.load(),  lost_leases.load(),
                       heartbeats.load(),  report_errors.load()};
  }
};

inline void ReportError(const WorkerOptions& options, const Status& status) {
  if (options.on_error) options.on_error(status);
}

// The worker each of its threads belongs to, named by its options (one
// object per worker), so that Stop() can tell a call from the worker's own
// threads (a handler, or on_error), which it must not join, from any other.
inline thread_local const WorkerOptions* worker_of_this_thread = nullptr;

}  // namespace fairq::client::internal

#endif  // FAIRQ_CLIENT_SDK_WORKER_INTERNAL_H_
