#include "server/broker/read_ahead_planner.h"

#include <gtest/gtest.h>

namespace fairq::server {
namespace {

constexpr uint64_t kSpan = ReadAheadPlanner::kSpan;
constexpr uint64_t kManyIds = uint64_t{1} << 40;  // ids assigned so far

// Each lease as the broker reports it.
std::optional<IdRange> Miss(ReadAheadPlanner& plan, uint64_t id,
                            uint64_t next_id = kManyIds) {
  return plan.OnLease(id, /*cached=*/false, /*read_ahead=*/false, next_id);
}
std::optional<IdRange> ReadAheadHit(ReadAheadPlanner& plan, uint64_t id,
                                    uint64_t next_id = kManyIds) {
  return plan.OnLease(id, /*cached=*/true, /*read_ahead=*/true, next_id);
}
std::optional<IdRange> EnqueueHit(ReadAheadPlanner& plan, uint64_t id) {
  return plan.OnLease(id, /*cached=*/true, /*read_ahead=*/false, kManyIds);
}

void ExpectRange(const std::optional<IdRange>& range, uint64_t begin) {
  ASSERT_TRUE(range.has_value());
  EXPECT_EQ(range->begin, begin);
  EXPECT_EQ(range->end, begin + kSpan);
}

TEST(ReadAheadPlannerTest, AMissOpensAWindowAndMissesInsideItAskNothing) {
  ReadAheadPlanner plan;
  ExpectRange(Miss(plan, 100), 100);
  EXPECT_FALSE(Miss(plan, 101));
  EXPECT_FALSE(Miss(plan, 100 + kSpan - 1));
  ExpectRange(Miss(plan, 100 + kSpan), 100 + kSpan);  // beyond: a new window
}

TEST(ReadAheadPlannerTest, HitsWithinARangeOfTheEndKeepTheWindowARangeAhead) {
  ReadAheadPlanner plan;
  ExpectRange(Miss(plan, 100), 100);
  ExpectRange(ReadAheadHit(plan, 101), 100 + kSpan);  // within a range
  EXPECT_FALSE(ReadAheadHit(plan, 102));              // 2 ranges ahead now
  EXPECT_FALSE(ReadAheadHit(plan, 100 + kSpan - 1));
  ExpectRange(ReadAheadHit(plan, 100 + kSpan), 100 + 2 * kSpan);
}

TEST(ReadAheadPlannerTest, SpecsCachedAtEnqueueNeitherOpenNorExtend) {
  ReadAheadPlanner plan;
  EXPECT_FALSE(EnqueueHit(plan, 100));
  ExpectRange(Miss(plan, 200), 200);
  EXPECT_FALSE(EnqueueHit(plan, 201));
  EXPECT_FALSE(ReadAheadHit(plan, 100));  // in no window
}

// The window covers its last three ranges: a miss behind them (a slower
// tenant's job, pushed out of the cache) opens a window of its own.
TEST(ReadAheadPlannerTest, AMissBehindAWindowsLastRangesOpensAnother) {
  ReadAheadPlanner plan;
  ExpectRange(Miss(plan, 0), 0);
  for (uint64_t k = 1; k <= 3; ++k) {
    ExpectRange(ReadAheadHit(plan, k * kSpan - 1), k * kSpan);
  }
  EXPECT_FALSE(Miss(plan, kSpan));  // still covered: [kSpan, 4 * kSpan)
  ExpectRange(Miss(plan, kSpan - 1), kSpan - 1);
}

// Four windows at most. A fifth frontier's miss opens none while every
// window was used within kIdleLeases leases; after that it replaces the
// least recently used.
TEST(ReadAheadPlannerTest, AFifthFrontierWaitsForAWindowToFallIdle) {
  ReadAheadPlanner plan;
  for (uint64_t w = 0; w < ReadAheadPlanner::kWindows; ++w) {
    ExpectRange(Miss(plan, w * 10 * kSpan), w * 10 * kSpan);
  }
  ExpectRange(ReadAheadHit(plan, 0), kSpan);  // window 0 used again
  EXPECT_FALSE(Miss(plan, 100 * kSpan));      // all four in use
  for (uint64_t i = 0; i < ReadAheadPlanner::kIdleLeases; ++i) {
    EnqueueHit(plan, 1'000 * kSpan + i);  // leases that use no window
  }
  ExpectRange(Miss(plan, 100 * kSpan), 100 * kSpan);  // replaces window 1
  EXPECT_FALSE(Miss(plan, 1));                        // window 0 stays
  ExpectRange(Miss(plan, 10 * kSpan), 10 * kSpan);    // replaces window 2
}

// Ids not assigned yet are not asked for; once they are, the leases near
// the window's end ask for them.
TEST(ReadAheadPlannerTest, RangesStopAtTheNextJobId) {
  ReadAheadPlanner plan;
  std::optional<IdRange> first = Miss(plan, 100, /*next_id=*/150);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->begin, 100u);
  EXPECT_EQ(first->end, 150u);
  EXPECT_FALSE(ReadAheadHit(plan, 101, /*next_id=*/150));  // nothing new
  EXPECT_FALSE(ReadAheadHit(plan, 101, /*next_id=*/400));  // a sliver
  std::optional<IdRange> later = ReadAheadHit(plan, 102, /*next_id=*/1000);
  ASSERT_TRUE(later);
  EXPECT_EQ(later->begin, 150u);
  EXPECT_EQ(later->end, 1000u);
}

// A read cut short at its byte budget cuts its window back to where it
// stopped; the next lease near there asks for the rest.
TEST(ReadAheadPlannerTest, AWindowIsCutBackToWhereAReadStopped) {
  ReadAheadPlanner plan;
  ExpectRange(Miss(plan, 0), 0);
  ExpectRange(ReadAheadHit(plan, 1), kSpan);
  plan.Dropped({kSpan + 100, 2 * kSpan});
  ExpectRange(ReadAheadHit(plan, kSpan + 50), kSpan + 100);
}

// A range the reader could not take is asked for again.
TEST(ReadAheadPlannerTest, ADroppedRangeIsAskedForAgain) {
  ReadAheadPlanner plan;
  ExpectRange(Miss(plan, 100), 100);
  std::optional<IdRange> next = ReadAheadHit(plan, 101);
  ExpectRange(next, 100 + kSpan);
  plan.Dropped(*next);
  ExpectRange(ReadAheadHit(plan, 102), 100 + kSpan);
  std::optional<IdRange> opened = Miss(plan, 10 * kSpan);
  plan.Dropped(*opened);
  ExpectRange(Miss(plan, 10 * kSpan), 10 * kSpan);
}

}  // namespace
}  // namespace fairq::server
