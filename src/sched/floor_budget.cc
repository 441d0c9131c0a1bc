#include "sched/floor_budget.h"

#include <algorithm>
#include <cmath>

namespace fairq::sched {
namespace {

// Demand sums shares of the capacity (0.3 * 10 is 2.9999...); the slack keeps
// a sum that lands on a whole slot from rounding down a slot.
constexpr double kSlack = 1e-9;

}  // namespace

uint32_t FloorBudget::Reserved() const {
  if (capacity_ == 0) return 0;
  double exact = std::floor(std::max(0.0, demand_) + kSlack);
  uint32_t whole =
      exact >= capacity_ ? capacity_ : static_cast<uint32_t>(exact);
  return std::max(whole, std::min(slots_, capacity_ - 1));
}

}  // namespace fairq::sched
