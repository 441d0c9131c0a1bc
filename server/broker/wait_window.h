// WaitWindow: the queue waits of one tenant's last 1,024 leases in a pool,
// for the wait percentiles that GetQueueStats reports. A fixed ring of
// floats (4 KiB), allocated only for tenants that lease.
//
// Not thread-safe; owned by the Broker on the dispatcher thread.
#ifndef FAIRQ_SERVER_BROKER_WAIT_WINDOW_H_
#define FAIRQ_SERVER_BROKER_WAIT_WINDOW_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace fairq::server {

class WaitWindow {
 public:
  static constexpr size_t kSize = 1024;

  void Add(int64_t wait_ms) {
    waits_[next_ % kSize] = static_cast<float>(std::max<int64_t>(0, wait_ms));
    ++next_;
  }

  // Nearest-rank percentile (q in (0, 1]) of the recorded waits, in ms;
  // 0 when none. O(n): it runs only when someone asks for stats.
  int64_t Percentile(double q) const {
    size_t n = std::min(next_, kSize);
    if (n == 0) return 0;
    std::array<float, kSize> sorted = waits_;
    size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
    auto nth = sorted.begin() + static_cast<std::ptrdiff_t>(std::max<size_t>(rank, 1) - 1);
    std::nth_element(sorted.begin(), nth, sorted.begin() + static_cast<std::ptrdiff_t>(n));
    return static_cast<int64_t>(*nth);
  }

 private:
  std::array<float, kSize> waits_{};
  size_t next_ = 0;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_WAIT_WINDOW_H_
