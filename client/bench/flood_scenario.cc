// `fairq-bench flood`: fairness when one tenant floods the queue.
// One SDK Worker (fairq_client) with --slots slots and --prefetch runs a
// handler that "works" --work-ms per job (a WorkSleep is the work), so the
// figures are what a user of the SDK gets. Tenant A enqueues --a-jobs jobs
// at t = --a-at through an SDK Producer with its default batching (100
// jobs per EnqueueBatch, one call at a time); tenants B and C
// each enqueue one job every --interval-ms from t = 0 to t = --duration.
// Reported per tenant: queue wait (Enqueue issued to the handler starting,
// client side) p50, p99 and max, when its last job's work ended (seconds
// from t = 0), and the sleep's measured length (work_ms_mean); and
// slots_busy, the fraction of slot time between --a-at and A's finish that
// a handler ran.
//
// By default every job carries estimated_cost_seconds = --work-ms, as a
// producer that knows its job length would; --no-estimate leaves it out so
// the broker starts from its default cost and learns.
#include <sys/prctl.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <thread>

#include "bench/bench_context.h"
#include "bench/job_ops.h"
#include "bench/paced_enqueuer.h"
#include "bench/parallel.h"
#include "bench/progress.h"
#include "bench/report.h"
#include "bench/scenario.h"
#include "bench/work_sleep.h"
#include "fairq/client/producer.h"
#include "fairq/client/worker.h"

namespace fairq::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kStartDelay{200};
constexpr double kLeaseWaitSeconds = 1;
constexpr int kTenants = 3;  // A, B, C
const char* const kTenantNames[kTenants] = {"A", "B", "C"};

// Tags carry the tenant's index in the high half: (index << 32) | (i + 1).
uint64_t Tag(int tenant, uint64_t i) {
  return (static_cast<uint64_t>(tenant) << 32) | (i + 1);
}

// One job as the handler saw it.
struct Worked {
  uint64_t tag;
  Clock::time_point started, done;
};

