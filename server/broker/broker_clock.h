// BrokerClock: the dispatcher's time, Unix milliseconds that never run
// backward and never stand still. Lease deadlines and due times are stored
// as wall-clock times, so that they mean the same after a restart; but a
// wall clock stepped back (an NTP step, a clock set by hand) would give
// negative waits and ages and refill rate buckets twice for the same time,
// and holding still until it caught up would stop every timer for the
// length of the step. So after a step back broker time carries on from
// where it was at nine tenths of the monotonic clock's pace, and meets the
// wall clock again after ten times the step: timers run at most 11% long
// meanwhile. A step forward is taken as it comes, as a stall that long
// would be (leases it passes lapse).
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

  explicit BrokerClock(Clock wall_us = NowUnixUs, Clock steady_us = NowSteadyUs)
      : wall_us_(wall_us), steady_us_(steady_us) {}

  // Broker time in Unix milliseconds: never before the wall clock's, never
  // before the last answer.
  int64_t Now();

 private:
  const Clock wall_us_;
  const Clock steady_us_;
  std::optional<int64_t> now_us_;  // the last answer, in microseconds
  int64_t steady_at_us_ = 0;       // the monotonic clock then
  bool behind_ = false;  // the wall clock is behind broker time; logged once
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_BROKER_CLOCK_H_
