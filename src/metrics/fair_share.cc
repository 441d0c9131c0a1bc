#include "metrics/fair_share.h"

#include <algorithm>
#include <cmath>

namespace fairq::metrics {

uint32_t ShareWindow::AddPair(uint32_t tenant, uint32_t pool) {
  if (tenant >= index_.size()) index_.resize(tenant + 1);
  std::vector<uint32_t>& pools = index_[tenant];
  if (pool >= pools.size()) pools.resize(pool + 1, kNoPair);
  pools[pool] = static_cast<uint32_t>(pairs_.size());
  pairs_.push_back(Held{tenant, pool});
  return pools[pool];
}

void ShareWindow::Change(uint32_t pair, int delta, int64_t now_ms) {
  Held& held = pairs_[pair];
  held.held_ms += held.leased * std::max<int64_t>(0, now_ms - held.since_ms);
  held.since_ms = std::max(held.since_ms, now_ms);
  // A lease that ended without a start we saw (none should) must not make
  // the count negative.
  held.leased = std::max<int64_t>(0, held.leased + delta);
}

void ShareWindow::Advance(int64_t now_ms) {
  Sample current{now_ms, std::vector<int64_t>(pairs_.size())};
  for (uint32_t i = 0; i < pairs_.size(); ++i) {
    Change(i, 0, now_ms);
    current.held_ms[i] = pairs_[i].held_ms;
  }
  // Keep the newest sample at least window_ms old as the window's start,
  // and none older.
  while (samples_.size() >= 2 && samples_[1].at_ms <= now_ms - window_ms_) {
    samples_.pop_front();
  }
  // Frequent scrapes would keep a sample (one number per pair) each: keep
  // them at least a twelfth of the window apart instead, which moves the
  // window's start by at most that much.
  size_t n = samples_.size();
  if (n >= 2 && samples_[n - 1].at_ms - samples_[n - 2].at_ms <
                    window_ms_ / kSamplesPerWindow) {
    samples_.pop_back();
  }
  samples_.push_back(std::move(current));
}

double ShareWindow::ReceivedAt(uint32_t pair) const {
  if (samples_.empty()) return 0;
  const std::vector<int64_t>& now = samples_.back().held_ms;
  int64_t end = pair < now.size() ? now[pair] : 0;
  int64_t start = 0;
  if (samples_.size() >= 2) {
    const std::vector<int64_t>& base = samples_.front().held_ms;
    start = pair < base.size() ? base[pair] : 0;
  }
  return static_cast<double>(end - start) / 1000.0;
}

double ShareWindow::Received(uint32_t tenant, uint32_t pool) const {
  if (tenant >= index_.size() || pool >= index_[tenant].size() ||
      index_[tenant][pool] == kNoPair) {
    return 0;
  }
  return ReceivedAt(index_[tenant][pool]);
}

std::vector<double> PoolShares(const std::vector<ShareInput>& tenants,
                               const std::vector<double>& org_weights) {
  std::vector<double> org_active_weight(org_weights.size(), 0);
  for (const ShareInput& t : tenants) {
    if (t.active) org_active_weight[t.org] += t.weight;
  }
  double orgs_total = 0;
  for (size_t o = 0; o < org_weights.size(); ++o) {
    if (org_active_weight[o] > 0) orgs_total += org_weights[o];
  }
  std::vector<double> shares(tenants.size(), 0);
  if (orgs_total <= 0) return shares;
  for (size_t i = 0; i < tenants.size(); ++i) {
    const ShareInput& t = tenants[i];
    if (!t.active) continue;
    shares[i] =
        org_weights[t.org] / orgs_total * t.weight / org_active_weight[t.org];
  }
  return shares;
}

bool Starved(uint64_t ready, uint64_t leased, double share, uint32_t slots,
             std::optional<uint32_t> cap_slots, uint32_t floor_slots) {
  if (ready == 0) return false;
  // The epsilon keeps an exact share (4 of 8 slots as 0.5 x 8) from
  // rounding down to 3 through floating point.
  auto target = static_cast<uint64_t>(std::floor(share * slots + 1e-9));
  target = std::max<uint64_t>(target, floor_slots);
  if (cap_slots) target = std::min<uint64_t>(target, *cap_slots);
  return leased < target;
}

}  // namespace fairq::metrics
