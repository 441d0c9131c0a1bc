#include "server/broker/broker_clock.h"

#include <chrono>

#include "server/logging/logging.h"

namespace fairq::server {

int64_t NowUnixMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch())
      .count();
}

int64_t BrokerClock::Now() {
  int64_t wall = wall_();
  if (wall >= last_) {
    if (holding_) logging::Log(spdlog::level::info, "wall clock caught up");
    holding_ = false;
    last_ = wall;
    return last_;
  }
  if (!holding_) {
    logging::Log(spdlog::level::warn,
                 "wall clock stepped back; broker time holds until it "
                 "catches up",
                 {{"step_ms", last_ - wall}});
  }
  holding_ = true;
  return last_;
}

}  // namespace fairq::server
