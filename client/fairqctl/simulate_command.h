// `fairqctl simulate SCENARIO.yaml [--policy NAME]... [--json]`: runs a
// scenario through the scheduler in virtual time under each policy and prints
// per-tenant waits, finish times and worker-second shares.
//
// Not thread-safe (a Command); RunSimulate itself is safe to call anywhere.
#ifndef FAIRQ_CLIENT_FAIRQCTL_SIMULATE_COMMAND_H_
#define FAIRQ_CLIENT_FAIRQCTL_SIMULATE_COMMAND_H_

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "fairqctl/command.h"

namespace fairq::ctl {

struct SimulateArgs {
  std::string scenario_path;
  std::vector<std::string> policies;  // empty: the scenario's (all five)
  bool json = false;
};

std::unique_ptr<Command> MakeSimulateCommand();

// The command without flag parsing. Returns kExitUsage for a bad scenario
// file or policy name (message on `err`: "file:line: field: problem").
int RunSimulate(const SimulateArgs& args, std::ostream& out, std::ostream& err);

}  // namespace fairq::ctl

#endif  // FAIRQ_CLIENT_FAIRQCTL_SIMULATE_COMMAND_H_
