// `fairq-bench flood`: fairness when one tenant floods the queue.
// --slots single-slot workers each "work" --work-ms per job (the sleep is
// the work; completions go out in the background, as the SDK does).
// Tenant A enqueues --a-jobs jobs at t = --a-at (EnqueueBatch of 1,000,
// sent together); tenants B and C each enqueue one job every --interval-ms
// from t = 0 to t = --duration. Reported per tenant: queue wait (Enqueue
// issued to Lease reply, client side) p50, p99 and max, and when its last
// job's work ended (seconds from t = 0).
//
// By default every job carries estimated_cost_seconds = --work-ms, as a
// producer that knows its job length would; --no-estimate leaves it out so
// the broker starts from its default cost and learns.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

#include "bench/bench_context.h"
#include "bench/completer.h"
#include "bench/job_ops.h"
#include "bench/paced_enqueuer.h"
#include "bench/parallel.h"
#include "bench/progress.h"
#include "bench/report.h"
#include "bench/scenario.h"

namespace fairq::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kStartDelay{200};
constexpr double kLeaseWaitSeconds = 1;
constexpr int kTenants = 3;  // A, B, C
constexpr size_t kMaxFloodProducers = 8;
const char* const kTenantNames[kTenants] = {"A", "B", "C"};

// Tags carry the tenant's index in the high half: (index << 32) | (i + 1).
uint64_t Tag(int tenant, uint64_t i) {
  return (static_cast<uint64_t>(tenant) << 32) | (i + 1);
}

// One job as a worker saw it.
struct Worked {
  uint64_t tag;
  Clock::time_point leased, done;
};

