#include "sched/baseline_selectors.h"

namespace fairq::sched {

void ArrivalOrderSelector::Refile(TenantId tenant) {
  if (tenant >= position_.size()) position_.resize(tenant + 1, kAbsent);
  bool active = position_[tenant] != kAbsent;
  if (tenants_[tenant].HasWork() == active) return;
  if (!active) {
    position_[tenant] = active_.size();
    active_.push_back(tenant);
    return;
  }
  TenantId last = active_.back();
  active_[position_[tenant]] = last;
  position_[last] = position_[tenant];
  active_.pop_back();
  position_[tenant] = kAbsent;
}

template <class Eligible>
std::optional<TenantId> ArrivalOrderSelector::Earliest(
    Eligible eligible) const {
  std::optional<TenantId> best;
  uint64_t best_seq = 0;
  for (TenantId tenant : active_) {
    const PoolTenant& state = tenants_[tenant];
    if (!eligible(state)) continue;
    uint64_t seq = state.queue.Front().seq;
    if (!best || seq < best_seq) {
      best = tenant;
      best_seq = seq;
    }
  }
  return best;
}

std::optional<TenantId> ArrivalOrderSelector::Pick() {
  if (caps_ == Caps::kIgnore) {
    return Earliest([](const PoolTenant&) { return true; });
  }
  std::optional<TenantId> best =
      Earliest([](const PoolTenant& state) { return !state.AtCap(); });
  if (!best && caps_ == Caps::kWhileOthersWait) {
    best = Earliest([](const PoolTenant&) { return true; });
  }
  return best;
}

void RoundRobinSelector::Refile(TenantId tenant) {
  if (tenant >= links_.size()) links_.resize(tenant + 1);
  Access access{links_};
  bool member = links_[tenant].linked();
  if (tenants_[tenant].HasWork() == member) return;
  if (member) {
    ring_.Erase(access, tenant);
  } else {
    ring_.Insert(access, tenant);
  }
}

std::optional<TenantId> RoundRobinSelector::Pick() {
  if (ring_.empty()) return std::nullopt;
  Access access{links_};
  return ring_.NextInTurn(access);
}

}  // namespace fairq::sched
