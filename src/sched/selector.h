// Selector: one pool's policy for choosing which tenant runs next. The Pool
// tells it whenever a tenant's state may have changed; it keeps whatever
// index it needs (an active list, deficit rings) in step. A tenant is named
// by its index in the pool's PoolTenant table (dense over the tenants that
// used the pool), not by the scheduler's TenantId.
//
// Not thread-safe; owned by the Pool and so by the Scheduler's thread.
#ifndef FAIRQ_SCHED_SELECTOR_H_
#define FAIRQ_SCHED_SELECTOR_H_

#include <memory>
#include <optional>
#include <vector>

#include "sched/floor_budget.h"
#include "sched/pool_tenant.h"
#include "sched/types.h"

namespace fairq::sched {

class Selector {
 public:
  virtual ~Selector() = default;

  // The tenant's queue, running count, settings or slot limits changed.
  virtual void Refile(TenantId tenant) = 0;
  // The tenant is about to move to another organisation: forget it. A
  // Refile follows.
  virtual void Detach(TenantId tenant) = 0;
  // The tenant whose job runs next, or nullopt when none may run.
  virtual std::optional<TenantId> Pick() = 0;
  // Worker-seconds charged to the tenant (negative: refunded).
  virtual void Charge(TenantId tenant, double worker_seconds) = 0;
  // The tenant's DRR credit; 0 for policies without one.
  virtual double Deficit(TenantId tenant) const = 0;
};

// `tenants`, `org_weights` and `floors` are owned by the caller and outlive
// the selector; the vectors may grow.
std::unique_ptr<Selector> MakeSelector(const SchedulerOptions& options,
                                       const std::vector<PoolTenant>& tenants,
                                       const std::vector<double>& org_weights,
                                       const FloorBudget& floors);

}  // namespace fairq::sched

#endif  // FAIRQ_SCHED_SELECTOR_H_
