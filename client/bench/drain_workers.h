// DrainWorkers: worker slots that do no work. Each of `workers` threads is
// one worker with `slots_per_worker` slots: it leases up to that many jobs
// from the run's pool (long poll), completes them all in one Complete call
// (runtime zero), and repeats. With background reports, each worker hands
// its completions to a Completer of its own and leases again while they are
// sent, as the SDK's Worker does; it waits only while a second lease's
// worth is still unsent. The cycle and backlog scenarios measure the
// broker's lease + complete rate with it.
//
// Thread-safe: Run() blocks on one thread while others may read the
// counters and call Stop().
#ifndef FAIRQ_CLIENT_BENCH_DRAIN_WORKERS_H_
#define FAIRQ_CLIENT_BENCH_DRAIN_WORKERS_H_

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench/bench_context.h"
#include "bench/completer.h"
#include "bench/report.h"
#include "bench/stats.h"

namespace fairq::bench {

struct DrainOptions {
  size_t workers = 4;
  uint32_t slots_per_worker = 100;
  double lease_wait_seconds = 1;
  // Stop once this many completions were accepted (0: no limit).
  uint64_t stop_after = 0;
  // Stop after this long whatever else happens.
  double max_seconds = 60;
  // Complete from a background thread per worker instead of between leases.
  bool background_reports = false;
  // Called after each Complete with the number of jobs accepted, on the
  // worker's thread (or its Completer's, with background reports); the
  // backlog scenario enqueues replacements here. An error stops every
  // worker. May be empty.
  std::function<Status(size_t worker, size_t completed)> after_complete;
};

// The worker flags the cycle and backlog scenarios share: --workers,
// --slots (in total) and --reports. Not thread-safe; set up on main's thread.
class DrainFlags {
 public:
  void AddFlags(CLI::App* sub);
  // Options for these flags; the caller sets the stop conditions.
  DrainOptions Options() const;
  void Describe(Report& report) const;

 private:
  size_t workers_ = 4;
  size_t slots_ = 400;
  std::string reports_ = "sync";
};

class DrainWorkers {
 public:
  // `bench` must outlive this.
  DrainWorkers(const BenchContext& bench, DrainOptions options);

  // Runs the workers until a stop condition; returns the first error.
  Status Run();
  void Stop() { stop_.store(true); }

  uint64_t completed() const { return completed_.load(); }
  // Seconds from Run()'s start until stop_after was reached (or the end).
  double seconds() const;
  // Latencies in milliseconds of Lease calls that returned jobs and of
  // Complete calls, after Run() returned.
  Summary lease_ms() const { return Summarize(lease_ms_); }
  Summary complete_ms() const { return Summarize(complete_ms_); }
  // Jobs per Lease reply, after Run() returned.
  Summary jobs_per_lease() const { return Summarize(jobs_per_lease_); }

 private:
  Status WorkerLoop(size_t w);
  // Completes a lease's jobs in one call, or hands them to `reporter`.
  Status CompleteJobs(size_t w, v1::Worker::Stub& stub,
                      const v1::LeaseResponse& leased, Completer* reporter,
                      std::vector<double>& complete_ms);
  // Counts `done` accepted completions of worker `w` and runs after_complete.
  Status Counted(size_t w, size_t done);
  // Records the first error and stops every worker.
  void Abort(const Status& status);
  // Records the end of the measured phase; only the first call counts.
  void MarkEnd();
  void Record(const std::vector<double>& lease, const std::vector<double>& done,
              const std::vector<double>& jobs);

  const BenchContext& bench_;
  const DrainOptions options_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> completed_{0};
  std::chrono::steady_clock::time_point start_;
  std::atomic<int64_t> end_ns_{0};  // since start_; 0 until stopped

  std::mutex mu_;  // guards the samples and first_error_
  std::vector<double> lease_ms_, complete_ms_, jobs_per_lease_;
  Status first_error_;
};

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_DRAIN_WORKERS_H_
