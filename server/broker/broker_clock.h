// BrokerClock: the dispatcher's time, Unix milliseconds that never run
// backward and never stand still. Lease deadlines and due times are stored
// as wall-clock times, so that they mean the same after a restart; but a
// wall clock stepped back (an NTP step, a clock set by hand) would give
// negative waits and ages and refill rate buckets twice for the same time.
// So broker time is the wall clock's or, once that has stepped back, the
// last broker time carried on by the monotonic clock: timers keep their
// length through the step, and broker time stays ahead of the wall clock
// by the step until the wall clock passes it. A step forward is taken as it
// comes, as a stall that long would be (leases it passes lapse).
// Owned by the dispatcher thread; not thread-safe.
#ifndef FAIRQ_SERVER_BROKER_BROKER_CLOCK_H_
#define FAIRQ_SERVER_BROKER_BROKER_CLOCK_H_

#include <cstdint>
#include <optional>

namespace fairq::server {

// Wall-clock milliseconds since the Unix epoch.
int64_t NowUnixMs();
// Wall-clock microseconds since the Unix epoch.
int64_t NowUnixUs();
// Microseconds of a clock that is never stepped (CLOCK_MONOTONIC), from an
// arbitrary start.
int64_t NowSteadyUs();

class BrokerClock {
 public:
  using Clock = int64_t (*)();  // microseconds

  explicit BrokerClock(Clock wall_us = NowUnixUs,
                       Clock steady_us = NowSteadyUs)
      : wall_us_(wall_us), steady_us_(steady_us) {}

  // In Unix milliseconds: the wall clock's time, unless an earlier answer
  // carried on by the monotonic clock since is later.
  int64_t Now();

 private:
  const Clock wall_us_;
  const Clock steady_us_;
  // Broker time minus the monotonic clock: the largest wall-minus-monotonic
  // seen, so it grows with each step forward and ignores steps back.
  std::optional<int64_t> offset_us_;
  bool behind_ = false;  // the wall clock is behind broker time; logged once
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_BROKER_CLOCK_H_
