// RunCommand: runs a shell command line, as a user would at a terminal, and
// returns its exit code and standard output (append "2>&1" to the command
// line to capture standard error too). For tests of the command-line tools.
//
// Thread-safe: each call has its own pipe.
#ifndef FAIRQ_TESTS_INTEGRATION_RUN_COMMAND_H_
#define FAIRQ_TESTS_INTEGRATION_RUN_COMMAND_H_

#include <string>

namespace fairq::testing {

struct CommandResult {
  int exit_code = -1;  // -1 when it did not exit normally or could not start
  std::string output;
};

CommandResult RunCommand(const std::string& command_line);

// How often `what` occurs in `text` (a command's output, a log), not
// counting overlaps.
int CountOf(const std::string& text, const std::string& what);

}  // namespace fairq::testing

#endif  // FAIRQ_TESTS_INTEGRATION_RUN_COMMAND_H_
