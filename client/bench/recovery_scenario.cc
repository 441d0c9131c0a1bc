// `fairq-bench recovery fill|wait`: restart time with a large backlog,
// measured against a fairqd that the operator restarts (the bench starts
// and stops nothing):
//
//   fairq-bench recovery fill --jobs 2000000     # prints the run id
//   (operator: stop fairqd, start it again on the same data_dir)
//   fairq-bench recovery wait --jobs 2000000 --run-id ID [--pid PID]
//
// `wait` polls GetQueueStats, each attempt on a fresh channel (so gRPC's
// reconnect backoff never delays it), until the run's pool holds the full
// count, and prints the time from its first attempt to that answer, plus
// fairqd's VmRSS and VmHWM from /proc/PID/status when --pid is given.
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "bench/bench_context.h"
#include "bench/job_ops.h"
#include "bench/report.h"
#include "bench/scenario.h"

namespace fairq::bench {
namespace {

using Clock = std::chrono::steady_clock;

// A "VmRSS:   123456 kB" line of /proc/PID/status, in MiB.
std::optional<double> ProcStatusMiB(int pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(field.size() + 1));
    double kib = 0;
    if (fields >> kib) return kib / 1024;
  }
  return std::nullopt;
}

class RecoveryScenario final : public Scenario {
 public:
  CLI::App* Register(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "recovery", "restart time with a large backlog (operator restarts)");
    sub->require_subcommand(1);
    fill_ = sub->add_subcommand("fill", "enqueue the backlog to recover");
    fill_->add_option("--jobs", jobs_, "jobs to enqueue")
        ->capture_default_str()
        ->check(CLI::Range(1, 100'000'000));
    fill_->add_option("--tenants", tenants_, "tenants the jobs are spread over")
        ->capture_default_str()
        ->check(CLI::Range(1, 100'000));
    fill_->add_option("--producers", producers_, "filling threads")
        ->capture_default_str()
        ->check(CLI::Range(1, 64));
    fill_->add_option("--timeout", timeout_, "most seconds for the fill")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    fill_bench_.AddFlags(fill_);
    wait_ = sub->add_subcommand("wait", "poll until fairqd has the backlog");
    wait_
        ->add_option("--jobs", jobs_,
                     "queued jobs to wait for (the run's pool with --run-id, "
                     "else every pool)")
        ->required()
        ->check(CLI::Range(1, 100'000'000));
    wait_->add_option("--pid", pid_, "fairqd's pid, to report its memory");
    wait_->add_option("--timeout", wait_timeout_, "most seconds to poll")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    wait_->add_option("--interval-ms", interval_ms_, "pause between attempts")
        ->capture_default_str()
        ->check(CLI::Range(1, 10'000));
    wait_bench_.AddFlags(wait_);
    return sub;
  }

  int Run(std::ostream& out, std::ostream& err) override {
    return fill_->parsed() ? Fill(out, err) : Wait(out, err);
  }

 private:
  int Fill(std::ostream& out, std::ostream& err) {
    const BenchContext& bench = fill_bench_;
    if (Status up = bench.Connect(); !up.ok()) return Fail("recovery", up, err);
    auto start = Clock::now();
    Status filled = FillBacklog(bench, TenantNames(bench, "r", tenants_), jobs_,
                                producers_, timeout_);
    if (!filled.ok()) return Fail("recovery", filled, err);
    double seconds = SecondsSince(start);
    StatusOr<uint64_t> queued = QueuedJobs(bench, *bench.Admin(), bench.pool());
    if (!queued.ok()) return Fail("recovery", queued.status(), err);
    Report report("recovery fill");
    bench.Describe(report);
    report.Fact("tenants", static_cast<int64_t>(tenants_));
    report.AddRow({{"jobs", static_cast<int64_t>(jobs_)},
                   {"seconds", seconds},
                   {"jobs_per_s", static_cast<double>(jobs_) / seconds},
                   {"queued_in_pool", static_cast<int64_t>(*queued)}});
    bench.Print(report, out);
    return kExitOk;
  }

  int Wait(std::ostream& out, std::ostream& err) {
    const BenchContext& bench = wait_bench_;
    std::string pool = bench.run_id_given() ? bench.pool() : "";
    auto interval = std::chrono::milliseconds(interval_ms_);
    auto max_attempts =
        static_cast<uint64_t>(wait_timeout_ * 1000 /
                              static_cast<double>(interval_ms_)) +
        1;
    Clock::time_point start = Clock::now();
    uint64_t attempts = 0;
    StatusOr<uint64_t> queued = Unavailable("no attempt made");
    while (attempts < max_attempts && SecondsSince(start) < wait_timeout_) {
      Clock::time_point attempt = Clock::now();
      ++attempts;
      auto admin = v1::Admin::NewStub(MakeChannel(bench.server()));
      queued = QueuedJobs(bench, *admin, pool);
      if (queued.ok() && *queued >= jobs_) break;
      std::this_thread::sleep_until(attempt + interval);
    }
    double seconds = SecondsSince(start);
    if (!queued.ok() || *queued < jobs_) {
      err << "fairq-bench recovery wait: gave up after " << attempts
          << " attempts; last: "
          << (queued.ok() ? std::to_string(*queued) + " queued"
                          : queued.status().ToString())
          << "\n";
      return kExitFailure;
    }
    Report report("recovery wait");
    bench.Describe(report);
    Row row = {{"queued", static_cast<int64_t>(*queued)},
               {"seconds", seconds},
               {"attempts", static_cast<int64_t>(attempts)}};
    AddMemory(row, err);
    report.AddRow(std::move(row));
    bench.Print(report, out);
    return kExitOk;
  }

  void AddMemory(Row& row, std::ostream& err) const {
    if (pid_ <= 0) return;
    std::optional<double> rss = ProcStatusMiB(pid_, "VmRSS");
    std::optional<double> peak = ProcStatusMiB(pid_, "VmHWM");
    if (!rss || !peak) {
      err << "fairq-bench recovery wait: cannot read /proc/" << pid_
          << "/status\n";
      return;
    }
    row.emplace_back("rss_mib", *rss);
    row.emplace_back("peak_rss_mib", *peak);
  }

  BenchContext fill_bench_, wait_bench_;
  CLI::App* fill_ = nullptr;
  CLI::App* wait_ = nullptr;
  uint64_t jobs_ = 2'000'000;
  size_t tenants_ = 100;
  size_t producers_ = 4;
  double timeout_ = 900;
  int pid_ = 0;
  double wait_timeout_ = 120;
  int64_t interval_ms_ = 20;
};

}  // namespace

std::unique_ptr<Scenario> MakeRecoveryScenario() {
  return std::make_unique<RecoveryScenario>();
}

}  // namespace fairq::bench
