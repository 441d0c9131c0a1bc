#include "sched/floor_budget.h"

#include <algorithm>

namespace fairq::sched {

uint32_t FloorBudget::Reserved() const {
  if (capacity_ == 0) return 0;
  int64_t whole = std::min<int64_t>(demand_micros_ / kMicros, capacity_);
  return std::max(static_cast<uint32_t>(whole),
                  std::min(slots_, capacity_ - 1));
}

}  // namespace fairq::sched
