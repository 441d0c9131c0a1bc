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
#include <string_view>

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

// An integer written in decimal: CLI11 reads integers with strtoull and
// strtoll in base 0, so "010" would be 8, "0x10" 16, and "-1" for an
// unsigned option 2^64 - 1. `negative`: whether a minus sign may lead.
inline CLI::Validator Decimal(bool negative = false) {
  return CLI::Validator(
      [negative](std::string& input) -> std::string {
        std::string_view digits = input;
        if (negative && !digits.empty() && digits.front() == '-') {
          digits.remove_prefix(1);
        }
        bool ok = !digits.empty() && (digits == "0" || digits.front() != '0');
        for (char c : digits) ok = ok && c >= '0' && c <= '9';
        if (ok) return "";
        return "expected a decimal integer" +
               std::string(negative ? "" : " >= 0") +
               " without leading zeros, got " + input;
      },
      "DECIMAL");
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
