#include "server/broker/broker_clock.h"

#include <spdlog/spdlog.h>

#include <chrono>

namespace fairq::server {

int64_t NowUnixMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch())
      .count();
}

int64_t BrokerClock::Now() {
  int64_t wall = wall_();
  if (wall >= last_) {
    if (holding_)
      spdlog::info("wall clock caught up; fairqd's clock runs again");
    holding_ = false;
    last_ = wall;
    return last_;
  }
  if (!holding_) {
    spdlog::warn(
        "wall clock stepped back by {} ms; fairqd's clock holds still until "
        "it catches up (lease deadlines and due times wait that long)",
        last_ - wall);
  }
  holding_ = true;
  return last_;
}

}  // namespace fairq::server
