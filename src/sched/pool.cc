#include "sched/pool.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sched/baseline_selectors.h"
#include "sched/drr_selector.h"

namespace fairq::sched {
namespace {

// What the tenant adds to its pool's FloorBudget. Here, not in Pool, so that
// it is inlined: returned through memory, the part cost a store-forwarding
// stall on every lease.
FloorBudget::Part FloorPartOf(const PoolTenant& state) {
  FloorBudget::Part part;
  // One held at its cap could not take a slot the floors left; one below
  // its floor rounded down is served ahead of DRR.
  part.waits_in_drr =
      state.counted_waiting && !state.AtCap() && !state.BelowWholeFloor();
  if (state.floor_slots == 0) return part;
  part.has_floor = true;
  part.held = std::min(state.running, state.floor_slots);
  if (state.counted_active) {
    part.slots = state.floor_slots;
    part.demand_micros = state.floor_demand_micros;
  }
  return part;
}

}  // namespace

std::unique_ptr<Selector> MakeSelector(const SchedulerOptions& options,
                                       const std::vector<PoolTenant>& tenants,
                                       const std::vector<double>& org_weights,
                                       const FloorBudget& floors) {
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
  return std::make_unique<DrrSelector>(options, tenants, org_weights, floors);
}

Pool::Pool(std::string name, const SchedulerOptions& options,
           const std::vector<double>& org_weights,
           const std::vector<TenantSettings>& settings)
    : name_(std::move(name)),
      options_(options),
      org_weights_(org_weights),
      settings_(settings),
      selector_(MakeSelector(options, tenants_, org_weights, floors_)) {}

Pool::Slot Pool::Join(TenantId tenant) {
  auto [it, added] =
      slots_.try_emplace(tenant, static_cast<Slot>(tenants_.size()));
  if (added) {
    tenant_ids_.push_back(tenant);
    PoolTenant& state = tenants_.emplace_back();
    state.settings = settings_[tenant];
    ApplySlots(state);
  }
  return it->second;
}

std::optional<Pool::Slot> Pool::Find(TenantId tenant) const {
  auto it = slots_.find(tenant);
  if (it == slots_.end()) return std::nullopt;
  return it->second;
}

void Pool::ApplySlots(PoolTenant& state) {
  state.cap_slots = state.settings.cap.CapSlots(capacity_);
  // A floor above the cap would promise what the cap forbids.
  state.floor_slots =
      std::min(state.settings.floor.FloorSlots(capacity_), state.cap_slots);
  state.whole_floor_slots = std::min(
      state.settings.floor.WholeFloorSlots(capacity_), state.cap_slots);
  double demand =
      std::min({state.settings.floor.ExactSlots(capacity_),
                static_cast<double>(state.cap_slots), FloorBudget::kMaxSlots});
  state.floor_demand_micros = std::llround(demand * FloorBudget::kMicros);
}

void Pool::SetCapacity(uint32_t slots) {
  capacity_ = slots;
  floors_.SetCapacity(slots);
  for (Slot slot = 0; slot < tenants_.size(); ++slot) {
    ApplySlots(tenants_[slot]);
    Touch(slot);
  }
}

void Pool::SettingsChanged(TenantId tenant) {
  std::optional<Slot> slot = Find(tenant);
  if (!slot) return;  // read when it joins
  const TenantSettings& settings = settings_[tenant];
  PoolTenant& state = tenants_[*slot];
  if (state.settings.org != settings.org) selector_->Detach(*slot);
  Count(state, -1);  // the weight may change
  state.settings = settings;
  ApplySlots(state);
  Touch(*slot);
  selector_->Charge(*slot, 0);  // a lowered weight lowers the ceiling now
}

void Pool::Enqueue(TenantId tenant, int32_t priority, JobId job,
                   std::optional<double> cost, double now) {
  float declared = cost ? static_cast<float>(*cost)
                        : std::numeric_limits<float>::quiet_NaN();
  Slot slot = Join(tenant);
  tenants_[slot].queue.Push(priority,
                            QueuedJob{job, next_seq_++, now, declared});
  Touch(slot);
}

std::optional<Pool::Leased> Pool::LeaseNext() {
  std::optional<Slot> slot = selector_->Pick();
  if (!slot) return std::nullopt;
  PoolTenant& state = tenants_[*slot];
  Leased leased{};
  QueuedJob job = state.queue.PopFront(&leased.priority);
  if (!std::isnan(job.cost)) leased.declared_cost = job.cost;
  double cost =
      ChargeFor(leased.declared_cost
                    ? *leased.declared_cost * state.declared_scale.Scale()
                    : state.estimator.Estimate(options_.default_cost));
  leased.dispatch = Dispatch{job.id, tenant_ids_[*slot], cost};
  ++state.running;
  selector_->Charge(*slot, cost);
  Touch(*slot);
  return leased;
}

void Pool::EndAttempt(TenantId tenant, double charged, double runtime,
                      bool succeeded, std::optional<double> declared) {
  Slot slot = Join(tenant);  // it has: its job ran here
  PoolTenant& state = tenants_[slot];
  --state.running;
  state.worker_seconds += runtime;
  if (succeeded) {
    state.estimator.Observe(runtime, options_.estimate_alpha);
    if (declared && *declared > 0) {
      state.declared_scale.Observe(*declared, runtime, options_.estimate_alpha);
    }
  }
  selector_->Charge(slot, ChargeFor(runtime) - charged);
  Touch(slot);
}

double Pool::ChargeFor(double seconds) const {
  return std::max(options_.min_charge, seconds);
}

bool Pool::Cancel(TenantId tenant, JobId job) {
  std::optional<Slot> slot = Find(tenant);
  if (!slot || !tenants_[*slot].queue.Remove(job)) return false;
  Touch(*slot);
  return true;
}

std::vector<JobId> Pool::Purge(TenantId tenant) {
  std::vector<JobId> purged;
  std::optional<Slot> slot = Find(tenant);
  if (!slot) return purged;
  PoolTenant& state = tenants_[*slot];
  purged.reserve(state.queue.size());
  int32_t priority = 0;
  while (!state.queue.empty()) purged.push_back(state.queue.PopFront(&priority).id);
  Touch(*slot);
  return purged;
}

void Pool::AdoptRunning(TenantId tenant, double cost) {
  Slot slot = Join(tenant);
  ++tenants_[slot].running;
  selector_->Charge(slot, cost);
  Touch(slot);
}

void Pool::Count(PoolTenant& state, int sign) {
  if (state.counted_active) {
    OrgId org = state.settings.org;
    if (org >= org_totals_.size()) org_totals_.resize(org + 1);
    OrgTotals& totals = org_totals_[org];
    totals.weight += sign * state.settings.weight;
    if (sign > 0 && totals.tenants++ == 0) {
      totals.counted_org_weight = org_weights_[org];
      active_org_weight_ += totals.counted_org_weight;
    } else if (sign < 0 && --totals.tenants == 0) {
      active_org_weight_ -= totals.counted_org_weight;
      totals.weight = 0;  // no rounding left behind
    }
  }
  if (state.counted_waiting) waiting_tenants_ += static_cast<uint32_t>(sign);
  if (sign > 0) {
    FloorBudget::Part part = FloorPartOf(state);
    floors_.Add(part);  // from registers: read back, it stalled every lease
    state.counted_floor = part;
  } else {
    floors_.Remove(state.counted_floor);
    state.counted_floor = {};
    state.counted_active = state.counted_waiting = false;
  }
}

void Pool::Touch(Slot slot) {
  selector_->Refile(slot);
  PoolTenant& state = tenants_[slot];
  Count(state, -1);
  // A tenant held at a hard cap has work but cannot take a slot, so it does
  // not make anyone else over share.
  state.counted_waiting =
      state.HasWork() &&
      !(state.AtCap() && state.settings.cap_mode == CapMode::kHard);
  state.counted_active = state.counted_waiting || state.running > 0;
  Count(state, +1);
}

void Pool::OrgWeightChanged(OrgId org) {
  if (org >= org_totals_.size() || org_totals_[org].tenants == 0) return;
  OrgTotals& totals = org_totals_[org];
  active_org_weight_ += org_weights_[org] - totals.counted_org_weight;
  totals.counted_org_weight = org_weights_[org];
}

bool Pool::OverShare(TenantId tenant) const {
  std::optional<Slot> slot = Find(tenant);
  if (!slot) return false;  // runs nothing here
  const PoolTenant& state = tenants_[*slot];
  uint32_t others_waiting = waiting_tenants_ - (state.counted_waiting ? 1 : 0);
  if (others_waiting == 0 || active_org_weight_ <= 0) return false;
  if (state.settings.org >= org_totals_.size()) return false;  // not active
  const OrgTotals& totals = org_totals_[state.settings.org];
  if (totals.weight <= 0) return false;
  double share = capacity_ * totals.counted_org_weight / active_org_weight_ *
                 state.settings.weight / totals.weight;
  return state.running > share;
}

TenantPoolStats Pool::Stats(TenantId tenant) const {
  static const PoolTenant kUnused;  // a tenant that never used this pool
  std::optional<Slot> slot = Find(tenant);
  const PoolTenant& state = slot ? tenants_[*slot] : kUnused;
  TenantPoolStats stats;
  stats.queued = state.queue.size();
  stats.running = state.running;
  stats.deficit = slot ? selector_->Deficit(*slot) : 0;
  stats.worker_seconds = state.worker_seconds;
  stats.estimate = state.estimator.Estimate(options_.default_cost);
  stats.oldest_ready_at = state.queue.OldestReadyAt();
  if (state.settings.cap.is_set()) stats.cap_slots = state.cap_slots;
  stats.whole_floor_slots = state.whole_floor_slots;
  return stats;
}

}  // namespace fairq::sched
