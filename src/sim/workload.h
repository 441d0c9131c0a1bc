// ExpandArrivals: turns a scenario's arrival streams into the concrete jobs a
// simulated run submits, with their true costs drawn from the seeded RNG.
//
// Pure function of the scenario: the same seed gives the same jobs on every
// platform (uniforms come from the engine's raw bits, never from a standard
// distribution, whose output differs between standard libraries). Thread-safe.
#ifndef FAIRQ_SIM_WORKLOAD_H_
#define FAIRQ_SIM_WORKLOAD_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/scenario.h"

namespace fairq::sim {

struct SimJob {
  double arrival = 0;   // enqueue time, seconds
  uint32_t tenant = 0;  // index into Scenario::tenants
  uint32_t pool = 0;    // index into Scenario::pools
  int32_t priority = 0;
  double cost = 0;                      // true runtime, seconds
  std::optional<double> declared_cost;  // JobSpec::cost
};

// Jobs ordered by arrival time, ties kept in the order of the scenario's
// arrival list. Job i gets the scheduler's JobId i + 1.
std::vector<SimJob> ExpandArrivals(const Scenario& scenario);

// Maps 64 random bits to a double uniform in [0, 1).
double UnitInterval(uint64_t bits);

}  // namespace fairq::sim

#endif  // FAIRQ_SIM_WORKLOAD_H_
