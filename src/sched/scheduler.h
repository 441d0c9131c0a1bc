// Scheduler: fairq's scheduling core. Holds every tenant's ready queue per
// pool and answers "a worker slot of pool P is free: which job?" under the
// configured policy (weighted DRR in worker-seconds, or a baseline).
//
// Not thread-safe: exactly one thread owns a Scheduler (the daemon's
// dispatcher, the simulator, a test). Time is passed in as seconds on any
// monotonic scale; the scheduler never reads a clock. A lease decision
// costs O(active tenants) at worst and never grows with the backlog;
// Cancel and Purge are O(that tenant's backlog), SetCapacity and AddPool
// O(all tenants): admin actions.
#ifndef FAIRQ_SCHED_SCHEDULER_H_
#define FAIRQ_SCHED_SCHEDULER_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "sched/pool_tenant.h"
#include "sched/types.h"

namespace fairq::sched {

class Pool;

class Scheduler {
 public:
  // Fails on invalid options.
  static StatusOr<std::unique_ptr<Scheduler>> Create(SchedulerOptions options);

  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // --- Registry -------------------------------------------------------------
  StatusOr<PoolId> AddPool(std::string_view name);
  StatusOr<PoolId> FindPool(std::string_view name) const;
  // Live worker slots of a pool; share caps and floors are taken of this.
  Status SetCapacity(PoolId pool, uint32_t slots);

  // Adds or updates an organisation.
  StatusOr<OrgId> SetOrg(const OrgConfig& config);
  // Adds a tenant (creating its organisation with weight 1 if named and new).
  StatusOr<TenantId> AddTenant(const TenantConfig& config);
  // Applies new settings at once, to the queued backlog too. The name stays.
  Status UpdateTenant(TenantId tenant, const TenantConfig& config);
  StatusOr<TenantId> FindTenant(std::string_view name) const;
  StatusOr<TenantConfig> GetTenant(TenantId tenant) const;
  // A paused tenant keeps its queue but gets no new leases.
  Status SetPaused(TenantId tenant, bool paused);

  // --- Job flow ---------------------------------------------------------------
  // Queues a job at the back of its tenant's priority level. `now` is its
  // ready time. REQUIRES: the id is not queued or running already.
  Status Enqueue(const JobSpec& job, double now);
  // Picks the job for one free slot of `pool`, charges its cost to the
  // tenant, and marks it running. nullopt when nothing may run.
  StatusOr<std::optional<Dispatch>> LeaseNextJob(PoolId pool);
  // The running job finished successfully after `runtime` seconds: the charge
  // is corrected to the runtime and the tenant's estimate learns from it.
  Status Complete(JobId job, double runtime);
  // The running job's attempt ended without success and it does not return
  // to the queue now (dead, or waiting out a retry backoff outside the core).
  // The worker-seconds it used stay charged.
  Status Fail(JobId job, double runtime);
  // The running job returns to the back of its tenant's queue at `now` (retry
  // without backoff, or an expired lease). The attempt stays charged and the
  // next dispatch charges again.
  Status Requeue(JobId job, double runtime, double now);
  // Removes a queued job. O(tenant's backlog in the pool): an admin action.
  Status Cancel(TenantId tenant, PoolId pool, JobId job);
  // Removes every queued job of the tenant in the pool; returns their ids.
  StatusOr<std::vector<JobId>> Purge(TenantId tenant, PoolId pool);
  // Counts a job as running without it having been queued: a lease that
  // survived a restart. Charged its declared or learned cost.
  Status AdoptRunning(const JobSpec& job);

  // --- Inspection -------------------------------------------------------------
  StatusOr<TenantPoolStats> Stats(TenantId tenant, PoolId pool) const;
  // True when the tenant runs more jobs than its weighted share of the
  // pool's capacity while another tenant has work waiting: the hint that a
  // long job should yield at its next safe point.
  StatusOr<bool> OverShare(TenantId tenant, PoolId pool) const;
  size_t tenant_count() const { return tenants_.size(); }
  size_t pool_count() const { return pools_.size(); }
  // Tenants holding state in the pool: those that used it since the start,
  // in the order they joined. REQUIRES: `pool` exists.
  const std::vector<TenantId>& TenantsIn(PoolId pool) const;
  // The floors of the tenants active in the pool, in slots, unrounded; above
  // the capacity they cannot all be met. REQUIRES: `pool` exists.
  double FloorDemand(PoolId pool) const;
  size_t running_count() const { return running_.size(); }
  bool IsRunning(JobId job) const { return running_.count(job) != 0; }

 private:
  struct Tenant {
    TenantConfig config;
    OrgId org = 0;
    bool paused = false;
    // The tenant's own organisation, once it had one: reused when it
    // leaves a named organisation and comes back.
    std::optional<OrgId> own_org_id;
  };
  struct RunningJob {
    TenantId tenant;
    PoolId pool;
    int32_t priority;
    std::optional<double> declared_cost;
    double charged;
  };

  explicit Scheduler(SchedulerOptions options);

  Status CheckTenant(TenantId tenant) const;
  Status CheckPool(PoolId pool) const;
  StatusOr<OrgId> ResolveOrg(const TenantConfig& config,
                             std::optional<OrgId> own_org_id);
  void PushSettings(TenantId tenant);
  StatusOr<RunningJob> EndAttempt(JobId job, double runtime, bool succeeded);

  SchedulerOptions options_;
  std::vector<Tenant> tenants_;
  std::unordered_map<std::string, TenantId> tenant_ids_;
  std::vector<double> org_weights_;  // indexed by OrgId; read by pools
  // What pools need of each tenant, by TenantId; read by pools.
  std::vector<TenantSettings> settings_;
  std::unordered_map<std::string, OrgId> org_ids_;
  std::vector<std::unique_ptr<Pool>> pools_;
  std::unordered_map<std::string, PoolId> pool_ids_;
  std::unordered_map<JobId, RunningJob> running_;
};

}  // namespace fairq::sched

#endif  // FAIRQ_SCHED_SCHEDULER_H_
