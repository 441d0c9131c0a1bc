// The longest duration the SDK's options and a broker's retry delay may
// take, and the check against it.
//
// Pure; safe from any thread.
#ifndef FAIRQ_CLIENT_SDK_DURATION_LIMIT_H_
#define FAIRQ_CLIENT_SDK_DURATION_LIMIT_H_

#include <chrono>

namespace fairq::client::internal {

// The longest duration an option or a broker's retry delay may take. A
// "forever" such as milliseconds::max() would overflow the clocks'
// nanoseconds once added to now: a deadline or a due time in the past, so
// calls that fail at once and loops that spin. A day is past any timeout.
inline constexpr std::chrono::milliseconds kMaxOptionDuration =
    std::chrono::hours(24);

inline bool WithinADay(std::chrono::milliseconds d) {
  return d.count() >= 0 && d <= kMaxOptionDuration;
}

}  // namespace fairq::client::internal

#endif  // FAIRQ_CLIENT_SDK_DURATION_LIMIT_H_
