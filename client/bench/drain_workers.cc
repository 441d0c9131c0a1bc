#include "bench/drain_workers.h"

#include <algorithm>
#include <optional>

#include "bench/job_ops.h"
#include "bench/parallel.h"

namespace fairq::bench {

void DrainFlags::AddFlags(CLI::App* sub) {
  sub->add_option("--workers", workers_, "worker threads")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  sub->add_option("--slots", slots_, "worker slots in total")
      ->capture_default_str()
      ->check(CLI::Range(1, 100'000));
  sub->add_option("--reports", reports_,
                  "sync: a worker completes its jobs before it leases "
                  "again; background: a thread per worker completes them "
                  "while it leases, as the SDK's Worker does")
      ->capture_default_str()
      ->check(CLI::IsMember({"sync", "background"}));
}

DrainOptions DrainFlags::Options() const {
  DrainOptions options;
  options.workers = workers_;
  options.slots_per_worker =
      static_cast<uint32_t>(std::max<size_t>(1, slots_ / workers_));
  options.background_reports = reports_ == "background";
  return options;
}

void DrainFlags::Describe(Report& report) const {
  report.Fact("workers", static_cast<int64_t>(workers_));
  report.Fact("slots", static_cast<int64_t>(slots_));
  report.Fact("reports", reports_);
}

DrainWorkers::DrainWorkers(const BenchContext& bench, DrainOptions options)
    : bench_(bench), options_(std::move(options)) {}

Status DrainWorkers::Run() {
  start_ = std::chrono::steady_clock::now();
  RunParallel(options_.workers, [this](size_t w) {
    if (Status status = WorkerLoop(w); !status.ok()) Abort(status);
  });
  MarkEnd();
  std::lock_guard<std::mutex> lock(mu_);
  return first_error_;
}

void DrainWorkers::Abort(const Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (first_error_.ok()) first_error_ = status;
  stop_.store(true);
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
// each pass is one Lease of at most lease_wait_seconds plus its report.
Status DrainWorkers::WorkerLoop(size_t w) {
  std::unique_ptr<v1::Worker::Stub> stub = bench_.Worker(w);
  std::string worker_id = bench_.run_id() + "-drain" + std::to_string(w);
  std::vector<double> lease_ms, complete_ms, jobs;
  std::optional<Completer> reporter;
  if (options_.background_reports) {
    // complete_ms is written on the Completer's thread until reset() joins it.
    reporter.emplace(
        bench_, w,
        [this, w, &complete_ms](const Status& sent, size_t done, double ms) {
          complete_ms.push_back(ms);
          Status status = sent.ok() ? Counted(w, done) : sent;
          if (!status.ok()) Abort(status);
        });
  }
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
    status = CompleteJobs(w, *stub, *leased, reporter ? &*reporter : nullptr,
                          complete_ms);
    if (!status.ok()) break;
  }
  if (reporter) {
    if (Status sent = reporter->Close(); status.ok()) status = sent;
    reporter.reset();
  }
  Record(lease_ms, complete_ms, jobs);
  return status;
}

Status DrainWorkers::CompleteJobs(size_t w, v1::Worker::Stub& stub,
                                  const v1::LeaseResponse& leased,
                                  Completer* reporter,
                                  std::vector<double>& complete_ms) {
  if (reporter != nullptr) {
    for (const v1::LeasedJob& job : leased.jobs()) {
      reporter->Add(job.job().id(), job.lease_token(),
                    std::chrono::nanoseconds(0));
    }
    reporter->WaitAtMost(options_.slots_per_worker);
    return Status::Ok();
  }
  auto call = std::chrono::steady_clock::now();
  StatusOr<size_t> done =
      CompleteAll(bench_, stub, leased, std::chrono::nanoseconds(0));
  if (!done.ok()) return done.status();
  complete_ms.push_back(MillisSince(call));
  return Counted(w, *done);
}

Status DrainWorkers::Counted(size_t w, size_t done) {
  uint64_t total = completed_.fetch_add(done) + done;
  if (options_.stop_after > 0 && total >= options_.stop_after) {
    MarkEnd();
    stop_.store(true);
  }
  return options_.after_complete ? options_.after_complete(w, done)
                                 : Status::Ok();
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
