// Pool: one worker pool's share of the scheduling core: the ready queue,
// running count and slot limits of each tenant that has used this pool, and
// the policy's Selector. Fair sharing runs per pool. A tenant takes state
// here only once it enqueues here (or a job of it is adopted here), so
// memory grows with the pairs in use, not with tenants x pools.
//
// Not thread-safe; owned by the Scheduler and so by the Scheduler's thread.
#ifndef FAIRQ_SCHED_POOL_H_
#define FAIRQ_SCHED_POOL_H_

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "sched/floor_budget.h"
#include "sched/pool_tenant.h"
#include "sched/selector.h"
#include "sched/types.h"

namespace fairq::sched {

class Pool {
 public:
  // `options`, `org_weights` and `settings` (by TenantId) are owned by the
  // Scheduler and outlive us.
  Pool(std::string name, const SchedulerOptions& options,
       const std::vector<double>& org_weights,
       const std::vector<TenantSettings>& settings);
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  const std::string& name() const { return name_; }
  uint32_t capacity() const { return capacity_; }

  // Tenants that hold state in this pool, in the order they joined.
  const std::vector<TenantId>& tenants() const { return tenant_ids_; }
  // The active tenants' floors in slots, unrounded (FloorBudget).
  double floor_demand() const { return floors_.demand(); }

  // Recomputes every tenant's share-based slot limits.
  void SetCapacity(uint32_t slots);
  // The tenant's entry in `settings` changed.
  void SettingsChanged(TenantId tenant);

  // REQUIRES: `tenant` has an entry in `settings`.
  void Enqueue(TenantId tenant, int32_t priority, JobId job,
               std::optional<double> cost, double now);

  struct Leased {
    Dispatch dispatch;
    int32_t priority;
    std::optional<double> declared_cost;
  };
  // Pops the policy's next job, charges its cost and counts it running.
  std::optional<Leased> LeaseNext();
  // A running attempt of the tenant ended after `runtime`; the `charged`
  // estimate is corrected to it. Only successes teach the estimator, and
  // the declared costs' scale (for a job that declared `declared`).
  void EndAttempt(TenantId tenant, double charged, double runtime,
                  bool succeeded, std::optional<double> declared);
  // False when the job is not queued for this tenant here.
  bool Cancel(TenantId tenant, JobId job);
  // Removes every queued job of the tenant; returns their ids.
  std::vector<JobId> Purge(TenantId tenant);
  // Counts a job restored as running (e.g. a lease that survived a
  // restart), charged `cost`.
  void AdoptRunning(TenantId tenant, double cost);
  // True when the tenant runs more than its share of the pool's capacity,
  // weighed as DRR weighs it (its organisation's share among the active
  // organisations, split among the organisation's active tenants), while
  // another tenant has work waiting.
  bool OverShare(TenantId tenant) const;
  // An organisation's weight changed (Scheduler::SetOrg).
  void OrgWeightChanged(OrgId org);

  TenantPoolStats Stats(TenantId tenant) const;

 private:
  // A tenant's index in tenants_, the id the selector knows it by.
  using Slot = uint32_t;

  // The tenant's slot, made on its first use of this pool.
  Slot Join(TenantId tenant);
  // Its slot, if it has used this pool.
  std::optional<Slot> Find(TenantId tenant) const;
  void ApplySlots(PoolTenant& state);
  // Re-files the tenant with the selector and the share totals.
  void Touch(Slot slot);
  void Count(PoolTenant& state, int sign);
  // What a lease of `seconds` is charged: at least options_.min_charge.
  double ChargeFor(double seconds) const;

  std::string name_;
  const SchedulerOptions& options_;
  uint32_t capacity_ = 0;
  uint64_t next_seq_ = 0;
  // The share totals, in two levels as DRR shares: per organisation, its
  // tenants counted active and their weight, and the organisation's weight
  // as counted in active_org_weight_ (the sum over organisations with an
  // active tenant).
  struct OrgTotals {
    uint32_t tenants = 0;
    double weight = 0;
    double counted_org_weight = 0;
  };
  std::vector<OrgTotals> org_totals_;  // by OrgId
  double active_org_weight_ = 0;
  uint32_t waiting_tenants_ = 0;  // tenants counted waiting
  const std::vector<double>& org_weights_;
  const std::vector<TenantSettings>& settings_;
  // By Slot; the selector holds a reference to it.
  std::vector<PoolTenant> tenants_;
  std::vector<TenantId> tenant_ids_;  // by Slot
  std::unordered_map<TenantId, Slot> slots_;
  FloorBudget floors_;  // the selector holds a reference to it
  std::unique_ptr<Selector> selector_;
};

}  // namespace fairq::sched

#endif  // FAIRQ_SCHED_POOL_H_
