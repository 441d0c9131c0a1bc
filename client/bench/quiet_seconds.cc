#include "bench/quiet_seconds.h"

#include <algorithm>

namespace fairq::bench {

void CpuReadings::Add(Clock::time_point at, std::optional<CpuTimes> times) {
  readings_.emplace_back(at, times);
}

bool CpuReadings::QuietStretch(size_t i) const {
  const std::optional<CpuTimes>& before = readings_[i].second;
  const std::optional<CpuTimes>& after = readings_[i + 1].second;
  return before && after && QuietBetween(*before, *after);
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

QuietSeconds::QuietSeconds() {
  Read();
  thread_ = std::thread([this] { Loop(); });
}

QuietSeconds::~QuietSeconds() { Stop(); }

void QuietSeconds::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
  Read();
}

void QuietSeconds::Read() {
  auto at = CpuReadings::Clock::now();
  std::optional<CpuTimes> times = ReadHostCpu();
  std::lock_guard<std::mutex> lock(mu_);
  readings_.Add(at, times);
}

void QuietSeconds::Loop() {
  auto next = CpuReadings::Clock::now() + std::chrono::seconds(1);
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_cv_.wait_until(lock, next, [this] { return stopping_; })) {
    lock.unlock();
    Read();
    lock.lock();
    next += std::chrono::seconds(1);
  }
}

}  // namespace fairq::bench
