#include "server/broker/broker_clock.h"

#include <algorithm>
#include <chrono>

#include "server/logging/logging.h"

namespace fairq::server {
namespace {

template <class Clock, class Unit>
int64_t Count() {
  return std::chrono::duration_cast<Unit>(Clock::now().time_since_epoch())
      .count();
}

// While the wall clock is behind, broker time gives up this share of each
// stretch of monotonic time to close the gap.
constexpr int64_t kCatchUpShare = 10;  // a tenth
// The two clocks advance at the same rate (NTP's slewing adjusts both), so
// the wall clock falls behind broker time only when it is stepped; less
// than this is not worth a warning.
constexpr int64_t kLoggedStepUs = 1'000;
// A wall-clock reading is placed between two monotonic ones; if they are
// further apart than this (the thread was preempted), it cannot be placed
// well enough to be taken as a step, and broker time just carries on.
constexpr int64_t kLongestReadUs = 200;

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
  const int64_t before = steady_us_();
  const int64_t wall = wall_us_();
  const int64_t after = steady_us_();
  if (!now_us_) {
    now_us_ = wall;
  } else {
    const int64_t elapsed = after - steady_at_us_;
    const int64_t carried = *now_us_ + elapsed;
    if (after - before > kLongestReadUs) {
      now_us_ = carried;
    } else if (wall >= carried) {
      if (behind_) logging::Log(spdlog::level::info, "wall clock caught up");
      behind_ = false;
      now_us_ = wall;
    } else {
      if (!behind_ && carried - wall >= kLoggedStepUs) {
        behind_ = true;
        logging::Log(spdlog::level::warn,
                     "wall clock stepped back; broker time runs at nine "
                     "tenths of its pace until the wall clock meets it",
                     {{"step_ms", (carried - wall) / 1000}});
      }
      now_us_ = std::max(wall, carried - elapsed / kCatchUpShare);
    }
  }
  steady_at_us_ = after;
  return *now_us_ / 1000;
}

}  // namespace fairq::server
