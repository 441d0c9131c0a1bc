// fairqctl: the operator's command-line tool for fairq.
//
// main() is only a registry: each subcommand lives in its own file behind the
// Command interface, declares its own flags and returns the exit code.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <vector>

#include "fairqctl/admin_commands.h"
#include "fairqctl/command.h"
#include "fairqctl/job_commands.h"
#include "fairqctl/simulate_command.h"

namespace {

// Every subcommand, in the order `fairqctl --help` lists them.
std::vector<std::unique_ptr<fairq::ctl::Command>> AllCommands() {
  std::vector<std::unique_ptr<fairq::ctl::Command>> commands;
  commands.push_back(fairq::ctl::MakeEnqueueCommand());
  commands.push_back(fairq::ctl::MakeGetCommand());
  commands.push_back(fairq::ctl::MakeCancelCommand());
  commands.push_back(fairq::ctl::MakeTenantsCommand());
  commands.push_back(fairq::ctl::MakeStatsCommand());
  commands.push_back(fairq::ctl::MakeDeadCommand());
  commands.push_back(fairq::ctl::MakePauseCommand());
  commands.push_back(fairq::ctl::MakeResumeCommand());
  commands.push_back(fairq::ctl::MakeSimulateCommand());
  return commands;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fairqctl: operate and simulate the fairq job broker"};
  app.require_subcommand(1);
  std::vector<std::unique_ptr<fairq::ctl::Command>> commands = AllCommands();
  std::vector<CLI::App*> subcommands;
  for (const auto& command : commands) {
    subcommands.push_back(command->Register(app));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // app.exit prints help or the parse error; --help is a success.
    return app.exit(e) == 0 ? fairq::ctl::kExitOk : fairq::ctl::kExitUsage;
  }
  for (size_t i = 0; i < commands.size(); ++i) {
    if (subcommands[i]->parsed()) return commands[i]->Run(std::cout, std::cerr);
  }
  return fairq::ctl::kExitUsage;
}
