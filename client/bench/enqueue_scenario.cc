// `fairq-bench enqueue`: producer throughput by batch size and by number of
// concurrent producers. Every combination runs for --duration (or until
// --jobs jobs); batch size 1 uses Enqueue, larger sizes EnqueueBatch. Each
// producer is a thread with a synchronous stub and its own tenant, and
// reuses one prebuilt request, so the client spends little CPU per job.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "bench/bench_context.h"
#include "bench/job_ops.h"
#include "bench/parallel.h"
#include "bench/report.h"
#include "bench/scenario.h"

namespace fairq::bench {
namespace {

using Clock = std::chrono::steady_clock;

// What one combination measured.
struct Tally {
  std::atomic<uint64_t> jobs{0}, calls{0}, refused{0};
  std::mutex mu;  // guards the fields below
  std::vector<double> call_ms;
  Status first_error;
};

class EnqueueScenario final : public Scenario {
 public:
  CLI::App* Register(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "enqueue", "enqueue throughput by batch size and producer count");
    sub->add_option("--batches", batches_, "batch sizes (1 uses Enqueue)")
        ->delimiter(',')
        ->capture_default_str()
        ->check(CLI::Range(1, 1000));
    sub->add_option("--producers", producers_, "concurrent producer counts")
        ->delimiter(',')
        ->capture_default_str()
        ->check(CLI::Range(1, 256));
    sub->add_option("--duration", duration_, "seconds per combination")
        ->capture_default_str()
        ->check(CLI::Range(0.01, 600.0));
    sub->add_option("--jobs", jobs_,
                    "stop a combination after this many jobs (0: no limit)")
        ->capture_default_str();
    bench_.AddFlags(sub);
    return sub;
  }

  int Run(std::ostream& out, std::ostream& err) override {
    if (Status up = bench_.Connect(); !up.ok()) return Fail("enqueue", up, err);
    Report report("enqueue");
    bench_.Describe(report);
    report.Fact("payload_bytes", static_cast<int64_t>(kPayloadBytes));
    std::vector<std::string> tenants;
    size_t most = *std::max_element(producers_.begin(), producers_.end());
    tenants = TenantNames(bench_, "p", most);
    for (size_t batch : batches_) {
      for (size_t producers : producers_) {
        Row row;
        Status status = Measure(batch, producers, tenants, row);
        if (!status.ok()) return Fail("enqueue", status, err);
        report.AddRow(std::move(row));
      }
    }
    bench_.Print(report, out);
    bench_.Cleanup(tenants, err);
    return kExitOk;
  }

 private:
  Status Measure(size_t batch, size_t producers,
                 const std::vector<std::string>& tenants, Row& row) {
    Tally tally;
    Clock::time_point start = Clock::now();
    Clock::time_point end =
        start + std::chrono::duration_cast<Clock::duration>(
                    std::chrono::duration<double>(duration_));
    RunParallel(producers, [&](size_t p) {
      Status status = Produce(p, batch, tenants[p], end, tally);
      std::lock_guard<std::mutex> lock(tally.mu);
      if (!status.ok() && tally.first_error.ok()) tally.first_error = status;
    });
    double seconds = SecondsSince(start);
    if (!tally.first_error.ok()) return tally.first_error;
    row = {{"batch", static_cast<int64_t>(batch)},
           {"producers", static_cast<int64_t>(producers)},
           {"jobs", static_cast<int64_t>(tally.jobs.load())},
           {"seconds", seconds},
           {"jobs_per_s", static_cast<double>(tally.jobs.load()) / seconds},
           {"refused", static_cast<int64_t>(tally.refused.load())}};
    AddSummary(row, "call_ms_", Summarize(std::move(tally.call_ms)));
    return Status::Ok();
  }

  // One producer: calls until `end` or until the combination has --jobs.
  // The time bound also bounds the count of calls.
  Status Produce(size_t p, size_t batch, const std::string& tenant,
                 Clock::time_point end, Tally& tally) {
    std::unique_ptr<v1::Producer::Stub> stub = bench_.Producer(p);
    v1::EnqueueBatchRequest request;
    for (size_t i = 0; i < batch; ++i) {
      *request.add_jobs() = MakeJob(bench_, tenant, i + 1);
    }
    std::vector<double> call_ms;
    Status status;
    while (Clock::now() < end && (jobs_ == 0 || tally.jobs.load() < jobs_)) {
      Clock::time_point call = Clock::now();
      StatusOr<size_t> accepted = Call(*stub, request, tally);
      if (!accepted.ok()) {
        status = accepted.status();
        break;
      }
      call_ms.push_back(SecondsSince(call) * 1000);
      tally.calls.fetch_add(1);
      tally.jobs.fetch_add(*accepted);
    }
    std::lock_guard<std::mutex> lock(tally.mu);
    tally.call_ms.insert(tally.call_ms.end(), call_ms.begin(), call_ms.end());
    return status;
  }

  // One Enqueue (batch of one) or EnqueueBatch; returns the jobs accepted.
  // Back-pressure is counted, not an error.
  StatusOr<size_t> Call(v1::Producer::Stub& stub,
                        const v1::EnqueueBatchRequest& request, Tally& tally) {
    grpc::ClientContext context;
    bench_.SetDeadline(context);
    grpc::Status status;
    v1::EnqueueBatchResponse batch_response;
    if (request.jobs_size() == 1) {
      v1::EnqueueRequest single;
      *single.mutable_job() = request.jobs(0);
      v1::EnqueueResponse response;
      status = stub.Enqueue(&context, single, &response);
      if (status.ok()) batch_response.add_results();  // code 0: accepted
    } else {
      status = stub.EnqueueBatch(&context, request, &batch_response);
    }
    size_t size = static_cast<size_t>(request.jobs_size());
    if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      tally.refused.fetch_add(size);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      return size_t{0};
    }
    if (!status.ok()) return FromGrpc(status, "enqueue");
    size_t accepted = 0;
    for (const v1::EnqueueResult& result : batch_response.results()) {
      if (result.code() == 0) ++accepted;
    }
    tally.refused.fetch_add(size - accepted);
    return accepted;
  }

  BenchContext bench_;
  std::vector<size_t> batches_{1, 10, 100};
  std::vector<size_t> producers_{1, 4, 16};
  double duration_ = 3;
  uint64_t jobs_ = 0;
};

}  // namespace

std::unique_ptr<Scenario> MakeEnqueueScenario() {
  return std::make_unique<EnqueueScenario>();
}

}  // namespace fairq::bench
