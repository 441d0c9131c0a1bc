#include "bench/cpu_readings.h"

#include <algorithm>

namespace fairq::bench {

void CpuReadings::Add(Clock::time_point at, std::optional<CpuTimes> times) {
  readings_.emplace_back(at, times);
}

bool CpuReadings::QuietStretch(size_t i) const {
  const auto& [start, before] = readings_[i];
  const auto& [end, after] = readings_[i + 1];
  return end - start >= kMinQuietStretch && before && after &&
         QuietBetween(*before, *after);
}

bool CpuReadings::Quiet(Clock::time_point from, Clock::time_point to) const {
  if (to < from) return false;
  // The last reading at or before `from`, and the first at or after `to`.
  auto after_from =
      std::upper_bound(readings_.begin(), readings_.end(), from,
                       [](Clock::time_point t, const auto& reading) {
                         return t < reading.first;
                       });
  if (after_from == readings_.begin()) return false;
  auto first = static_cast<size_t>(after_from - readings_.begin()) - 1;
  auto last = static_cast<size_t>(
      std::lower_bound(readings_.begin(), readings_.end(), to,
                       [](const auto& reading, Clock::time_point t) {
                         return reading.first < t;
                       }) -
      readings_.begin());
  if (last == readings_.size()) return false;
  for (size_t i = first; i < last; ++i) {
    if (!QuietStretch(i)) return false;
  }
  return first < last;
}

size_t CpuReadings::stretches() const {
  return readings_.empty() ? 0 : readings_.size() - 1;
}

size_t CpuReadings::quiet_stretches() const {
  size_t quiet = 0;
  for (size_t i = 0; i < stretches(); ++i) quiet += QuietStretch(i) ? 1 : 0;
  return quiet;
}

}  // namespace fairq::bench
