// fairqctl's job subcommands: `enqueue`, `get JOB_ID`, `cancel JOB_ID`.
//
// Not thread-safe (Commands).
#ifndef FAIRQ_CLIENT_FAIRQCTL_JOB_COMMANDS_H_
#define FAIRQ_CLIENT_FAIRQCTL_JOB_COMMANDS_H_

#include <memory>

#include "fairqctl/command.h"

namespace fairq::ctl {

std::unique_ptr<Command> MakeEnqueueCommand();
std::unique_ptr<Command> MakeGetCommand();
std::unique_ptr<Command> MakeCancelCommand();

}  // namespace fairq::ctl

#endif  // FAIRQ_CLIENT_FAIRQCTL_JOB_COMMANDS_H_
