// `fairq-bench latency`: enqueue-to-lease latency under a steady load.
// Single-job Enqueue calls go out at a fixed --rate for --duration, paced by
// a steady_clock schedule, while --workers workers wait idle in long-poll
// Lease calls; a worker polls again as soon as a reply arrives and completes
// its jobs meanwhile (LatencyLoop). Latency is client side: the time the
// Enqueue call was issued to the time the Lease reply carrying that job was
// read (matched by the payload's tag). With --sdk-workers the workers are
// the SDK's `Worker`s and the latency ends at the handler's start. The same
// is summed up again over the jobs sent and leased within quiet stretches
// (cpu_readings.h).
#include "bench/bench_context.h"
#include "bench/latency_loop.h"
#include "bench/paced_schedule.h"
#include "bench/quiet_seconds.h"
#include "bench/report.h"
#include "bench/scenario.h"

namespace fairq::bench {
namespace {

using Clock = std::chrono::steady_clock;
// Workers start their long polls before the first enqueue.
constexpr std::chrono::milliseconds kStartDelay{200};
constexpr double kLeaseWaitSeconds = 1;

class LatencyScenario final : public Scenario {
 public:
  CLI::App* Register(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "latency", "enqueue-to-lease latency at a fixed enqueue rate");
    pace_.AddFlags(sub, "enqueues");
    sub->add_option("--workers", workers_, "workers waiting in Lease")
        ->capture_default_str()
        ->check(CLI::Range(1, 256));
    sub->add_option("--slots", slots_, "slots (and max_jobs) per worker")
        ->capture_default_str()
        ->check(CLI::Range(1, 10'000));
    sub->add_flag("--sdk-workers", sdk_workers_,
                  "SDK Workers (--slots each) instead of the bench's own "
                  "polls; latency to the handler's start");
    bench_.AddFlags(sub);
    return sub;
  }

  int Run(std::ostream& out, std::ostream& err) override {
    if (Status up = bench_.Connect(); !up.ok()) return Fail("latency", up, err);
    LatencyOptions options;
    options.tenant = bench_.Tenant("l0");
    options.count = pace_.count();
    options.interval = pace_.interval();
    options.workers = workers_;
    options.slots = static_cast<uint32_t>(slots_);
    options.lease_wait_seconds = kLeaseWaitSeconds;
    options.sdk_workers = sdk_workers_;
    LatencyLoop loop(bench_, options);
    const Clock::time_point start = Clock::now() + kStartDelay;
    QuietSeconds quiet;
    Status status =
        loop.Run(start, pace_.duration + 2 * bench_.rpc_timeout() + 10);
    quiet.Stop();
    if (!status.ok()) return Fail("latency", status, err);

    Report report("latency");
    bench_.Describe(report);
    report.Fact("workers", static_cast<int64_t>(workers_));
    report.Fact("slots_per_worker", static_cast<int64_t>(slots_));
    // With SDK workers the lease_ms_ figures end at the handler's start.
    report.Fact("workers_kind", sdk_workers_ ? "sdk" : "loop");
    report.AddRow(ResultRow(loop, start, quiet.readings()));
    bench_.Print(report, out);
    bench_.Cleanup({options.tenant}, err);
    return kExitOk;
  }

 private:
  // lease_ms_ is timed from each Enqueue's send, as the issue defines the
  // figure; lease_from_slot_ms_ from the time the schedule gave it, which
  // also counts how late the load generator sent it (`late`: by more than
  // 200 us). A busy machine delays both sides at once, so the first alone
  // would hide that part of the tail (coordinated omission).
  // quiet_lease_ms_ are the jobs sent and leased within stretches the
  // hypervisor left alone (CpuReadings; quiet_s of them): the figure
  // without its steal.
  Row ResultRow(const LatencyLoop& loop, Clock::time_point start,
                const CpuReadings& readings) const {
    std::vector<double> latency_ms, from_slot_ms, quiet_ms;
    const auto& issued = loop.issued();
    auto millis = [](Clock::duration d) {
      return std::chrono::duration<double, std::milli>(d).count();
    };
    for (const auto& [tag, arrived] : loop.arrivals()) {
      if (tag < 1 || tag > issued.size()) continue;  // not this run's job
      latency_ms.push_back(millis(arrived - issued[tag - 1]));
      if (readings.Quiet(issued[tag - 1], arrived)) {
        quiet_ms.push_back(latency_ms.back());
      }
      from_slot_ms.push_back(
          millis(arrived - SlotOf(start, pace_.interval(), tag - 1)));
    }
    double span =
        issued.size() > 1
            ? std::chrono::duration<double>(issued.back() - issued.front())
                  .count()
            : 0;
    Row row = {{"rate", pace_.rate},
               {"issued_per_s",
                span > 0 ? static_cast<double>(issued.size() - 1) / span : 0.0},
               {"late", static_cast<int64_t>(loop.late())},
               {"refused", static_cast<int64_t>(loop.refused())},
               {"not_leased", static_cast<int64_t>(loop.accepted()) -
                                  static_cast<int64_t>(latency_ms.size())}};
    AddSummary(row, "lease_ms_", Summarize(std::move(latency_ms)));
    AddSummary(row, "lease_from_slot_ms_", Summarize(std::move(from_slot_ms)));
    row.emplace_back("quiet_s",
                     static_cast<int64_t>(readings.quiet_stretches()));
    AddSummary(row, "quiet_lease_ms_", Summarize(std::move(quiet_ms)));
    Summary reply = loop.reply_ms();
    row.emplace_back("enqueue_ms_p50", reply.p50);
    row.emplace_back("enqueue_ms_p99", reply.p99);
    return row;
  }

  BenchContext bench_;
  Pace pace_;
  size_t workers_ = 4;
  size_t slots_ = 16;
  bool sdk_workers_ = false;
};

}  // namespace

std::unique_ptr<Scenario> MakeLatencyScenario() {
  return std::make_unique<LatencyScenario>();
}

}  // namespace fairq::bench
