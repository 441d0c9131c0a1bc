// Command: one fairqctl subcommand. main.cc keeps the registry; each command
// declares its own CLI11 subcommand and flags, then runs once parsing is done.
//
// Not thread-safe; main() uses each command once, on its one thread.
#ifndef FAIRQ_CLIENT_FAIRQCTL_COMMAND_H_
#define FAIRQ_CLIENT_FAIRQCTL_COMMAND_H_

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <ostream>
#include <string>

namespace fairq::ctl {

// Process exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the work itself failed
inline constexpr int kExitUsage = 2;    // bad flags or bad input files

// A number that is finite: CLI11's Range lets "nan" through, since every
// comparison with NaN is false, and a NaN or a huge value cast to an
// integer is undefined. Use before a Range.
inline CLI::Validator Finite() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        double value = 0;
        const char* end = input.data() + input.size();
        auto [ptr, error] = std::from_chars(input.data(), end, value);
        if (error != std::errc() || ptr != end || !std::isfinite(value)) {
          return "expected a finite number, got " + input;
        }
        return "";
      },
      "FINITE");
}

class Command {
 public:
  virtual ~Command() = default;

  // Adds this command's subcommand, with its help text and flags, to `app`
  // and returns it; the flags bind to members of this command.
  virtual CLI::App* Register(CLI::App& app) = 0;

  // Runs after a successful parse; returns the process exit code. Results go
  // to `out`, diagnostics to `err`.
  virtual int Run(std::ostream& out, std::ostream& err) = 0;
};

}  // namespace fairq::ctl

#endif  // FAIRQ_CLIENT_FAIRQCTL_COMMAND_H_
