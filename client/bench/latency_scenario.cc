// `fairq-bench latency`: enqueue-to-lease latency under a steady load.
// Single-job Enqueue calls go out at a fixed --rate for --duration, paced by
// a steady_clock schedule (PacedEnqueuer), while --workers workers wait idle
// in long-poll Lease calls. Completions go out in the background
// (Completer), so a worker is back in Lease as soon as a reply arrives.
// Latency is client side: the time the Enqueue call was issued to the time
// the Lease reply carrying that job arrived (matched by the payload's tag).
#include <atomic>
#include <mutex>
#include <utility>

#include "bench/bench_context.h"
#include "bench/completer.h"
#include "bench/job_ops.h"
#include "bench/paced_enqueuer.h"
#include "bench/paced_schedule.h"
#include "bench/parallel.h"
#include "bench/progress.h"
#include "bench/report.h"
#include "bench/scenario.h"

namespace fairq::bench {
namespace {

using Clock = std::chrono::steady_clock;
// Workers start their long polls before the first enqueue.
constexpr std::chrono::milliseconds kStartDelay{200};
constexpr double kLeaseWaitSeconds = 1;

// A leased job's tag and when its Lease reply arrived.
using Arrival = std::pair<uint64_t, Clock::time_point>;

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
    bench_.AddFlags(sub);
    return sub;
  }

  int Run(std::ostream& out, std::ostream& err) override {
    if (Status up = bench_.Connect(); !up.ok()) return Fail("latency", up, err);
    PaceOptions pace;
    pace.tenant = bench_.Tenant("l0");
    pace.count = pace_.count();
    pace.interval = pace_.interval();
    pace.channel = workers_;  // its own connection when --channels allows
    PacedEnqueuer pacer(bench_, pace);
    Completer completer(bench_, workers_ + 1);
    Status status = Drive(pacer, completer);
    Status completed = completer.Close();
    if (!status.ok()) return Fail("latency", status, err);
    if (!completed.ok()) return Fail("latency", completed, err);

    Report report("latency");
    bench_.Describe(report);
    report.Fact("workers", static_cast<int64_t>(workers_));
    report.Fact("slots_per_worker", static_cast<int64_t>(slots_));
    report.AddRow(ResultRow(pacer));
    report.Print(out, bench_.json());
    bench_.Cleanup({pace.tenant}, err);
    return kExitOk;
  }

 private:
  // Runs the workers and the pacer until every accepted job was leased (or
  // the bound ran out); fills arrivals_.
  Status Drive(PacedEnqueuer& pacer, Completer& completer) {
    std::atomic<bool> stop{false};
    Progress received;
    Status paced, leased;
    std::mutex mu;
    double bound = pace_.duration + 2 * bench_.rpc_timeout() + 10;
    Clock::time_point start = Clock::now() + kStartDelay;
    RunParallel(workers_ + 1, [&](size_t i) {
      if (i == workers_) {
        paced = pacer.Run(start);
        received.WaitFor(pacer.accepted(),
                         Clock::now() + std::chrono::seconds(static_cast<int>(
                                            bench_.rpc_timeout())));
        stop.store(true);
        return;
      }
      Status status = Work(i, bound, stop, received, completer);
      if (status.ok()) return;
      std::lock_guard<std::mutex> lock(mu);
      if (leased.ok()) leased = status;
      stop.store(true);
      received.Abort();
    });
    return paced.ok() ? leased : paced;
  }

  // One worker: long-polls until stopped or `bound` seconds pass.
  Status Work(size_t w, double bound, const std::atomic<bool>& stop,
              Progress& received, Completer& completer) {
    std::unique_ptr<v1::Worker::Stub> stub = bench_.Worker(w);
    std::string worker_id = bench_.run_id() + "-lat" + std::to_string(w);
    std::vector<Arrival> arrivals;
    Clock::time_point begin = Clock::now();
    Status status;
    while (!stop.load() && SecondsSince(begin) < bound) {
      StatusOr<v1::LeaseResponse> reply =
          Lease(bench_, *stub, worker_id, static_cast<uint32_t>(slots_),
                static_cast<uint32_t>(slots_), kLeaseWaitSeconds);
      Clock::time_point now = Clock::now();
      if (!reply.ok()) {
        status = reply.status();
        break;
      }
      for (const v1::LeasedJob& leased : reply->jobs()) {
        arrivals.emplace_back(PayloadTag(leased.job().spec().payload()), now);
        completer.Add(leased.job().id(), leased.lease_token(),
                      std::chrono::nanoseconds(0));
      }
      received.Add(static_cast<uint64_t>(reply->jobs_size()));
    }
    std::lock_guard<std::mutex> lock(arrivals_mu_);
    arrivals_.insert(arrivals_.end(), arrivals.begin(), arrivals.end());
    return status;
  }

  Row ResultRow(const PacedEnqueuer& pacer) const {
    std::vector<double> latency_ms;
    const auto& issued = pacer.issued();
    for (const auto& [tag, arrived] : arrivals_) {
      if (tag < 1 || tag > issued.size()) continue;  // not this run's job
      latency_ms.push_back(
          std::chrono::duration<double, std::milli>(arrived - issued[tag - 1])
              .count());
    }
    double span =
        issued.size() > 1
            ? std::chrono::duration<double>(issued.back() - issued.front())
                  .count()
            : 0;
    Row row = {{"rate", pace_.rate},
               {"issued_per_s",
                span > 0 ? static_cast<double>(issued.size() - 1) / span : 0.0},
               {"late", static_cast<int64_t>(pacer.late())},
               {"refused", static_cast<int64_t>(pacer.refused())},
               {"not_leased", static_cast<int64_t>(pacer.accepted()) -
                                  static_cast<int64_t>(latency_ms.size())}};
    AddSummary(row, "lease_ms_", Summarize(std::move(latency_ms)));
    Summary reply = pacer.reply_ms();
    row.emplace_back("enqueue_ms_p50", reply.p50);
    row.emplace_back("enqueue_ms_p99", reply.p99);
    return row;
  }

  BenchContext bench_;
  Pace pace_;
  size_t workers_ = 4;
  size_t slots_ = 16;

  std::mutex arrivals_mu_;
  std::vector<Arrival> arrivals_;  // guarded by arrivals_mu_ during Drive()
};

}  // namespace

std::unique_ptr<Scenario> MakeLatencyScenario() {
  return std::make_unique<LatencyScenario>();
}

}  // namespace fairq::bench
