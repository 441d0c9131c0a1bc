// `fairq-bench backlog`: does the cycle rate depend on how much is queued?
// For each of --levels (default 1k, then 2M), the backlog is filled up to
// that level (EnqueueBatch of 1,000) and then held there while it is
// measured: drain workers (as in `cycle`) lease and complete, and after
// every Complete the same worker enqueues as many new jobs as it just
// completed (one EnqueueBatch). So each measured cycle is enqueue + lease +
// complete, and the queue stays within one lease of the level. The figure
// is completions per second over --duration, after --warmup. Levels are
// filled in order, each topping up the previous one. Each second of the
// window is sampled too: the median rate of all seconds, and of the quiet
// ones (CpuReadings: the hypervisor took under kQuietStealPct of the CPU), so
// that levels measured minutes apart can be compared without the steal.
#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include "bench/bench_context.h"
#include "bench/cpu_readings.h"
#include "bench/drain_workers.h"
#include "bench/host_cpu.h"
#include "bench/job_ops.h"
#include "bench/report.h"
#include "bench/scenario.h"
#include "bench/stats.h"

namespace fairq::bench {
namespace {

using Clock = std::chrono::steady_clock;

class BacklogScenario final : public Scenario {
 public:
  CLI::App* Register(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "backlog", "cycle rate with a small and a large backlog held level");
    sub->add_option("--levels", levels_, "backlog levels, in jobs, ascending")
        ->delimiter(',')
        ->capture_default_str()
        ->check(CLI::Range(1, 100'000'000));
    sub->add_option("--tenants", tenants_, "tenants the backlog is spread over")
        ->capture_default_str()
        ->check(CLI::Range(1, 100'000));
    drain_flags_.AddFlags(sub);
    sub->add_option("--warmup", warmup_, "seconds before measuring")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 600.0));
    sub->add_option("--duration", duration_, "seconds measured per level")
        ->capture_default_str()
        ->check(CLI::Range(0.01, 600.0));
    sub->add_option("--fill-producers", fill_producers_,
                    "threads filling the backlog")
        ->capture_default_str()
        ->check(CLI::Range(1, 64));
    sub->add_option("--fill-timeout", fill_timeout_, "most seconds per fill")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    bench_.AddFlags(sub);
    return sub;
  }

  int Run(std::ostream& out, std::ostream& err) override {
    if (Status up = bench_.Connect(); !up.ok()) return Fail("backlog", up, err);
    std::sort(levels_.begin(), levels_.end());
    tenants_list_ = TenantNames(bench_, "b", tenants_);
    Report report("backlog");
    bench_.Describe(report);
    report.Fact("tenants", static_cast<int64_t>(tenants_));
    drain_flags_.Describe(report);
    report.Fact("method",
                "level held: each Complete is followed by an "
                "EnqueueBatch of as many jobs");
    uint64_t queued = 0;
    FirstLevel first;
    for (uint64_t level : levels_) {
      auto fill_start = Clock::now();
      Status filled = FillBacklog(bench_, tenants_list_, level - queued,
                                  fill_producers_, fill_timeout_, next_tag_);
      if (!filled.ok()) return Fail("backlog", filled, err);
      next_tag_ += level - queued;
      queued = level;
      Row row = {{"level", static_cast<int64_t>(level)},
                 {"fill_s", SecondsSince(fill_start)}};
      Status measured = Measure(row, first);
      if (!measured.ok()) return Fail("backlog", measured, err);
      report.AddRow(std::move(row));
    }
    bench_.Print(report, out);
    bench_.Cleanup(tenants_list_, err);
    return kExitOk;
  }

 private:
  // The first level's rates, that the others are set against (none while
  // the first level is measured; no quiet rate if it had no quiet second).
  struct FirstLevel {
    double rate = 0;
    std::optional<double> quiet_rate;
  };

  // One measured window, sampled every second.
  struct Sampled {
    uint64_t cycles = 0;
    double seconds = 0;
    std::vector<double> rates;        // of each whole second
    std::vector<double> quiet_rates;  // of the seconds the hypervisor spared
    std::optional<CpuShare> host;     // over the whole window
  };

  // Runs the workers for warmup + duration and adds the rates to `row`.
  Status Measure(Row& row, FirstLevel& first) {
    DrainOptions options = drain_flags_.Options();
    options.max_seconds = warmup_ + duration_ + 2 * bench_.rpc_timeout();
    std::atomic<uint64_t> refill_tag{next_tag_};
    options.after_complete = [&](size_t w, size_t completed) {
      return Refill(w, completed, refill_tag);
    };
    DrainWorkers drain(bench_, options);
    Status status;
    std::thread runner([&] { status = drain.Run(); });
    std::this_thread::sleep_for(std::chrono::duration<double>(warmup_));
    Sampled sampled = Sample(drain);
    drain.Stop();
    runner.join();
    next_tag_ = refill_tag.load();
    if (!status.ok()) return status;
    AddRates(row, sampled, first);
    row.emplace_back("lease_ms_p50", drain.lease_ms().p50);
    row.emplace_back("lease_ms_p99", drain.lease_ms().p99);
    return Status::Ok();
  }

