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

#include "bench/bench_context.h"
#include "bench/in_flight_calls.h"
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
    uint64_t late = RunPaced(Clock::now(), pace_.count(), pace_.interval(),
                             [&](uint64_t) { Issue(stub); });
    if (Status done = calls_.WaitForAll(bench_.rpc_timeout() + 5); !done.ok()) {
      return Fail("ping", done, err);
    }

    Report report("ping");
    bench_.Describe(report);
    report.Fact("method", kHealthCheck);
    Row row = {{"rate", pace_.rate}, {"late", static_cast<int64_t>(late)}};
    AddSummary(row, "rtt_ms_", calls_.reply_ms());
    report.AddRow(std::move(row));
    report.Print(out, bench_.json());
    return kExitOk;
  }

 private:
  // One call in flight; deleted by its reply callback.
  struct Call {
    grpc::ClientContext context;
    grpc::ByteBuffer request;  // an empty HealthCheckRequest: all services
    grpc::ByteBuffer response;
    Clock::time_point issued;
  };

  void Issue(grpc::GenericStub& stub) {
    auto* call = new Call;
    grpc::Slice empty;
    call->request = grpc::ByteBuffer(&empty, 1);
    bench_.SetDeadline(call->context);
    calls_.Started();
    call->issued = Clock::now();
    stub.UnaryCall(&call->context, kHealthCheck, grpc::StubOptions(),
                   &call->request, &call->response,
                   [this, call](grpc::Status status) {
                     calls_.Finish(std::unique_ptr<Call>(call), status);
                   });
  }

  BenchContext bench_;
  Pace pace_;

  InFlightCalls calls_{"Health/Check"};
};

}  // namespace

std::unique_ptr<Scenario> MakePingScenario() {
  return std::make_unique<PingScenario>();
}

}  // namespace fairq::bench
