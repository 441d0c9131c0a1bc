// QuietSeconds: takes a reading of the machine's CPU times once a second,
// on a thread of its own, from construction until Stop(), for a scenario
// to tell which of its samples the hypervisor left alone (CpuReadings).
//
// Thread-safe: Stop() and readings() come from the scenario's thread, and
// readings() is for after Stop().
#ifndef FAIRQ_CLIENT_BENCH_QUIET_SECONDS_H_
#define FAIRQ_CLIENT_BENCH_QUIET_SECONDS_H_

#include <condition_variable>
#include <mutex>
#include <thread>

#include "bench/cpu_readings.h"

namespace fairq::bench {

class QuietSeconds {
 public:
  QuietSeconds();  // takes the first reading and starts the thread
  ~QuietSeconds();
  QuietSeconds(const QuietSeconds&) = delete;
  QuietSeconds& operator=(const QuietSeconds&) = delete;

  // Takes the last reading and ends the thread.
  void Stop();
  const CpuReadings& readings() const { return readings_; }

 private:
  void Loop();
  void Read();

  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  CpuReadings readings_;
  std::thread thread_;
};

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_QUIET_SECONDS_H_
