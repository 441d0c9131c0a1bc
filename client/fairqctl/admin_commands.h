// fairqctl's operator subcommands: `tenants list|get|set`, `pause`,
// `resume`, `stats`, `dead list|requeue`.
//
// Not thread-safe (Commands).
#ifndef FAIRQ_CLIENT_FAIRQCTL_ADMIN_COMMANDS_H_
#define FAIRQ_CLIENT_FAIRQCTL_ADMIN_COMMANDS_H_

#include <memory>

#include "fairqctl/command.h"

namespace fairq::ctl {

std::unique_ptr<Command> MakeTenantsCommand();
std::unique_ptr<Command> MakePauseCommand();
std::unique_ptr<Command> MakeResumeCommand();
std::unique_ptr<Command> MakeStatsCommand();
std::unique_ptr<Command> MakeDeadCommand();

}  // namespace fairq::ctl

#endif  // FAIRQ_CLIENT_FAIRQCTL_ADMIN_COMMANDS_H_
