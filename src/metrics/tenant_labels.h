// TenantLabels: which tenants get label series of their own and which are
// counted under tenant="_other", so the number of series stays bounded
// (metrics.max_tenant_series). The rules, also in docs/metrics.md:
//   - A tenant takes a free slot the first time it is active (an event, or
//     jobs queued or leased at a scrape): first come, first served. With no
//     slot free it is counted under _other (slot kOther).
//   - A tenant with jobs in some state but none queued or leased (only DEAD
//     ones, e.g. after a restart) is shown but not active: at a Rebalance it
//     takes a slot left free once the active tenants have theirs, and it
//     stays idle, so it may lose the slot to an active one.
//   - At each Rebalance (one per scrape), when active _other tenants wait,
//     labeled tenants idle for at least `idle_ms` (no event, nothing queued
//     or leased) give their slots up, longest idle first, and the free
//     slots go to the waiting tenants with the most events since the last
//     Rebalance: the busiest keep or get their own series.
//   - An evicted tenant starts over: when next active it takes a free slot
//     or goes to _other.
//
// Not thread-safe: the dispatcher thread owns it. Touch is the hot path.
#ifndef FAIRQ_METRICS_TENANT_LABELS_H_
#define FAIRQ_METRICS_TENANT_LABELS_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "metrics/metrics.h"

namespace fairq::metrics {

class TenantLabels {
 public:
  static constexpr uint32_t kOther = 0;  // slots 1..max_labeled are labeled

  TenantLabels(uint32_t max_labeled, int64_t idle_ms);

  // The slot for an event of `tenant`, which counts as activity.
  uint32_t Touch(uint32_t tenant) {
    if (tenant >= entries_.size()) entries_.resize(tenant + 1);
    Entry& entry = entries_[tenant];
    ++entry.events;
    if (entry.slot == kNone) Assign(entry, tenant);
    return entry.slot;
  }
  // Where the tenant's state is shown: its slot, or kOther when it has none.
  uint32_t SlotOf(uint32_t tenant) const {
    if (tenant >= entries_.size() || entries_[tenant].slot == kNone) {
      return kOther;
    }
    return entries_[tenant].slot;
  }
  // The tenant never gets a slot of its own (one named "_other").
  void KeepInOther(uint32_t tenant);

  // What a tenant has in the broker at a scrape.
  enum class Jobs : uint8_t {
    kNone,
    kDeadOnly,  // only DEAD jobs: shown, but idle
    kLive,      // some READY, SCHEDULED or LEASED: busy
  };

  // Once per scrape. `jobs[t]`: what tenant t has (ids past the end have
  // none). Returns the slots taken from their tenants, whose series the
  // caller must drop before anything else uses the slot.
  std::vector<uint32_t> Rebalance(const std::vector<Jobs>& jobs,
                                  int64_t now_ms);

  // Tenants holding a slot of their own.
  uint32_t labeled() const { return max_labeled_ - free_count(); }
  // The tenant holding `slot` (1..max_labeled), or kNoTenant when free.
  uint32_t holder(uint32_t slot) const { return holders_[slot]; }
  uint32_t max_labeled() const { return max_labeled_; }

 private:
  static constexpr uint32_t kNone = kNoTenant;
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::min();

  struct Entry {
    uint32_t slot = kNone;
    uint32_t events = 0;  // since the last Rebalance
    int64_t last_active_ms = kNever;
    bool pinned = false;  // KeepInOther
  };

  void Assign(Entry& entry, uint32_t tenant);
  // Tenants with jobs but no slot of their own take the free slots, by id.
  void ShowWithJobs(const std::vector<Jobs>& jobs);
  uint32_t free_count() const { return static_cast<uint32_t>(free_.size()); }
  // Frees up to `count` slots of tenants idle long enough; returns them.
  std::vector<uint32_t> Evict(size_t count, int64_t now_ms);

  const uint32_t max_labeled_;
  const int64_t idle_ms_;
  std::vector<Entry> entries_;     // by tenant id
  std::vector<uint32_t> holders_;  // by slot; [0] unused
  std::vector<uint32_t> free_;     // free slots; the next taken is last
};

}  // namespace fairq::metrics

#endif  // FAIRQ_METRICS_TENANT_LABELS_H_
