#include "sched/pool.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sched/baseline_selectors.h"
#include "sched/drr_selector.h"

namespace fairq::sched {

std::unique_ptr<Selector> MakeSelector(const SchedulerOptions& options,
                                       const std::vector<PoolTenant>& tenants,
                                       const std::vector<double>& org_weights) {
  using Caps = ArrivalOrderSelector::Caps;
  switch (options.policy) {
    case Policy::kFifo:
      return std::make_unique<ArrivalOrderSelector>(tenants, Caps::kIgnore);
    case Policy::kHardCap:
      return std::make_unique<ArrivalOrderSelector>(tenants, Caps::kHard);
    case Policy::kWorkConservingCap:
      return std::make_unique<ArrivalOrderSelector>(tenants,
                                                    Caps::kWhileOthersWait);
    case Policy::kRoundRobin:
      return std::make_unique<RoundRobinSelector>(tenants);
    case Policy::kDrr:
      break;
  }
  return std::make_unique<DrrSelector>(options, tenants, org_weights);
}

Pool::Pool(std::string name, const SchedulerOptions& options,
           const std::vector<double>& org_weights)
    : name_(std::move(name)),
      options_(options),
      selector_(MakeSelector(options, tenants_, org_weights)) {}

void Pool::ApplySlots(PoolTenant& state) {
  state.cap_slots = state.settings.cap.CapSlots(capacity_);
  // A floor above the cap would promise what the cap forbids.
  state.floor_slots =
      std::min(state.settings.floor.FloorSlots(capacity_), state.cap_slots);
}

void Pool::SetCapacity(uint32_t slots) {
  capacity_ = slots;
  for (TenantId tenant = 0; tenant < tenants_.size(); ++tenant) {
    ApplySlots(tenants_[tenant]);
    selector_->Refile(tenant);
  }
}

void Pool::SetTenant(TenantId tenant, const TenantSettings& settings) {
  if (tenant >= tenants_.size()) tenants_.resize(tenant + 1);
  PoolTenant& state = tenants_[tenant];
  if (state.settings.org != settings.org) selector_->Detach(tenant);
  state.settings = settings;
  ApplySlots(state);
  selector_->Refile(tenant);
}

void Pool::Enqueue(TenantId tenant, int32_t priority, JobId job,
                   std::optional<double> cost, double now) {
  float declared = cost ? static_cast<float>(*cost)
                        : std::numeric_limits<float>::quiet_NaN();
  tenants_[tenant].queue.Push(priority,
                              QueuedJob{job, next_seq_++, now, declared});
  selector_->Refile(tenant);
}

std::optional<Pool::Leased> Pool::LeaseNext() {
  std::optional<TenantId> tenant = selector_->Pick();
  if (!tenant) return std::nullopt;
  PoolTenant& state = tenants_[*tenant];
  Leased leased{};
  QueuedJob job = state.queue.PopFront(&leased.priority);
  if (!std::isnan(job.cost)) leased.declared_cost = job.cost;
  double cost = leased.declared_cost.value_or(
      state.estimator.Estimate(options_.default_cost));
  leased.dispatch = Dispatch{job.id, *tenant, cost};
  ++state.running;
  selector_->Charge(*tenant, cost);
  selector_->Refile(*tenant);
  return leased;
}

void Pool::EndAttempt(TenantId tenant, double charged, double runtime,
                      bool succeeded) {
  PoolTenant& state = tenants_[tenant];
  --state.running;
  state.worker_seconds += runtime;
  if (succeeded) state.estimator.Observe(runtime, options_.estimate_alpha);
  selector_->Charge(tenant, runtime - charged);
  selector_->Refile(tenant);
}

bool Pool::Cancel(TenantId tenant, JobId job) {
  if (!tenants_[tenant].queue.Remove(job)) return false;
  selector_->Refile(tenant);
  return true;
}

TenantPoolStats Pool::Stats(TenantId tenant) const {
  const PoolTenant& state = tenants_[tenant];
  TenantPoolStats stats;
  stats.queued = state.queue.size();
  stats.running = state.running;
  stats.deficit = selector_->Deficit(tenant);
  stats.worker_seconds = state.worker_seconds;
  stats.estimate = state.estimator.Estimate(options_.default_cost);
  stats.oldest_ready_at = state.queue.OldestReadyAt();
  return stats;
}

}  // namespace fairq::sched
