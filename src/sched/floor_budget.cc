#include "sched/floor_budget.h"

#include <algorithm>

namespace fairq::sched {

uint32_t FloorBudget::Reserved() const {
  if (capacity_ == 0) return 0;
  // Each part was rounded to the nearest millionth: six floors of 1/6 of 8
  // slots sum to 7.999998 and still fill the pool.
  int64_t whole =
      std::min<int64_t>((demand_micros_ + parts_) / kMicros, capacity_);
  return std::max(static_cast<uint32_t>(whole),
                  std::min(slots_, capacity_ - 1));
}

}  // namespace fairq::sched
