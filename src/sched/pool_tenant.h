// PoolTenant: everything one pool knows of one tenant: its ready queue, its
// running count, its slot limits at the pool's current capacity and its
// learned cost. Selectors read it; only Pool writes it.
//
// Plain struct; owned by the Scheduler's thread.
#ifndef FAIRQ_SCHED_POOL_TENANT_H_
#define FAIRQ_SCHED_POOL_TENANT_H_

#include <cstdint>

#include "sched/cost_estimator.h"
#include "sched/floor_budget.h"
#include "sched/slot_limit.h"
#include "sched/tenant_queue.h"
#include "sched/types.h"

namespace fairq::sched {

// The tenant settings a pool needs, pushed by the Scheduler on every change.
struct TenantSettings {
  OrgId org = 0;
  bool own_org = false;  // `org` is the tenant's own: it names none
  double weight = 1.0;
  SlotLimit cap;
  CapMode cap_mode = CapMode::kWorkConserving;
  SlotLimit floor;
  bool paused = false;
};

struct PoolTenant {
  TenantQueue queue;
  TenantSettings settings;
  uint32_t running = 0;
  uint32_t cap_slots = SlotLimit::kUnlimited;  // at the pool's capacity
  uint32_t floor_slots = 0;                    // at the pool's capacity
  uint32_t whole_floor_slots = 0;  // floor_slots without the rounding up
  // The floor unrounded, as FloorBudget counts it (millionths of a slot).
  int64_t floor_demand_micros = 0;
  // What the pool's share totals currently count of this tenant. Kept beside
  // the fields above, which every lease reads with them.
  bool counted_active = false;   // has work or runs jobs
  bool counted_waiting = false;  // has work it may run
  FloorBudget::Part counted_floor;
  double worker_seconds = 0;
  CostEstimator estimator;
  DeclaredCostScale declared_scale;

  // Has jobs that a policy may consider.
  bool HasWork() const { return !settings.paused && !queue.empty(); }
  bool AtCap() const { return running >= cap_slots; }
  bool BelowFloor() const { return running < floor_slots; }
  bool BelowWholeFloor() const { return running < whole_floor_slots; }
};

}  // namespace fairq::sched

#endif  // FAIRQ_SCHED_POOL_TENANT_H_
