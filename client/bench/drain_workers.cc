#include "bench/drain_workers.h"

#include "bench/job_ops.h"
#include "bench/parallel.h"

namespace fairq::bench {

DrainWorkers::DrainWorkers(const BenchContext& bench, DrainOptions options)
    : bench_(bench), options_(std::move(options)) {}

Status DrainWorkers::Run() {
  start_ = std::chrono::steady_clock::now();
  RunParallel(options_.workers, [this](size_t w) {
    Status status = WorkerLoop(w);
    if (status.ok()) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (first_error_.ok()) first_error_ = status;
    stop_.store(true);
  });
  MarkEnd();
  std::lock_guard<std::mutex> lock(mu_);
  return first_error_;
}

void DrainWorkers::MarkEnd() {
  int64_t none = 0;
  end_ns_.compare_exchange_strong(
      none, std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::steady_clock::now() - start_)
                .count());
}

double DrainWorkers::seconds() const {
  int64_t end = end_ns_.load();
  return end > 0 ? static_cast<double>(end) / 1e9 : SecondsSince(start_);
}

// Ends on Stop(), on reaching stop_after, on an error, or after max_seconds;
// each pass is one Lease of at most lease_wait_seconds plus one Complete.
Status DrainWorkers::WorkerLoop(size_t w) {
  std::unique_ptr<v1::Worker::Stub> stub = bench_.Worker(w);
  std::string worker_id = bench_.run_id() + "-drain" + std::to_string(w);
  std::vector<double> lease_ms, complete_ms, jobs;
  Status status;
  while (!stop_.load() && SecondsSince(start_) < options_.max_seconds) {
    auto call = std::chrono::steady_clock::now();
    StatusOr<v1::LeaseResponse> leased =
        Lease(bench_, *stub, worker_id, options_.slots_per_worker,
              options_.slots_per_worker, options_.lease_wait_seconds);
    if (!leased.ok()) {
      status = leased.status();
      break;
    }
    // Empty replies are long polls that ran out, not broker latency.
    if (leased->jobs_size() == 0) continue;
    lease_ms.push_back(MillisSince(call));
    jobs.push_back(leased->jobs_size());
    call = std::chrono::steady_clock::now();
    StatusOr<size_t> done =
        CompleteAll(bench_, *stub, *leased, std::chrono::nanoseconds(0));
    if (!done.ok()) {
      status = done.status();
      break;
    }
    complete_ms.push_back(MillisSince(call));
    uint64_t total = completed_.fetch_add(*done) + *done;
    if (options_.stop_after > 0 && total >= options_.stop_after) {
      MarkEnd();
      stop_.store(true);
    }
    if (options_.after_complete) {
      status = options_.after_complete(w, *done);
      if (!status.ok()) break;
    }
  }
  Record(lease_ms, complete_ms, jobs);
  return status;
}

void DrainWorkers::Record(const std::vector<double>& lease,
                          const std::vector<double>& done,
                          const std::vector<double>& jobs) {
  std::lock_guard<std::mutex> lock(mu_);
  lease_ms_.insert(lease_ms_.end(), lease.begin(), lease.end());
  complete_ms_.insert(complete_ms_.end(), done.begin(), done.end());
  jobs_per_lease_.insert(jobs_per_lease_.end(), jobs.begin(), jobs.end());
}

}  // namespace fairq::bench
