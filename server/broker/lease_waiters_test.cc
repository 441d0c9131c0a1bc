#include "server/broker/lease_waiters.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace fairq::server {
namespace {

LeaseWaiters::Waiter MakeWaiter(WaiterId id, std::vector<uint32_t> pools,
                                int64_t deadline_ms) {
  LeaseWaiters::Waiter waiter;
  waiter.id = id;
  waiter.pools = std::move(pools);
  waiter.deadline_ms = deadline_ms;
  return waiter;
}

WaiterId FrontId(const LeaseWaiters& waiters, uint32_t pool) {
  const LeaseWaiters::Waiter* front = waiters.Front(pool);
  return front == nullptr ? 0 : front->id;
}

TEST(LeaseWaitersTest, EachPoolServesItsWaitersInArrivalOrder) {
  LeaseWaiters waiters;
  // Ids out of order: the order is the dispatcher's, not the ids'.
  waiters.Add(MakeWaiter(30, {1}, 1000));
  waiters.Add(MakeWaiter(10, {1, 2}, 1000));
  waiters.Add(MakeWaiter(20, {2}, 1000));
  EXPECT_EQ(FrontId(waiters, 1), 30u);
  EXPECT_EQ(FrontId(waiters, 2), 10u);
  ASSERT_TRUE(waiters.Take(10).has_value());
  EXPECT_EQ(FrontId(waiters, 2), 20u);
  EXPECT_EQ(FrontId(waiters, 1), 30u);
  ASSERT_TRUE(waiters.Take(30).has_value());
  EXPECT_EQ(FrontId(waiters, 1), 0u);
  EXPECT_FALSE(waiters.Take(30).has_value());  // taken once only
  EXPECT_FALSE(waiters.Take(99).has_value());  // never added
  EXPECT_EQ(FrontId(waiters, 2), 20u);
  EXPECT_FALSE(waiters.empty());
  ASSERT_TRUE(waiters.Take(20).has_value());
  EXPECT_TRUE(waiters.empty());
}

// Workers that name two pools, of which only one ever has work, must not
// leave an entry per call behind in the other.
TEST(LeaseWaitersTest, ACallAnsweredThroughOnePoolLeavesNothingInTheOther) {
  LeaseWaiters waiters;
  for (WaiterId id = 1; id <= 1000; ++id) {
    waiters.Add(MakeWaiter(id, {1, 2}, 1000));
    ASSERT_EQ(FrontId(waiters, 2), id);
    ASSERT_TRUE(waiters.Take(id).has_value());
  }
  EXPECT_EQ(waiters.waiting_in(1), 0u);
  EXPECT_EQ(waiters.waiting_in(2), 0u);
  EXPECT_TRUE(waiters.empty());
}

TEST(LeaseWaitersTest, APoolNamedTwiceIsServedOnce) {
  LeaseWaiters waiters;
  waiters.Add(MakeWaiter(1, {4, 4}, 1000));
  EXPECT_EQ(waiters.waiting_in(4), 1u);
  EXPECT_EQ(FrontId(waiters, 4), 1u);
  ASSERT_TRUE(waiters.Take(1).has_value());
  EXPECT_EQ(waiters.waiting_in(4), 0u);
  EXPECT_EQ(FrontId(waiters, 4), 0u);
}

TEST(LeaseWaitersTest, DeadlinesAreKeptInDeadlineOrder) {
  LeaseWaiters waiters;
  waiters.Add(MakeWaiter(1, {1}, 300));
  waiters.Add(MakeWaiter(2, {1}, 100));
  waiters.Add(MakeWaiter(3, {1}, 200));
  EXPECT_EQ(waiters.NextDeadline(), 100);
  EXPECT_EQ(waiters.Expired(99), std::vector<WaiterId>{});
  EXPECT_EQ(waiters.Expired(150), std::vector<WaiterId>{2});
  EXPECT_EQ(waiters.Expired(200), (std::vector<WaiterId>{2, 3}));
  ASSERT_TRUE(waiters.Take(2).has_value());
  EXPECT_EQ(waiters.NextDeadline(), 200);
  EXPECT_EQ(waiters.Expired(1000), (std::vector<WaiterId>{3, 1}));
  ASSERT_TRUE(waiters.Take(3).has_value());
  ASSERT_TRUE(waiters.Take(1).has_value());
  EXPECT_EQ(waiters.NextDeadline(), std::nullopt);
}

}  // namespace
}  // namespace fairq::server
