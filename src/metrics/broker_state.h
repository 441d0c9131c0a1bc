// BrokerState: what the broker reports of itself when a scrape asks, in
// dense tenant and pool ids. The scrape posts a command to the dispatcher,
// which fills this in and hands it to the scrape's SnapshotVisitor on the
// dispatcher thread; values that depend on the time of the scrape (the age
// of the oldest job) are left as times and computed by the scrape.
//
// Plain values. Standard library only.
#ifndef FAIRQ_METRICS_BROKER_STATE_H_
#define FAIRQ_METRICS_BROKER_STATE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace fairq::metrics {

struct TenantState {
  double weight = 1;
  uint32_t org = 0;  // index into BrokerState::org_weights
  bool paused = false;
};

// One tenant in one pool; only pairs with any job in any state are listed.
struct TenantPoolState {
  uint32_t tenant = 0;
  uint32_t pool = 0;
  uint64_t ready = 0;
  uint64_t scheduled = 0;
  uint64_t leased = 0;
  uint64_t dead = 0;
  // Unix ms at which the oldest READY job became ready; none when none.
  std::optional<int64_t> oldest_ready_ms;
  // The cap in slots at the pool's live capacity; none without a cap.
  std::optional<uint32_t> cap_slots;
  // The floor in slots, rounded down: what DRR keeps for the tenant even when
  // the floors' rounding up passes the pool (sched/floor_budget.h).
  uint32_t floor_slots = 0;
};

struct PoolState {
  uint32_t workers = 0;  // live workers serving the pool
  uint32_t slots = 0;    // their slots: the pool's live capacity
  uint32_t tenants = 0;  // tenants holding scheduling state in the pool
  // The floors of the tenants active in the pool, in slots, unrounded.
  double floor_slots = 0;
};

struct BrokerState {
  std::vector<TenantState> tenants;  // by tenant id
  // An organisation's weight, by the index TenantState::org gives. A
  // tenant without an organisation has one of its own, weighing as it does.
  std::vector<double> org_weights;
  std::vector<PoolState> pools;  // by pool id
  std::vector<TenantPoolState> rows;
};

// Called on the dispatcher thread with the state at `now_ms`.
using SnapshotVisitor =
    std::function<void(const BrokerState& state, int64_t now_ms)>;

}  // namespace fairq::metrics

#endif  // FAIRQ_METRICS_BROKER_STATE_H_
