// BrokerClock: the dispatcher's time, Unix milliseconds that never run
// backward. Lease deadlines and due times are stored as wall-clock times,
// so that they mean the same after a restart; but a wall clock stepped back
// (an NTP step, a VM restored from a snapshot) would give negative waits
// and ages, and refill rate buckets twice for the same time. So a step back
// holds this clock still until the wall clock catches up, and is logged;
// a step forward is taken as it comes, as a stall that long would be
// (leases it passes expire and are redelivered).
// Owned by the dispatcher thread; not thread-safe.
#ifndef FAIRQ_SERVER_BROKER_BROKER_CLOCK_H_
#define FAIRQ_SERVER_BROKER_BROKER_CLOCK_H_

#include <cstdint>

namespace fairq::server {

// Wall-clock milliseconds since the Unix epoch.
int64_t NowUnixMs();

class BrokerClock {
 public:
  using WallClock = int64_t (*)();

  explicit BrokerClock(WallClock wall = NowUnixMs) : wall_(wall) {}

  // The wall clock's time, or the last answer if that was later.
  int64_t Now();

 private:
  const WallClock wall_;
  int64_t last_ = 0;
  bool holding_ = false;  // a step back is being waited out; logged once
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_BROKER_CLOCK_H_
