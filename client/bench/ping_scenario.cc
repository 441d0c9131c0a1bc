// `fairq-bench ping`: the floor under every latency fairq-bench reports.
// gRPC health checks (answered on fairqd's dispatcher thread between its
// turns, without the broker, the store or an fsync) go out at a fixed
// --rate for --duration on the schedule `latency` uses, and the round trip
// of each is measured. Whatever `latency` reports above this floor is the
// broker's and the store's; the floor itself is the machine (two loopback
// legs and the thread wake-ups at both ends) plus the dispatcher's turns.
#include <grpcpp/generic/generic_stub.h>

#include <chrono>
#include <memory>
#include <vector>

#include "bench/bench_context.h"
#include "bench/completion_loop.h"
#include "bench/paced_schedule.h"
#include "bench/report.h"
#include "bench/scenario.h"
#include "bench/stats.h"

namespace fairq::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr char kHealthCheck[] = "/grpc.health.v1.Health/Check";

class PingScenario final : public Scenario {
 public:
  CLI::App* Register(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "ping", "round trip of a no-op RPC (gRPC health check) at a fixed rate");
    pace_.AddFlags(sub, "calls");
    bench_.AddFlags(sub);
    return sub;
  }

  int Run(std::ostream& out, std::ostream& err) override {
    if (Status up = bench_.Connect(); !up.ok()) return Fail("ping", up, err);
    grpc::GenericStub stub(bench_.Channel(0));
    CompletionLoop loop;
    uint64_t late = ServePaced(
        loop, Clock::now(), pace_.count(), pace_.interval(),
        [&](uint64_t) { Issue(stub, loop); },
        [this] { return answered_ == pace_.count(); },
        SecondsFromNow(pace_.duration + bench_.rpc_timeout() + 5));
    Status drained = loop.Drain(SecondsFromNow(bench_.rpc_timeout() + 5));
    if (first_error_.ok()) first_error_ = drained;
    if (!first_error_.ok()) return Fail("ping", first_error_, err);

    Report report("ping");
    bench_.Describe(report);
    report.Fact("method", kHealthCheck);
    Row row = {{"rate", pace_.rate}, {"late", static_cast<int64_t>(late)}};
    AddSummary(row, "rtt_ms_", Summarize(rtt_ms_));
    report.AddRow(std::move(row));
    bench_.Print(report, out);
    return kExitOk;
  }

 private:
  // One call in flight; its reply is handled on the loop's thread.
  struct Call final : CompletionLoop::UnaryCall<grpc::ByteBuffer> {
    explicit Call(PingScenario* s) : scenario(s) {}
    void Done() override { scenario->Replied(*this); }
    PingScenario* scenario;
    Clock::time_point issued;
  };

  // Pacer thread.
  void Issue(grpc::GenericStub& stub, CompletionLoop& loop) {
    auto* call = new Call(this);
    grpc::Slice empty;  // an empty HealthCheckRequest: all services
    grpc::ByteBuffer request(&empty, 1);
    bench_.SetDeadline(call->context);
    call->issued = Clock::now();
    loop.Start(call, stub.PrepareUnaryCall(&call->context, kHealthCheck,
                                           request, loop.queue()));
  }

  // Loop thread, as is everything below.
  void Replied(const Call& call) {
    ++answered_;
    if (call.status.ok()) {
      rtt_ms_.push_back(MillisSince(call.issued));
    } else if (first_error_.ok()) {
      first_error_ = FromGrpc(call.status, "Health/Check");
    }
  }

  BenchContext bench_;
  Pace pace_;

  uint64_t answered_ = 0;
  std::vector<double> rtt_ms_;
  Status first_error_;
};

}  // namespace

std::unique_ptr<Scenario> MakePingScenario() {
  return std::make_unique<PingScenario>();
}

}  // namespace fairq::bench
