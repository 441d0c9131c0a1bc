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
    Touch(tenant);
  }
}

void Pool::SetTenant(TenantId tenant, const TenantSettings& settings) {
  if (tenant >= tenants_.size()) tenants_.resize(tenant + 1);
  PoolTenant& state = tenants_[tenant];
  if (state.settings.org != settings.org) selector_->Detach(tenant);
  Count(state, -1);  // the weight may change
  state.settings = settings;
  ApplySlots(state);
  Touch(tenant);
  selector_->Charge(tenant, 0);  // a lowered weight lowers the ceiling now
}

void Pool::Enqueue(TenantId tenant, int32_t priority, JobId job,
                   std::optional<double> cost, double now) {
  float declared = cost ? static_cast<float>(*cost)
                        : std::numeric_limits<float>::quiet_NaN();
  tenants_[tenant].queue.Push(priority,
                              QueuedJob{job, next_seq_++, now, declared});
  Touch(tenant);
}

std::optional<Pool::Leased> Pool::LeaseNext() {
  std::optional<TenantId> tenant = selector_->Pick();
  if (!tenant) return std::nullopt;
  PoolTenant& state = tenants_[*tenant];
  Leased leased{};
  QueuedJob job = state.queue.PopFront(&leased.priority);
  if (!std::isnan(job.cost)) leased.declared_cost = job.cost;
  double cost = ChargeFor(leased.declared_cost.value_or(
      state.estimator.Estimate(options_.default_cost)));
  leased.dispatch = Dispatch{job.id, *tenant, cost};
  ++state.running;
  selector_->Charge(*tenant, cost);
  Touch(*tenant);
  return leased;
}

void Pool::EndAttempt(TenantId tenant, double charged, double runtime,
                      bool succeeded) {
  PoolTenant& state = tenants_[tenant];
  --state.running;
  state.worker_seconds += runtime;
  if (succeeded) state.estimator.Observe(runtime, options_.estimate_alpha);
  selector_->Charge(tenant, ChargeFor(runtime) - charged);
  Touch(tenant);
}

double Pool::ChargeFor(double seconds) const {
  return std::max(options_.min_charge, seconds);
}

bool Pool::Cancel(TenantId tenant, JobId job) {
  if (!tenants_[tenant].queue.Remove(job)) return false;
  Touch(tenant);
  return true;
}

std::vector<JobId> Pool::Purge(TenantId tenant) {
  PoolTenant& state = tenants_[tenant];
  std::vector<JobId> purged;
  purged.reserve(state.queue.size());
  int32_t priority = 0;
  while (!state.queue.empty()) purged.push_back(state.queue.PopFront(&priority).id);
  Touch(tenant);
  return purged;
}

void Pool::AdoptRunning(TenantId tenant, double cost) {
  ++tenants_[tenant].running;
  selector_->Charge(tenant, cost);
  Touch(tenant);
}

void Pool::Count(PoolTenant& state, int sign) {
  if (state.counted_active) active_weight_ += sign * state.settings.weight;
  if (state.counted_waiting) waiting_tenants_ += static_cast<uint32_t>(sign);
  if (sign < 0) state.counted_active = state.counted_waiting = false;
}

void Pool::Touch(TenantId tenant) {
  selector_->Refile(tenant);
  PoolTenant& state = tenants_[tenant];
  Count(state, -1);
  // A tenant held at a hard cap has work but cannot take a slot, so it does
  // not make anyone else over share.
  state.counted_waiting =
      state.HasWork() &&
      !(state.AtCap() && state.settings.cap_mode == CapMode::kHard);
  state.counted_active = state.counted_waiting || state.running > 0;
  Count(state, +1);
}

bool Pool::OverShare(TenantId tenant) const {
  const PoolTenant& state = tenants_[tenant];
  uint32_t others_waiting = waiting_tenants_ - (state.counted_waiting ? 1 : 0);
  if (others_waiting == 0 || active_weight_ <= 0) return false;
  double share = capacity_ * state.settings.weight / active_weight_;
  return state.running > share;
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
