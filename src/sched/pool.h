// Pool: one worker pool's share of the scheduling core: every tenant's ready
// queue for this pool, their running counts and slot limits, and the
// policy's Selector. Fair sharing runs per pool.
//
// Not thread-safe; owned by the Scheduler and so by the Scheduler's thread.
#ifndef FAIRQ_SCHED_POOL_H_
#define FAIRQ_SCHED_POOL_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sched/pool_tenant.h"
#include "sched/selector.h"
#include "sched/types.h"

namespace fairq::sched {

class Pool {
 public:
  // `options` and `org_weights` are owned by the Scheduler and outlive us.
  Pool(std::string name, const SchedulerOptions& options,
       const std::vector<double>& org_weights);
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  const std::string& name() const { return name_; }
  uint32_t capacity() const { return capacity_; }

  // Recomputes every tenant's share-based slot limits.
  void SetCapacity(uint32_t slots);
  // Adds the tenant or replaces its settings.
  void SetTenant(TenantId tenant, const TenantSettings& settings);

  // REQUIRES: SetTenant(tenant) was called.
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
  // estimate is corrected to it. Only successes teach the estimator.
  void EndAttempt(TenantId tenant, double charged, double runtime,
                  bool succeeded);
  // False when the job is not queued for this tenant here.
  bool Cancel(TenantId tenant, JobId job);
  // Removes every queued job of the tenant; returns their ids.
  std::vector<JobId> Purge(TenantId tenant);
  // Counts a job restored as running (e.g. a lease that survived a
  // restart), charged `cost`.
  void AdoptRunning(TenantId tenant, double cost);
  // True when the tenant runs more than its weighted share of the pool's
  // capacity while another tenant has work waiting.
  bool OverShare(TenantId tenant) const;

  TenantPoolStats Stats(TenantId tenant) const;

 private:
  void ApplySlots(PoolTenant& state);
  // Re-files the tenant with the selector and the share totals.
  void Touch(TenantId tenant);
  void Count(PoolTenant& state, int sign);
  // What a lease of `seconds` is charged: at least options_.min_charge.
  double ChargeFor(double seconds) const;

  std::string name_;
  const SchedulerOptions& options_;
  uint32_t capacity_ = 0;
  uint64_t next_seq_ = 0;
  double active_weight_ = 0;     // sum over tenants counted active
  uint32_t waiting_tenants_ = 0;  // tenants counted waiting
  // Indexed by TenantId; the selector holds a reference to it.
  std::vector<PoolTenant> tenants_;
  std::unique_ptr<Selector> selector_;
};

}  // namespace fairq::sched

#endif  // FAIRQ_SCHED_POOL_H_
