#include "server/broker/commands.h"

#include <type_traits>

namespace fairq::server {

void FinishCommand(Command& command, const Status& status) {
  std::visit(
      [&](auto& c) {
        if constexpr (requires { c.done; }) {
          if (c.done) c.done(status);
        }
      },
      command);
}

}  // namespace fairq::server