class FloodScenario final : public Scenario {
 public:
  CLI::App* Register(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "flood", "per-tenant wait while one tenant floods the queue");
    sub->add_option("--slots", slots_, "the worker's slots")
        ->capture_default_str()
        ->check(CLI::Range(1, 256));
    sub->add_option("--prefetch", prefetch_,
                    "jobs the worker leases ahead (WorkerOptions::prefetch)")
        ->capture_default_str()
        ->check(CLI::Range(0, 256));
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
    sub->add_flag("--default-timer-slack", default_timer_slack_,
                  "keep Linux's 50 us timer slack for the work sleeps");
    sub->add_flag("--plain-sleep", plain_sleep_,
                  "sleep --work-ms without learning the wake-up latency, so "
                  "each job also takes that latency");
    sub->add_flag("--no-estimate", no_estimate_,
                  "send jobs without estimated_cost_seconds");
    sub->add_option("--timeout", timeout_, "most seconds for the whole run")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    bench_.AddFlags(sub);
    return sub;
  }

  int Run(std::ostream& out, std::ostream& err) override {
    if (prefetch_ > slots_) {
      return Fail("flood",
                  InvalidArgument("--prefetch: at most --slots (" +
                                  std::to_string(slots_) + ")"),
                  err);
    }
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
    // The handler's sleep stands for --work-ms of work, and what it takes
    // beyond that would read as broker overhead in A's finish. On the 2-core
    // box a plain 10 ms sleep ran 10.15 ms with Linux's default 50 us timer
    // slack and 10.10 ms with 1 ns; WorkSleep corrects for the rest, which
    // is wake-up latency, and a smaller slack leaves it less to correct.
    // Threads started from here inherit the slack.
    if (!default_timer_slack_ &&
        prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) != 0) {
      err << "flood: cannot set the timer slack; WorkSleep has more to "
             "correct\n";
    }
    Status status = Drive(cost);
    if (!status.ok()) return Fail("flood", status, err);
    Print(out);
    std::vector<std::string> tenants;
    for (const char* name : kTenantNames)
      tenants.push_back(bench_.Tenant(name));
    bench_.Cleanup(tenants, err);
    return kExitOk;
  }

 private:
  // Runs the worker, B and C's pacers and A's flood until every accepted
  // job was worked or --timeout passed.
  Status Drive(double cost) {
    Progress worked, enqueuers_done;
    std::mutex mu;
    Status first_error;
    // An error anywhere ends the run at once rather than at --timeout.
    auto note = [&](const Status& status) {
      if (status.ok()) return;
      std::lock_guard<std::mutex> lock(mu);
      if (first_error.ok()) first_error = status;
      enqueuers_done.Abort();
      worked.Abort();
    };
    t0_ = Clock::now() + kStartDelay;
    Clock::time_point give_up =
        t0_ + std::chrono::milliseconds(static_cast<int64_t>(timeout_ * 1000));
    StatusOr<std::unique_ptr<client::Worker>> worker =
        StartWorker(worked, note);
    if (!worker.ok()) return worker.status();
    RunParallel(4, [&](size_t i) {
      if (i < 2) {
        note(pacers_[i + 1]->Run(t0_));
        enqueuers_done.Add(1);
      } else if (i == 2) {
        note(FloodA(cost));
        enqueuers_done.Add(1);
      } else {
        enqueuers_done.WaitFor(3, give_up);
        uint64_t accepted =
            pacers_[1]->accepted() + pacers_[2]->accepted() + a_accepted_;
        // Figures over the jobs that happened to finish would flatter the
        // tail and A's finish: a run cut short by --timeout is an error.
        if (!worked.WaitFor(accepted, give_up)) {
          note(Status(StatusCode::kUnavailable,
                      "flood: " + std::to_string(worked.count()) + " of " +
                          std::to_string(accepted) +
                          " jobs worked within --timeout"));
        }
      }
    });
    (*worker)->Stop();
    std::lock_guard<std::mutex> lock(mu);
    return first_error;
  }

  Status FloodA(double cost) {
    // Before the producer, so that they outlive its sender thread.
    std::mutex mu;
    Status first_error;
    client::ProducerOptions options;
    options.max_pending = std::max<size_t>(options.max_pending, a_jobs_);
    client::StatusOr<std::unique_ptr<client::Producer>> producer =
        client::Producer::Create(bench_.Channel(kTenants), options);
    if (!producer.ok()) {
      return Status(StatusCode::kInvalidArgument, producer.status().ToString());
    }
    std::this_thread::sleep_until(
        t0_ + std::chrono::microseconds(static_cast<int64_t>(a_at_ * 1e6)));
    a_issued_ = Clock::now();
    std::string tenant = bench_.Tenant("A");
    for (uint64_t i = 0; i < a_jobs_; ++i) {
      (*producer)->EnqueueAsync(
          MakeJob(bench_, tenant, Tag(0, i), cost),
          [&](const client::StatusOr<client::EnqueueResult>& result) {
            if (result.ok()) return;
            std::lock_guard<std::mutex> lock(mu);
            if (first_error.ok()) {
              first_error =
                  Status(StatusCode::kInternal,
                         "A's enqueue: " + result.status().ToString());
            }
          });
    }
    (*producer)->Flush();
    std::lock_guard<std::mutex> lock(mu);
    if (first_error.ok()) a_accepted_ = a_jobs_;
    return first_error;
  }

  // The SDK worker whose handler sleeps --work-ms and records each job.
  template <typename Note>
  StatusOr<std::unique_ptr<client::Worker>> StartWorker(Progress& worked,
                                                        Note& note) {
    client::WorkerOptions options;
    options.worker_id = bench_.run_id() + "-flood";
    options.slots = static_cast<uint32_t>(slots_);
    options.prefetch = static_cast<uint32_t>(prefetch_);
    options.lease_wait = std::chrono::milliseconds(
        static_cast<int64_t>(kLeaseWaitSeconds * 1000));
    options.on_error = [&note](const client::Status& error) {
      note(Status(StatusCode::kInternal, "worker: " + error.ToString()));
    };
    work_sleep_.emplace(
        std::chrono::microseconds(static_cast<int64_t>(work_ms_ * 1000)),
        !plain_sleep_);
    return StartSdkWorker(bench_, 0, std::move(options),
                          [this, &worked](client::JobContext& job) {
                            Clock::time_point start = Clock::now();
                            Clock::time_point done = work_sleep_->Until(start);
                            Worked seen{PayloadTag(job.payload()), start, done};
                            {
                              std::lock_guard<std::mutex> lock(seen_mu_);
                              seen_.push_back(seen);
                            }
                            worked.Add(1);
                            return client::Outcome::Success();
                          });
  }

  void Print(std::ostream& out) const {
    Report report("flood");
    bench_.Describe(report);
    report.Fact("slots", static_cast<int64_t>(slots_));
    report.Fact("prefetch", static_cast<int64_t>(prefetch_));
    report.Fact("work_ms", work_ms_);
    report.Fact("estimate", no_estimate_ ? "none" : "work_ms");
    report.Fact("timer_slack", default_timer_slack_ ? "default" : "1ns");
    report.Fact("work_sleep", plain_sleep_ ? "plain" : "corrected");
    report.Fact(
        "sleep_lead_us",
        std::chrono::duration<double, std::micro>(work_sleep_->lead()).count());
    std::vector<double> wait_ms[kTenants];
    double finish[kTenants] = {0, 0, 0};
    // The sleep's real length: what the handler took beyond --work-ms is
    // the client's share of each job's overhead.
    double worked_ms[kTenants] = {0, 0, 0};
    for (const Worked& job : seen_) {
      int tenant = static_cast<int>(job.tag >> 32);
      uint64_t i = (job.tag & 0xffffffffu) - 1;
      std::optional<Clock::time_point> issued = Issued(tenant, i);
      if (!issued) continue;
      wait_ms[tenant].push_back(
          std::chrono::duration<double, std::milli>(job.started - *issued)
              .count());
      finish[tenant] = std::max(finish[tenant], SinceT0(job.done));
      worked_ms[tenant] +=
          std::chrono::duration<double, std::milli>(job.done - job.started)
              .count();
    }
    for (int t = 0; t < kTenants; ++t) {
      Row row = {{"tenant", kTenantNames[t]}};
      size_t jobs = wait_ms[t].size();
      AddSummary(row, "wait_ms_", Summarize(std::move(wait_ms[t])));
      row.emplace_back("finish_s", finish[t]);
      row.emplace_back(
          "work_ms_mean",
          jobs > 0 ? worked_ms[t] / static_cast<double>(jobs) : 0.0);
      report.AddRow(std::move(row));
    }
    report.Fact("slots_busy", SlotsBusy(finish[0]));
    bench_.Print(report, out);
  }

  // The share of slot time between --a-at and A's finish that a handler
  // was running. With the measured work, A could have finished no sooner
  // than a_at + slots_busy * (finish - a_at): the rest is time slots waited
  // for a lease.
  double SlotsBusy(double a_finish) const {
    if (a_finish <= a_at_) return 0;
    double busy = 0;
    for (const Worked& job : seen_) {
      busy += std::max(0.0, std::min(SinceT0(job.done), a_finish) -
                                std::max(SinceT0(job.started), a_at_));
    }
    return busy / (static_cast<double>(slots_) * (a_finish - a_at_));
  }

  double SinceT0(Clock::time_point t) const {
    return std::chrono::duration<double>(t - t0_).count();
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
  size_t prefetch_ = 0;
  double work_ms_ = 10;
  uint64_t a_jobs_ = 2000;
  double a_at_ = 0.5;
  double interval_ms_ = 20;
  double duration_ = 5;
  bool no_estimate_ = false;
  bool default_timer_slack_ = false;
  bool plain_sleep_ = false;
  double timeout_ = 60;

  Clock::time_point t0_;
  Clock::time_point a_issued_;
  uint64_t a_accepted_ = 0;  // written before enqueuers_done counts A
  std::unique_ptr<PacedEnqueuer> pacers_[kTenants];  // [1] B, [2] C
  std::optional<WorkSleep> work_sleep_;  // set before the worker starts
  std::mutex seen_mu_;
  std::vector<Worked> seen_;  // guarded by seen_mu_ while the worker runs
};

}  // namespace

std::unique_ptr<Scenario> MakeFloodScenario() {
  return std::make_unique<FloodScenario>();
}

}  // namespace fairq::bench