  // The window's rate, and each second's median rate (of all seconds and of
  // the quiet ones), each also against the first level's.
  static void AddRates(Row& row, const Sampled& sampled, FirstLevel& first) {
    double rate = static_cast<double>(sampled.cycles) / sampled.seconds;
    bool is_first = first.rate == 0;
    if (is_first) first.rate = rate;
    row.emplace_back("cycles", static_cast<int64_t>(sampled.cycles));
    row.emplace_back("seconds", sampled.seconds);
    row.emplace_back("cycles_per_s", rate);
    row.emplace_back("vs_first", rate / first.rate);
    // The levels are minutes apart, and a second in which the hypervisor
    // took part of the machine is slower for that alone: the median of
    // the quiet seconds sets the levels side by side without it.
    if (sampled.host) {
      row.emplace_back("host_steal_pct", sampled.host->steal_pct);
    }
    if (!sampled.rates.empty()) {
      row.emplace_back("rate_1s_p50", Summarize(sampled.rates).p50);
    }
    row.emplace_back("quiet_s",
                     static_cast<int64_t>(sampled.quiet_rates.size()));
    if (!sampled.quiet_rates.empty()) {
      double quiet = Summarize(sampled.quiet_rates).p50;
      if (is_first) first.quiet_rate = quiet;
      row.emplace_back("quiet_rate_1s_p50", quiet);
      if (first.quiet_rate) {
        row.emplace_back("quiet_vs_first", quiet / *first.quiet_rate);
      }
    }
  }

  // Counts the cycles of --duration from now, and each second's rate and
  // whether it was quiet (CpuReadings).
  Sampled Sample(const DrainWorkers& drain) const {
    Sampled sampled;
    auto start = Clock::now();
    auto end = start + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(duration_));
    uint64_t at_start = drain.completed();
    std::optional<CpuTimes> host_start = ReadHostCpu();
    CpuReadings readings;
    readings.Add(start, host_start);
    uint64_t last = at_start;
    auto last_time = start;
    for (auto next = start + std::chrono::seconds(1); next <= end;
         next += std::chrono::seconds(1)) {
      std::this_thread::sleep_until(next);
      uint64_t done = drain.completed();
      auto now = Clock::now();
      readings.Add(now, ReadHostCpu());
      double rate = static_cast<double>(done - last) /
                    std::chrono::duration<double>(now - last_time).count();
      sampled.rates.push_back(rate);
      if (readings.Quiet(last_time, now)) sampled.quiet_rates.push_back(rate);
      last = done;
      last_time = now;
    }
    std::this_thread::sleep_until(end);
    sampled.cycles = drain.completed() - at_start;
    sampled.seconds = SecondsSince(start);
    std::optional<CpuTimes> host_end = ReadHostCpu();
    if (host_start && host_end) {
      sampled.host = ShareBetween(*host_start, *host_end);
    }
    return sampled;
  }

  // Enqueues `completed` new jobs, round robin over the tenants.
  Status Refill(size_t w, size_t completed, std::atomic<uint64_t>& tag) {
    if (completed == 0) return Status::Ok();
    // A stub is a thin handle on the shared channel; making one per call
    // costs far less than the call.
    std::unique_ptr<v1::Producer::Stub> stub = bench_.Producer(w);
    v1::EnqueueBatchRequest request;
    uint64_t first = tag.fetch_add(completed);
    for (uint64_t i = first; i < first + completed; ++i) {
      *request.add_jobs() =
          MakeJob(bench_, tenants_list_[i % tenants_list_.size()], i);
    }
    grpc::ClientContext context;
    bench_.SetDeadline(context);
    v1::EnqueueBatchResponse response;
    grpc::Status status = stub->EnqueueBatch(&context, request, &response);
    if (!status.ok()) return FromGrpc(status, "EnqueueBatch");
    for (const v1::EnqueueResult& result : response.results()) {
      if (result.code() != 0) {
        return Status(static_cast<StatusCode>(result.code()),
                      "EnqueueBatch: " + result.message());
      }
    }
    return Status::Ok();
  }

  BenchContext bench_;
  std::vector<uint64_t> levels_{1000, 2'000'000};
  size_t tenants_ = 100;
  DrainFlags drain_flags_;
  double warmup_ = 1;
  double duration_ = 5;
  size_t fill_producers_ = 4;
  double fill_timeout_ = 900;

  std::vector<std::string> tenants_list_;
  uint64_t next_tag_ = 1;
};

}  // namespace

std::unique_ptr<Scenario> MakeBacklogScenario() {
  return std::make_unique<BacklogScenario>();
}

}  // namespace fairq::bench
