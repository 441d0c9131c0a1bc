// `fairq-bench cycle`: the full job cycle rate. A backlog of --jobs jobs is
// enqueued first (EnqueueBatch of 1,000 from --fill-producers threads,
// round robin over --tenants tenants); then --slots worker slots, split over
// --workers worker threads, drain it: each worker leases up to its share of
// slots per call and completes them (--reports) doing no work.
// The figure is jobs drained per second, from the first Lease to the
// Complete that finished the backlog.
#include "bench/bench_context.h"
#include "bench/drain_workers.h"
#include "bench/job_ops.h"
#include "bench/report.h"
#include "bench/scenario.h"

namespace fairq::bench {
namespace {

class CycleScenario final : public Scenario {
 public:
  CLI::App* Register(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "cycle", "fill a backlog, then drain it with no-op workers");
    sub->add_option("--jobs", jobs_, "backlog size")
        ->capture_default_str()
        ->check(CLI::Range(1, 100'000'000));
    sub->add_option("--tenants", tenants_, "tenants the backlog is spread over")
        ->capture_default_str()
        ->check(CLI::Range(1, 100'000));
    drain_flags_.AddFlags(sub);
    sub->add_option("--fill-producers", fill_producers_,
                    "threads filling the backlog")
        ->capture_default_str()
        ->check(CLI::Range(1, 64));
    sub->add_option("--timeout", timeout_, "most seconds for each phase")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    bench_.AddFlags(sub);
    return sub;
  }

  int Run(std::ostream& out, std::ostream& err) override {
    if (Status up = bench_.Connect(); !up.ok()) return Fail("cycle", up, err);
    std::vector<std::string> tenants = TenantNames(bench_, "c", tenants_);
    auto start = std::chrono::steady_clock::now();
    Status filled =
        FillBacklog(bench_, tenants, jobs_, fill_producers_, timeout_);
    if (!filled.ok()) return Fail("cycle", filled, err);
    double fill_seconds = SecondsSince(start);

    DrainOptions options = drain_flags_.Options();
    options.stop_after = jobs_;
    options.max_seconds = timeout_;
    DrainWorkers drain(bench_, options);
    Status drained = drain.Run();
    if (!drained.ok()) return Fail("cycle", drained, err);
    if (drain.completed() < jobs_) {  // a rate over part of it would mislead
      return Fail("cycle",
                  Status(StatusCode::kUnavailable,
                         std::to_string(drain.completed()) + " of " +
                             std::to_string(jobs_) +
                             " jobs completed within --timeout"),
                  err);
    }

    Report report("cycle");
    Describe(report);
    report.AddRow({{"phase", "fill"},
                   {"jobs", static_cast<int64_t>(jobs_)},
                   {"seconds", fill_seconds},
                   {"jobs_per_s", static_cast<double>(jobs_) / fill_seconds}});
    report.AddRow(DrainRow(drain));
    bench_.Print(report, out);
    bench_.Cleanup(tenants, err);
    return kExitOk;
  }

 private:
  void Describe(Report& report) const {
    bench_.Describe(report);
    report.Fact("tenants", static_cast<int64_t>(tenants_));
    drain_flags_.Describe(report);
  }

  static Row DrainRow(const DrainWorkers& drain) {
    Row row = {{"phase", "drain"},
               {"jobs", static_cast<int64_t>(drain.completed())},
               {"seconds", drain.seconds()},
               {"jobs_per_s",
                static_cast<double>(drain.completed()) / drain.seconds()},
               {"jobs_per_lease", drain.jobs_per_lease().mean}};
    Summary lease = drain.lease_ms();
    Summary complete = drain.complete_ms();
    row.emplace_back("lease_ms_p50", lease.p50);
    row.emplace_back("lease_ms_p99", lease.p99);
    row.emplace_back("complete_ms_p50", complete.p50);
    row.emplace_back("complete_ms_p99", complete.p99);
    return row;
  }

  BenchContext bench_;
  uint64_t jobs_ = 100'000;
  size_t tenants_ = 10;
  DrainFlags drain_flags_;
  size_t fill_producers_ = 4;
  double timeout_ = 300;
};

}  // namespace

std::unique_ptr<Scenario> MakeCycleScenario() {
  return std::make_unique<CycleScenario>();
}

}  // namespace fairq::bench
