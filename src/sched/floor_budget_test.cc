#include "sched/floor_budget.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace fairq::sched {
namespace {

FloorBudget::Part Floor(double demand, uint32_t slots, uint32_t held = 0) {
  return FloorBudget::Part{std::llround(demand * FloorBudget::kMicros), slots,
                           held, true, false};
}

FloorBudget::Part Floorless() {
  return FloorBudget::Part{0, 0, 0, false, true};
}

FloorBudget Budget(uint32_t capacity,
                   const std::vector<FloorBudget::Part>& parts) {
  FloorBudget budget;
  budget.SetCapacity(capacity);
  for (const FloorBudget::Part& part : parts) budget.Add(part);
  return budget;
}

TEST(FloorBudgetTest, RoundedUpFloorsLeaveOneSlotWhenTheirExactSumAllows) {
  // 3 x 30% of 8 slots: 7.2 exact, 9 rounded. 7 leaves room for the others.
  EXPECT_EQ(Budget(8, {Floor(2.4, 3), Floor(2.4, 3), Floor(2.4, 3)}).Reserved(),
            7u);
  // One 30% floor keeps its rounding up: 3 of 8.
  EXPECT_EQ(Budget(8, {Floor(2.4, 3)}).Reserved(), 3u);
  // 3 x 30% of 10 slots: exactly 9.
  EXPECT_EQ(Budget(10, {Floor(3, 3), Floor(3, 3), Floor(3, 3)}).Reserved(), 9u);
}

TEST(FloorBudgetTest, FloorsThatFillThePoolExactlyAreKeptWhole) {
  EXPECT_EQ(Budget(8, {Floor(4, 4), Floor(4, 4)}).Reserved(), 8u);
  // 57% of 100 slots is 56.999... in doubles; with 43% it still fills the
  // pool.
  double most = 0.57 * 100;
  ASSERT_LT(most, 57.0);
  FloorBudget budget =
      Budget(100, {Floor(most, 57), Floor(0.43 * 100, 43), Floorless()});
  EXPECT_EQ(budget.Reserved(), 100u);
  EXPECT_EQ(budget.demand(), 100);
}

// Each floor is rounded to the nearest millionth of a slot on its own:
// six of 1/6 of 8 slots (1.333333 each) must still fill the pool.
TEST(FloorBudgetTest, RoundingToMillionthsLosesNoSlot) {
  std::vector<FloorBudget::Part> sixths(6, Floor(8.0 / 6, 2));
  sixths.push_back(Floorless());
  EXPECT_EQ(Budget(8, sixths).Reserved(), 8u);
  std::vector<FloorBudget::Part> sevenths(7, Floor(8.0 / 7, 2));
  sevenths.push_back(Floorless());
  EXPECT_EQ(Budget(8, sevenths).Reserved(), 8u);
  EXPECT_EQ(Budget(1, {Floor(0.9999, 1), Floorless()}).Reserved(), 0u);
}

TEST(FloorBudgetTest, OvercommittedFloorsHoldThePool) {
  FloorBudget budget = Budget(3, {Floor(4, 4)});  // a count floor of 4 on 3
  EXPECT_EQ(budget.Reserved(), 3u);
  EXPECT_EQ(budget.demand(), 4);
  EXPECT_EQ(Budget(0, {Floor(1, 1)}).Reserved(), 0u);
}

TEST(FloorBudgetTest, ClosesOnlyWhileATenantWithoutAFloorWaits) {
  FloorBudget budget =
      Budget(8, {Floor(2.4, 3, 3), Floor(2.4, 3, 2), Floor(2.4, 3, 2)});
  EXPECT_TRUE(budget.Open());  // 7 held, nobody else waits
  budget.Add(Floorless());
  EXPECT_FALSE(budget.Open());  // 7 held of 7
  budget.Remove(Floor(2.4, 3, 2));
  budget.Add(Floor(2.4, 3, 1));
  EXPECT_TRUE(budget.Open());  // 6 held
  budget.Remove(Floorless());
  budget.Add(Floor(2.4, 3, 2));
  budget.Remove(Floor(2.4, 3, 1));
  EXPECT_TRUE(budget.Open());
}

TEST(FloorBudgetTest, RemovingEveryPartLeavesNothing) {
  FloorBudget budget = Budget(10, {});
  std::vector<FloorBudget::Part> parts = {Floor(0.1 * 10, 1, 1),
                                          Floor(0.7 * 10, 7), Floorless()};
  for (const FloorBudget::Part& part : parts) budget.Add(part);
  for (const FloorBudget::Part& part : parts) budget.Remove(part);
  budget.Add(Floorless());
  EXPECT_EQ(budget.Reserved(), 0u);
  EXPECT_EQ(budget.demand(), 0);
  EXPECT_FALSE(budget.Open());  // nothing may be held ahead of DRR
}

}  // namespace
}  // namespace fairq::sched
