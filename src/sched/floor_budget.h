// FloorBudget: how many of a pool's slots the reserved floors may hold ahead
// of DRR. Each floor rounds up, but rounded up together floors can pass the
// pool (3 x 30% of 8 slots is 3 + 3 + 3) and starve every tenant without a
// floor. So a floor is served first in two parts (DrrSelector): its share
// rounded down always, and the slot it rounds up to only while Open(): while
// no tenant waits on DRR (a floor rounded down already met counts as none),
// or the floors hold less than Reserved(), their exact sum rounded down, or
// their rounded sum while that leaves one slot for the others. Floors whose
// exact sum fills the pool (2 x 50%) are kept whole: the operator reserved the
// whole pool.
//
// Not thread-safe; owned by a Pool, read by its DrrSelector.
#ifndef FAIRQ_SCHED_FLOOR_BUDGET_H_
#define FAIRQ_SCHED_FLOOR_BUDGET_H_

#include <cstdint>

namespace fairq::sched {

class FloorBudget {
 public:
  // What one tenant adds to the totals. The caller keeps what it added, so
  // that exactly that is taken away when the tenant's state changes.
  struct Part {
    // Its floor while active, in millionths of a slot: whole numbers, so
    // that adding and taking away leave no rounding behind.
    int64_t demand_micros = 0;
    uint32_t slots = 0;  // its floor rounded up, while active
    uint32_t held = 0;   // its running jobs that its floor covers
    bool has_floor = false;
    // Waits on DRR: has work, room under its cap, and its floor rounded
    // down (if any) met.
    bool waits_in_drr = false;
  };

  static constexpr int64_t kMicros = 1'000'000;
  // A floor counts at most this many slots: no pool has more, and the
  // sum of many cannot overflow.
  static constexpr double kMaxSlots = 1 << 24;

  void Add(const Part& part) { Apply(part, +1); }
  void Remove(const Part& part) { Apply(part, -1); }
  void SetCapacity(uint32_t slots) { capacity_ = slots; }

  // Slots the floors may hold ahead of DRR while a tenant waits on DRR.
  uint32_t Reserved() const;
  // The slots floors round up to go ahead of DRR.
  bool Open() const { return waiting_ == 0 || held_ < Reserved(); }
  // The active tenants' floors in slots, unrounded. Above the capacity,
  // the floors are overcommitted: some cannot be met.
  double demand() const {
    return static_cast<double>(demand_micros_) / kMicros;
  }

 private:
  void Apply(const Part& part, int sign) {
    auto usign = static_cast<uint32_t>(sign);  // -1 wraps: subtracts
    waiting_ += part.waits_in_drr ? usign : 0;
    if (!part.has_floor) return;
    demand_micros_ += sign * part.demand_micros;
    slots_ += usign * part.slots;
    held_ += usign * part.held;
    parts_ += part.slots > 0 ? usign : 0;
  }

  uint32_t capacity_ = 0;
  int64_t demand_micros_ = 0;
  uint32_t slots_ = 0;
  uint32_t held_ = 0;
  uint32_t parts_ = 0;  // floors counted in demand_micros_
  uint32_t waiting_ = 0;
};

}  // namespace fairq::sched

#endif  // FAIRQ_SCHED_FLOOR_BUDGET_H_
