#include "server/broker/broker_clock.h"

#include <chrono>

#include "server/logging/logging.h"

namespace fairq::server {
namespace {

template <class Clock, class Unit>
int64_t Count() {
  return std::chrono::duration_cast<Unit>(Clock::now().time_since_epoch())
      .count();
}

// The two clocks advance at the same rate (NTP's slewing adjusts both), so
// their difference changes only when the wall clock is stepped; a step back
// smaller than this is not worth a warning.
constexpr int64_t kLoggedStepUs = 1'000;

}  // namespace

int64_t NowUnixMs() {
  return Count<std::chrono::system_clock, std::chrono::milliseconds>();
}

int64_t NowUnixUs() {
  return Count<std::chrono::system_clock, std::chrono::microseconds>();
}

int64_t NowSteadyUs() {
  return Count<std::chrono::steady_clock, std::chrono::microseconds>();
}

int64_t BrokerClock::Now() {
  const int64_t steady = steady_us_();
  const int64_t offset = wall_us_() - steady;
  if (!offset_us_ || offset >= *offset_us_) {
    if (behind_) logging::Log(spdlog::level::info, "wall clock caught up");
    behind_ = false;
    offset_us_ = offset;
  } else if (!behind_ && *offset_us_ - offset >= kLoggedStepUs) {
    behind_ = true;
    logging::Log(spdlog::level::warn,
                 "wall clock stepped back; broker time runs on from where "
                 "it was until the wall clock catches up",
                 {{"step_ms", (*offset_us_ - offset) / 1000}});
  }
  return (steady + *offset_us_) / 1000;
}

}  // namespace fairq::server
