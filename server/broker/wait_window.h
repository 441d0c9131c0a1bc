// WaitWindow: the queue waits of one tenant's last 1,024 leases in a pool,
// for the wait percentiles that GetQueueStats reports. A ring of floats that
// grows with the leases up to 4 KiB, allocated only for tenants that lease:
// with many tenants that lease now and then, most hold a few samples.
//
// Not thread-safe; owned by the Broker on the dispatcher thread.
#ifndef FAIRQ_SERVER_BROKER_WAIT_WINDOW_H_
#define FAIRQ_SERVER_BROKER_WAIT_WINDOW_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fairq::server {

class WaitWindow {
 public:
  static constexpr size_t kSize = 1024;

  void Add(int64_t wait_ms) {
    float wait = static_cast<float>(std::max<int64_t>(0, wait_ms));
    if (waits_.size() < kSize) {
      waits_.push_back(wait);
    } else {
      waits_[next_] = wait;
      next_ = (next_ + 1) % kSize;
    }
  }

  // Nearest-rank percentile (q in (0, 1]) of the recorded waits, in ms;
  // 0 when none. O(n): it runs only when someone asks for stats.
  int64_t Percentile(double q) const {
    if (waits_.empty()) return 0;
    std::vector<float> sorted = waits_;
    size_t rank =
        static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    auto nth = sorted.begin() +
               static_cast<std::ptrdiff_t>(std::max<size_t>(rank, 1) - 1);
    std::nth_element(sorted.begin(), nth, sorted.end());
    return static_cast<int64_t>(*nth);
  }

 private:
  std::vector<float> waits_;
  size_t next_ = 0;  // the oldest sample, once the ring is full
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_WAIT_WINDOW_H_
