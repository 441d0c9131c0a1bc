// fairq-bench: the load generator for a running fairqd.
//
//   fairq-bench SCENARIO [flags]   (fairq-bench --help lists them)
//
// It starts nothing itself: point --server (or $FAIRQ_SERVER) at a fairqd
// on 127.0.0.1. main() is only the registry of scenarios; each lives in its
// own file behind the Scenario interface, declares its flags and returns
// the exit code.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <vector>

#include "bench/scenario.h"

namespace {

// Every scenario, in the order `fairq-bench --help` lists them.
std::vector<std::unique_ptr<fairq::bench::Scenario>> AllScenarios() {
  std::vector<std::unique_ptr<fairq::bench::Scenario>> scenarios;
  scenarios.push_back(fairq::bench::MakeEnqueueScenario());
  scenarios.push_back(fairq::bench::MakeCycleScenario());
  scenarios.push_back(fairq::bench::MakeLatencyScenario());
  scenarios.push_back(fairq::bench::MakeFloodScenario());
  scenarios.push_back(fairq::bench::MakeBacklogScenario());
  scenarios.push_back(fairq::bench::MakeRecoveryScenario());
  scenarios.push_back(fairq::bench::MakePingScenario());
  return scenarios;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fairq-bench: load generator for a running fairqd"};
  app.require_subcommand(1);
  std::vector<std::unique_ptr<fairq::bench::Scenario>> scenarios =
      AllScenarios();
  std::vector<CLI::App*> subcommands;
  for (const auto& scenario : scenarios) {
    subcommands.push_back(scenario->Register(app));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // app.exit prints help or the parse error; --help is a success.
    return app.exit(e) == 0 ? fairq::bench::kExitOk : fairq::bench::kExitUsage;
  }
  for (size_t i = 0; i < scenarios.size(); ++i) {
    if (subcommands[i]->parsed()) {
      const int code = scenarios[i]->Run(std::cout, std::cerr);
      // Exits without tearing gRPC down. Destroying the channels right
      // after the last reply callback crashed inside gRPC 1.51
      // (grpc_completion_queue_next on its callback thread, while
      // ~Channel ran on this one): in 4 of 180 `ping` runs while each
      // call's ClientContext was freed after it was counted, in none of
      // 180 since it is freed first, but gRPC still finishes each call on
      // that thread after the callback returns, and its teardown of the
      // callback queue is fragile (grpc/grpc#32584). The results are
      // printed by now, so there is nothing left to release.
      std::cout.flush();
      std::cerr.flush();
      std::_Exit(code);
    }
  }
  return fairq::bench::kExitUsage;
}
