#include "bench/quiet_seconds.h"

namespace fairq::bench {

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
