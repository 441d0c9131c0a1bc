#include "fairqctl/simulate_command.h"

#include <utility>

#include "sched/types.h"
#include "sim/report.h"
#include "sim/scenario.h"
#include "sim/simulator.h"

namespace fairq::ctl {
namespace {

class SimulateCommand : public Command {
 public:
  CLI::App* Register(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "simulate",
        "Run a scenario file through the scheduler in virtual time and "
        "compare policies");
    sub->add_option("scenario", args_.scenario_path, "Scenario YAML file")
        ->required();
    // One name per --policy, repeatable; a greedy list would swallow the
    // scenario path in `--policy drr flood.yaml`.
    sub->add_option("--policy", args_.policies,
                    "Policy to run (fifo, rr, hard-cap, wc-cap, drr); "
                    "repeatable; default: all five")
        ->expected(1)
        ->allow_extra_args(false)
        ->take_all();
    sub->add_flag("--json", args_.json, "Print one JSON object");
    return sub;
  }

  int Run(std::ostream& out, std::ostream& err) override {
    return RunSimulate(args_, out, err);
  }

 private:
  SimulateArgs args_;
};

// Unknown names are reported before any simulation runs.
StatusOr<std::vector<sched::Policy>> ParsePolicies(
    const std::vector<std::string>& names) {
  std::vector<sched::Policy> policies;
  for (const std::string& name : names) {
    StatusOr<sched::Policy> policy = sched::ParsePolicy(name);
    if (!policy.ok()) return policy.status();
    policies.push_back(*policy);
  }
  return policies;
}

}  // namespace

std::unique_ptr<Command> MakeSimulateCommand() {
  return std::make_unique<SimulateCommand>();
}

int RunSimulate(const SimulateArgs& args, std::ostream& out,
                std::ostream& err) {
  StatusOr<std::vector<sched::Policy>> policies = ParsePolicies(args.policies);
  if (!policies.ok()) {
    err << "fairqctl simulate: --" << policies.status().message() << "\n";
    return kExitUsage;
  }
  StatusOr<sim::Scenario> scenario = sim::LoadScenario(args.scenario_path);
  if (!scenario.ok()) {
    err << scenario.status().message() << "\n";
    bool bad_input = scenario.status().code() == StatusCode::kInvalidArgument ||
                     scenario.status().code() == StatusCode::kNotFound;
    return bad_input ? kExitUsage : kExitFailure;
  }
  if (policies->empty()) *policies = scenario->policies;
  StatusOr<std::vector<sim::PolicyResult>> results =
      sim::SimulateAll(*scenario, *policies);
  if (!results.ok()) {
    err << "fairqctl simulate: " << results.status().ToString() << "\n";
    return kExitFailure;
  }
  out << (args.json ? sim::FormatJson(*scenario, *results)
                    : sim::FormatTable(*scenario, *results));
  return out ? kExitOk : kExitFailure;
}

}  // namespace fairq::ctl
