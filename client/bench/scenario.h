// Scenario: one fairq-bench subcommand. main.cc keeps the registry; each
// scenario declares its own CLI11 subcommand and flags, talks to a fairqd
// that is already running, and prints one result table (or, with --json,
// exactly one JSON line) to `out`.
//
// Not thread-safe: main() runs each scenario once, on its one thread; a
// scenario starts and joins its own load threads inside Run().
#ifndef FAIRQ_CLIENT_BENCH_SCENARIO_H_
#define FAIRQ_CLIENT_BENCH_SCENARIO_H_

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

#include "base/status.h"

namespace fairq::bench {

// Process exit codes shared by every scenario.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // an RPC failed or a bound was hit
inline constexpr int kExitUsage = 2;    // bad flags

// Prints "fairq-bench NAME: CODE: message" to `err`; returns kExitFailure.
inline int Fail(const char* name, const Status& status, std::ostream& err) {
  err << "fairq-bench " << name << ": " << status.ToString() << "\n";
  return kExitFailure;
}

class Scenario {
 public:
  virtual ~Scenario() = default;

  // Adds this scenario's subcommand, with its help text and flags, to `app`
  // and returns it; the flags bind to members of this scenario.
  virtual CLI::App* Register(CLI::App& app) = 0;

  // Runs after a successful parse; returns the process exit code. Results
  // go to `out`, progress and diagnostics to `err`.
  virtual int Run(std::ostream& out, std::ostream& err) = 0;
};

// One factory per scenario, each in its own file.
std::unique_ptr<Scenario> MakeEnqueueScenario();
std::unique_ptr<Scenario> MakeCycleScenario();
std::unique_ptr<Scenario> MakeLatencyScenario();
std::unique_ptr<Scenario> MakeFloodScenario();
std::unique_ptr<Scenario> MakeBacklogScenario();
std::unique_ptr<Scenario> MakeRecoveryScenario();
std::unique_ptr<Scenario> MakePingScenario();

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_SCENARIO_H_
