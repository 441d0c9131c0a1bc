#include "metrics/tenant_labels.h"

#include <algorithm>
#include <utility>

namespace fairq::metrics {

TenantLabels::TenantLabels(uint32_t max_labeled, int64_t idle_ms)
    : max_labeled_(max_labeled),
      idle_ms_(idle_ms),
      holders_(max_labeled + 1, kNone) {
  for (uint32_t slot = max_labeled; slot >= 1; --slot) free_.push_back(slot);
}

void TenantLabels::Assign(Entry& entry, uint32_t tenant) {
  if (entry.pinned || free_.empty()) {
    entry.slot = kOther;
    return;
  }
  entry.slot = free_.back();
  free_.pop_back();
  holders_[entry.slot] = tenant;
}

void TenantLabels::KeepInOther(uint32_t tenant) {
  if (tenant >= entries_.size()) entries_.resize(tenant + 1);
  Entry& entry = entries_[tenant];
  entry.pinned = true;
  if (entry.slot != kNone && entry.slot != kOther) {
    free_.push_back(entry.slot);
    holders_[entry.slot] = kNone;
  }
  if (entry.slot != kNone) entry.slot = kOther;
}

std::vector<uint32_t> TenantLabels::Evict(size_t count, int64_t now_ms) {
  std::vector<std::pair<int64_t, uint32_t>> idle;  // last active, tenant
  for (uint32_t slot = 1; slot <= max_labeled_; ++slot) {
    uint32_t tenant = holders_[slot];
    if (tenant == kNone) continue;
    int64_t last = entries_[tenant].last_active_ms;
    if (now_ms - last >= idle_ms_) idle.emplace_back(last, tenant);
  }
  std::sort(idle.begin(), idle.end());
  std::vector<uint32_t> freed;
  for (size_t i = 0; i < idle.size() && i < count; ++i) {
    Entry& entry = entries_[idle[i].second];
    freed.push_back(entry.slot);
    holders_[entry.slot] = kNone;
    free_.push_back(entry.slot);
    entry.slot = kNone;
  }
  return freed;
}

void TenantLabels::ShowWithJobs(const std::vector<Jobs>& jobs) {
  for (uint32_t t = 0; t < jobs.size() && !free_.empty(); ++t) {
    Entry& entry = entries_[t];
    bool own_slot = entry.slot != kNone && entry.slot != kOther;
    if (jobs[t] != Jobs::kNone && !own_slot && !entry.pinned) {
      entry.slot = kNone;
      Assign(entry, t);
    }
  }
}

std::vector<uint32_t> TenantLabels::Rebalance(const std::vector<Jobs>& jobs,
                                              int64_t now_ms) {
  if (jobs.size() > entries_.size()) entries_.resize(jobs.size());
  auto busy = [&](uint32_t t) {
    return t < jobs.size() && jobs[t] == Jobs::kLive;
  };
  // Busy tenants not seen since they last had a slot (e.g. jobs restored at
  // startup) come first, in id order.
  for (uint32_t t = 0; t < jobs.size(); ++t) {
    if (busy(t) && entries_[t].slot == kNone) Assign(entries_[t], t);
  }
  std::vector<std::pair<uint32_t, uint32_t>> waiting;  // events, tenant
  for (uint32_t t = 0; t < entries_.size(); ++t) {
    Entry& entry = entries_[t];
    bool active = entry.events > 0 || busy(t);
    if (active || entry.last_active_ms == kNever) entry.last_active_ms = now_ms;
    if (active && entry.slot == kOther && !entry.pinned) {
      waiting.emplace_back(entry.events, t);
    }
    entry.events = 0;
  }
  std::vector<uint32_t> freed;
  if (waiting.size() > free_.size()) {
    freed = Evict(waiting.size() - free_.size(), now_ms);
  }
  // Busiest first; ties by id, so the outcome does not depend on hashing.
  std::sort(waiting.begin(), waiting.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (const auto& [events, tenant] : waiting) {
    if (free_.empty()) break;
    Entry& entry = entries_[tenant];
    entry.slot = kNone;
    Assign(entry, tenant);
  }
  // Last: a free slot goes to an active tenant before one with only dead
  // jobs.
  ShowWithJobs(jobs);
  return freed;
}

}  // namespace fairq::metrics