class FloodScenario final : public Scenario {
 public:
  CLI::App* Register(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "flood", "per-tenant wait while one tenant floods the queue");
    sub->add_option("--slots", slots_, "single-slot workers")
        ->capture_default_str()
        ->check(CLI::Range(1, 256));
    sub->add_option("--work-ms", work_ms_, "work per job (a sleep)")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 60'000.0));
    sub->add_option("--a-jobs", a_jobs_, "jobs tenant A enqueues at once")
        ->capture_default_str()
        ->check(CLI::Range(1, 1'000'000));
    sub->add_option("--a-at", a_at_, "when A enqueues, seconds after t = 0")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 3600.0));
    sub->add_option("--interval-ms", interval_ms_, "B's and C's pace")
        ->capture_default_str()
        ->check(CLI::Range(0.1, 60'000.0));
    sub->add_option("--duration", duration_, "how long B and C enqueue, s")
        ->capture_default_str()
        ->check(CLI::Range(0.01, 3600.0));
    sub->add_flag("--no-estimate", no_estimate_,
                  "send jobs without estimated_cost_seconds");
    sub->add_option("--timeout", timeout_, "most seconds for the whole run")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    bench_.AddFlags(sub);
    return sub;
  }

  int Run(std::ostream& out, std::ostream& err) override {
    if (Status up = bench_.Connect(); !up.ok()) return Fail("flood", up, err);
    double cost = no_estimate_ ? -1 : work_ms_ / 1000;
    auto paced = [&](int tenant) {
      PaceOptions pace;
      pace.tenant = bench_.Tenant(kTenantNames[tenant]);
      pace.first_tag = Tag(tenant, 0);
      pace.count = std::max<uint64_t>(
          1, static_cast<uint64_t>(duration_ * 1000 / interval_ms_));
      pace.interval =
          std::chrono::microseconds(static_cast<int64_t>(interval_ms_ * 1000));
      pace.cost_seconds = cost;
      pace.channel = static_cast<size_t>(tenant);
      return std::make_unique<PacedEnqueuer>(bench_, pace);
    };
    pacers_[1] = paced(1);
    pacers_[2] = paced(2);
    Completer completer(bench_, 0);
    Status status = Drive(completer, cost);
    Status completed = completer.Close();
    if (!status.ok()) return Fail("flood", status, err);
    if (!completed.ok()) return Fail("flood", completed, err);
    Print(out);
    std::vector<std::string> tenants;
    for (const char* name : kTenantNames)
      tenants.push_back(bench_.Tenant(name));
    bench_.Cleanup(tenants, err);
    return kExitOk;
  }

 private:
  // Runs workers, B and C's pacers and A's flood until every accepted job
  // was worked or --timeout passed.
  Status Drive(Completer& completer, double cost) {
    std::atomic<bool> stop{false};
    Progress worked, enqueuers_done;
    std::mutex mu;
    Status first_error;
    // An error anywhere ends the run at once rather than at --timeout.
    auto note = [&](const Status& status) {
      if (status.ok()) return;
      std::lock_guard<std::mutex> lock(mu);
      if (first_error.ok()) first_error = status;
      stop.store(true);
      enqueuers_done.Abort();
      worked.Abort();
    };
    t0_ = Clock::now() + kStartDelay;
    Clock::time_point give_up =
        t0_ + std::chrono::milliseconds(static_cast<int64_t>(timeout_ * 1000));
    RunParallel(slots_ + 4, [&](size_t i) {
      if (i < slots_) {
        note(Work(i, give_up, stop, worked, completer));
      } else if (i < slots_ + 2) {
        note(pacers_[i - slots_ + 1]->Run(t0_));
        enqueuers_done.Add(1);
      } else if (i == slots_ + 2) {
        note(FloodA(cost));
        enqueuers_done.Add(1);
      } else {
        enqueuers_done.WaitFor(3, give_up);
        worked.WaitFor(
            pacers_[1]->accepted() + pacers_[2]->accepted() + a_accepted_,
            give_up);
        stop.store(true);
      }
    });
    return first_error;
  }

  Status FloodA(double cost) {
    std::this_thread::sleep_until(
        t0_ + std::chrono::microseconds(static_cast<int64_t>(a_at_ * 1e6)));
    a_issued_ = Clock::now();
    // All batches at once (2 for the default 2,000 jobs), up to a bound.
    size_t producers = std::min<size_t>(
        kMaxFloodProducers, (a_jobs_ + kFillBatch - 1) / kFillBatch);
    Status filled = FillBacklog(bench_, {bench_.Tenant("A")}, a_jobs_,
                                producers, timeout_, Tag(0, 0), cost);
    if (filled.ok()) a_accepted_ = a_jobs_;
    return filled;
  }

  // One single-slot worker: lease, work, hand the completion over, repeat.
  Status Work(size_t w, Clock::time_point give_up,
              const std::atomic<bool>& stop, Progress& worked,
              Completer& completer) {
    std::unique_ptr<v1::Worker::Stub> stub = bench_.Worker(w);
    std::string worker_id = bench_.run_id() + "-flood" + std::to_string(w);
    auto work =
        std::chrono::microseconds(static_cast<int64_t>(work_ms_ * 1000));
    std::vector<Worked> seen;
    Status status;
    while (!stop.load() && Clock::now() < give_up) {
      StatusOr<v1::LeaseResponse> reply =
          Lease(bench_, *stub, worker_id, 1, 1, kLeaseWaitSeconds);
      Clock::time_point leased = Clock::now();
      if (!reply.ok()) {
        status = reply.status();
        break;
      }
      for (const v1::LeasedJob& job : reply->jobs()) {
        std::this_thread::sleep_for(work);
        seen.push_back(
            {PayloadTag(job.job().spec().payload()), leased, Clock::now()});
        completer.Add(job.job().id(), job.lease_token(), work);
      }
      worked.Add(static_cast<uint64_t>(reply->jobs_size()));
    }
    std::lock_guard<std::mutex> lock(seen_mu_);
    seen_.insert(seen_.end(), seen.begin(), seen.end());
    return status;
  }

  void Print(std::ostream& out) const {
    Report report("flood");
    bench_.Describe(report);
    report.Fact("slots", static_cast<int64_t>(slots_));
    report.Fact("work_ms", work_ms_);
    report.Fact("estimate", no_estimate_ ? "none" : "work_ms");
    std::vector<double> wait_ms[kTenants];
    double finish[kTenants] = {0, 0, 0};
    for (const Worked& job : seen_) {
      int tenant = static_cast<int>(job.tag >> 32);
      uint64_t i = (job.tag & 0xffffffffu) - 1;
      std::optional<Clock::time_point> issued = Issued(tenant, i);
      if (!issued) continue;
      wait_ms[tenant].push_back(
          std::chrono::duration<double, std::milli>(job.leased - *issued)
              .count());
      finish[tenant] =
          std::max(finish[tenant],
                   std::chrono::duration<double>(job.done - t0_).count());
    }
    for (int t = 0; t < kTenants; ++t) {
      Row row = {{"tenant", kTenantNames[t]}};
      AddSummary(row, "wait_ms_", Summarize(std::move(wait_ms[t])));
      row.emplace_back("finish_s", finish[t]);
      report.AddRow(std::move(row));
    }
    report.Print(out, bench_.json());
  }

  // When the job with index `i` of `tenant` was enqueued, if it was.
  std::optional<Clock::time_point> Issued(int tenant, uint64_t i) const {
    if (tenant == 0) {
      return i < a_accepted_ ? std::optional(a_issued_) : std::nullopt;
    }
    if (tenant >= kTenants) return std::nullopt;
    const auto& issued = pacers_[tenant]->issued();
    return i < issued.size() ? std::optional(issued[i]) : std::nullopt;
  }

  BenchContext bench_;
  size_t slots_ = 8;
  double work_ms_ = 10;
  uint64_t a_jobs_ = 2000;
  double a_at_ = 0.5;
  double interval_ms_ = 20;
  double duration_ = 5;
  bool no_estimate_ = false;
  double timeout_ = 60;

  Clock::time_point t0_;
  Clock::time_point a_issued_;
  uint64_t a_accepted_ = 0;  // written before enqueuers_done counts A
  std::unique_ptr<PacedEnqueuer> pacers_[kTenants];  // [1] B, [2] C
  std::mutex seen_mu_;
  std::vector<Worked> seen_;  // guarded by seen_mu_ during Drive()
};

}  // namespace

std::unique_ptr<Scenario> MakeFloodScenario() {
  return std::make_unique<FloodScenario>();
}

}  // namespace fairq::bench
