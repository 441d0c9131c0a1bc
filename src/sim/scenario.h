// Scenario: one simulated workload (pools, organisations, tenants and their
// arrivals) as read from a YAML file, with every reference already resolved
// to an index, so the simulator never meets an unknown name.
//
// Plain values; LoadScenario never throws and is safe to call from any thread.
// The file format is described in config/scenarios/README.md.
#ifndef FAIRQ_SIM_SCENARIO_H_
#define FAIRQ_SIM_SCENARIO_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sched/types.h"

namespace fairq::sim {

// Lines are 1-based lines of the scenario file (0 if unknown), kept so that
// later checks (by the scheduler itself) can still point into the file.
struct PoolSpec {
  std::string name;
  uint32_t workers = 0;
  int line = 0;
};

struct OrgSpec {
  sched::OrgConfig config;
  int line = 0;
};

struct TenantSpec {
  sched::TenantConfig config;
  std::optional<size_t> pool;  // default pool of its arrivals, if it names one
  int line = 0;
};

// A stream of jobs of one tenant. A burst puts `count` jobs at `at`; a steady
// stream puts one job every 1/rate seconds from `from`, none at or after
// `until`.
struct ArrivalSpec {
  size_t tenant = 0;  // index into Scenario::tenants
  size_t pool = 0;    // index into Scenario::pools
  int32_t priority = 0;
  double cost = 1.0;         // true worker-seconds of each job
  double cost_jitter = 0.0;  // true cost = cost * (1 + u), u in [-j, j]
  // What the producer declares (JobSpec::cost); nullopt: no estimate, so the
  // scheduler uses its learned one.
  std::optional<double> declared_cost = 1.0;
  bool steady = false;
  double at = 0;  // burst
  uint64_t count = 0;
  double rate = 0;  // steady
  double from = 0;
  double until = 0;
  int line = 0;

  // Jobs this arrival produces.
  uint64_t JobCount() const;
};

struct Scenario {
  std::string name;
  std::string source;  // file name, for messages
  uint64_t seed = 0;
  // Everything but `policy`, which the simulator sets per run.
  sched::SchedulerOptions options;
  // Report over [0, duration]; nullopt runs until every job finished.
  std::optional<double> duration;
  std::vector<PoolSpec> pools;
  std::vector<OrgSpec> orgs;
  std::vector<TenantSpec> tenants;
  std::vector<ArrivalSpec> arrivals;
  // Policies to compare when the caller names none (all five by default).
  std::vector<sched::Policy> policies;

  uint32_t TotalWorkers() const;
  uint64_t TotalJobs() const;
};

// Every policy, in the order reports list them.
const std::vector<sched::Policy>& AllPolicies();

// Reads and validates a scenario file. Errors read
// "path:line: field: problem", e.g.
// "flood.yaml:7: arrivals[2].cost: must be >= 0, got -1".
StatusOr<Scenario> LoadScenario(const std::string& path);

// The same for YAML text already in memory; `source` names it in messages.
StatusOr<Scenario> ParseScenario(std::string_view yaml, std::string source);

}  // namespace fairq::sim

#endif  // FAIRQ_SIM_SCENARIO_H_
