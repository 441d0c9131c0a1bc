// SlotLimit: a per-tenant number of worker slots, either fixed or a share of
// a pool's live capacity (fixed counts go wrong when the pool scales).
//
// Immutable value; safe to copy across threads.
#ifndef FAIRQ_SCHED_SLOT_LIMIT_H_
#define FAIRQ_SCHED_SLOT_LIMIT_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "base/status.h"

namespace fairq::sched {

class SlotLimit {
 public:
  static constexpr uint32_t kUnlimited = std::numeric_limits<uint32_t>::max();

  SlotLimit() = default;  // no limit
  static SlotLimit Count(uint32_t slots) { return SlotLimit(kCount, slots); }
  static SlotLimit Share(double fraction) {
    return SlotLimit(kShare, fraction);
  }
  // Parses "4" (a count) or "50%" (a share). `field` names the setting in
  // the error message.
  static StatusOr<SlotLimit> Parse(std::string_view text,
                                   std::string_view field);

  bool is_set() const { return kind_ != kNone; }
  bool is_share() const { return kind_ == kShare; }
  double value() const { return value_; }

  // A share must lie in (0, 1]; a count must be at least 1.
  Status Validate(std::string_view field) const;

  // Slots a cap allows at `capacity`: shares round down (a cap never exceeds
  // its share) but never below 1. kUnlimited when unset.
  uint32_t CapSlots(uint32_t capacity) const;
  // Slots a floor reserves at `capacity`: shares round up, so that a floor
  // covers its share where the floors fit (FloorBudget). 0 when unset.
  uint32_t FloorSlots(uint32_t capacity) const;
  // The same rounded down: the slots a floor keeps even when the floors'
  // rounding up passes the pool.
  uint32_t WholeFloorSlots(uint32_t capacity) const;
  // The limit at `capacity` before rounding; 0 when unset.
  double ExactSlots(uint32_t capacity) const;

  std::string ToString() const;

 private:
  enum Kind : uint8_t { kNone, kCount, kShare };
  SlotLimit(Kind kind, double value) : kind_(kind), value_(value) {}

  Kind kind_ = kNone;
  double value_ = 0;
};

}  // namespace fairq::sched

#endif  // FAIRQ_SCHED_SLOT_LIMIT_H_
