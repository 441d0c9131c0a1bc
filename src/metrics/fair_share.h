// Fair share as fairqd's metrics define it (docs/metrics.md):
//   - ShareWindow measures what each tenant received in a pool: the
//     slot-seconds its leases held, integrated exactly from lease starts and
//     ends, over a trailing window.
//   - PoolShares gives each tenant its weighted share of a pool the way the
//     scheduler weighs tenants: its organisation's weight over the weights
//     of the organisations with active tenants, times its own weight over
//     those of its organisation's active tenants.
//   - Starved: READY jobs it may run, and fewer leases than its share of the
//     pool's live slots (whole slots, within its cap, at least its floor).
//
// Standard library only; time is passed in. ShareWindow is not
// thread-safe (the dispatcher thread owns it); the functions are pure.
#ifndef FAIRQ_METRICS_FAIR_SHARE_H_
#define FAIRQ_METRICS_FAIR_SHARE_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace fairq::metrics {

class ShareWindow {
 public:
  explicit ShareWindow(int64_t window_ms) : window_ms_(window_ms) {}

  // A lease of the tenant in the pool started / ended at `now_ms`.
  void Started(uint32_t tenant, uint32_t pool, int64_t now_ms) {
    Change(Pair(tenant, pool), +1, now_ms);
  }
  void Ended(uint32_t tenant, uint32_t pool, int64_t now_ms) {
    Change(Pair(tenant, pool), -1, now_ms);
  }

  // Once per scrape: closes the window at `now_ms`. Afterwards Received
  // gives what each pair held since the window's start: the newest earlier
  // Advance kept that is at least window_ms before now, else the oldest
  // kept, else (the first Advance) the start of the process. Advances are
  // kept at least window_ms / 12 apart (memory stays bounded however often
  // scrapes come), so a window spans window_ms plus at most one scrape
  // interval or window_ms / 12, once scrapes have run that long.
  void Advance(int64_t now_ms);

  // Slot-seconds the tenant's leases held in the pool over the window.
  double Received(uint32_t tenant, uint32_t pool) const;

  // Calls fn(tenant, pool, received) for each pair that received anything.
  template <class Fn>
  void ForEachReceived(Fn fn) const {
    for (uint32_t i = 0; i < pairs_.size(); ++i) {
      double received = ReceivedAt(i);
      if (received > 0) fn(pairs_[i].tenant, pairs_[i].pool, received);
    }
  }

 private:
  struct Held {
    uint32_t tenant = 0;
    uint32_t pool = 0;
    int64_t leased = 0;    // leases now
    int64_t since_ms = 0;  // when `leased` last changed
    int64_t held_ms = 0;   // slot-ms up to since_ms, since the start
  };
  struct Sample {
    int64_t at_ms;
    std::vector<int64_t> held_ms;  // by pair index; missing means 0
  };
  static constexpr uint32_t kNoPair = UINT32_MAX;
  static constexpr int64_t kSamplesPerWindow = 12;

  uint32_t Pair(uint32_t tenant, uint32_t pool) {
    if (tenant < index_.size() && pool < index_[tenant].size() &&
        index_[tenant][pool] != kNoPair) {
      return index_[tenant][pool];
    }
    return AddPair(tenant, pool);
  }
  uint32_t AddPair(uint32_t tenant, uint32_t pool);
  void Change(uint32_t pair, int delta, int64_t now_ms);
  double ReceivedAt(uint32_t pair) const;

  const int64_t window_ms_;
  std::vector<std::vector<uint32_t>> index_;  // [tenant][pool] -> pair
  std::vector<Held> pairs_;
  std::deque<Sample> samples_;  // oldest first; the last is the current
};

// One tenant of a pool, as PoolShares weighs it.
struct ShareInput {
  double weight = 1;
  uint32_t org = 0;  // index into the org weights
  bool active = false;
};

// Each tenant's share of the pool (they sum to 1 over the active ones; 0
// for inactive ones): org_weight / sum of active orgs' weights x weight /
// sum of the active weights within its org.
std::vector<double> PoolShares(const std::vector<ShareInput>& tenants,
                               const std::vector<double>& org_weights);

// Whether a tenant with `ready` jobs it may run (not paused) and `leased`
// leases is below its share of a pool of `slots` live slots: its target is
// floor(share x slots), at least its floor, at most its cap.
bool Starved(uint64_t ready, uint64_t leased, double share, uint32_t slots,
             std::optional<uint32_t> cap_slots, uint32_t floor_slots);

}  // namespace fairq::metrics

#endif  // FAIRQ_METRICS_FAIR_SHARE_H_
