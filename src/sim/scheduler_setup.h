// BuildScheduler: a fresh fairq::sched::Scheduler configured with a
// scenario's pools, organisations and tenants, plus the ids they received.
//
// Used by the simulator for every run and by the scenario loader as a dry run,
// so the scheduler's own rules judge every setting. Not thread-safe (the
// Scheduler it returns belongs to one thread).
#ifndef FAIRQ_SIM_SCHEDULER_SETUP_H_
#define FAIRQ_SIM_SCHEDULER_SETUP_H_

#include <memory>
#include <vector>

#include "base/status.h"
#include "sched/scheduler.h"
#include "sim/scenario.h"

namespace fairq::sim {

struct SimScheduler {
  std::unique_ptr<sched::Scheduler> scheduler;
  std::vector<sched::PoolId> pools;      // indexed like Scenario::pools
  std::vector<sched::TenantId> tenants;  // indexed like Scenario::tenants
};

// A refused setting fails with "source:line: tenants[i]: problem".
StatusOr<SimScheduler> BuildScheduler(const Scenario& scenario,
                                      sched::Policy policy);

}  // namespace fairq::sim

#endif  // FAIRQ_SIM_SCHEDULER_SETUP_H_
