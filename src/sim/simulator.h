// Simulate: runs one scenario under one policy through a fresh
// fairq::sched::Scheduler in virtual time and measures what each tenant got.
//
// Deterministic: the same scenario (and seed) gives identical results. Each
// call owns its scheduler, so concurrent calls are safe.
//
// Event order at one instant: completions first (Scheduler::Complete with the
// true runtime), then arrivals (Scheduler::Enqueue), then every free worker is
// filled by LeaseNextJob until it returns nothing. With a duration, time stops
// there: unstarted jobs count with wait = duration - enqueue time and
// worker-seconds are clipped to [0, duration].
#ifndef FAIRQ_SIM_SIMULATOR_H_
#define FAIRQ_SIM_SIMULATOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "sched/types.h"
#include "sim/scenario.h"

namespace fairq::sim {

struct TenantResult {
  std::string tenant;
  uint64_t jobs = 0;  // jobs that arrived within the window
  // Queue wait (enqueue to lease), nearest-rank percentiles, seconds.
  double wait_p50_s = 0;
  double wait_p99_s = 0;
  double wait_max_s = 0;
  // When its last job finished; nullopt if one is unfinished at the end of
  // the window (or the tenant had no jobs).
  std::optional<double> finish_s;
  double worker_seconds = 0;  // within the window
  double share = 0;           // of all worker-seconds in the window, 0..1
};

struct PolicyResult {
  sched::Policy policy = sched::Policy::kDrr;
  // Busy worker-seconds / (workers x horizon).
  double utilization = 0;
  // The duration, or without one the time the last job finished.
  double horizon_s = 0;
  std::vector<TenantResult> tenants;  // in Scenario::tenants order
};

StatusOr<PolicyResult> Simulate(const Scenario& scenario, sched::Policy policy);

// One result per policy, in the order given.
StatusOr<std::vector<PolicyResult>> SimulateAll(
    const Scenario& scenario, const std::vector<sched::Policy>& policies);

// Nearest-rank percentile: the smallest value with at least `percent`% of
// values at or below it. 0 for no values. REQUIRES: sorted ascending,
// 0 < percent <= 100.
double NearestRank(const std::vector<double>& sorted, int percent);

}  // namespace fairq::sim

#endif  // FAIRQ_SIM_SIMULATOR_H_
