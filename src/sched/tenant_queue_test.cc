#include "sched/tenant_queue.h"

#include <gtest/gtest.h>

#include <vector>

namespace fairq::sched {
namespace {

std::vector<JobId> Drain(TenantQueue& queue) {
  std::vector<JobId> order;
  int32_t priority = 0;
  while (!queue.empty()) order.push_back(queue.PopFront(&priority).id);
  return order;
}

TEST(TenantQueueTest, HigherPriorityFirstThenArrival) {
  TenantQueue queue;
  queue.Push(0, {1, 1, 1.0, 1});
  queue.Push(5, {2, 2, 2.0, 1});
  queue.Push(0, {3, 3, 3.0, 1});
  queue.Push(-3, {4, 4, 4.0, 1});
  queue.Push(5, {5, 5, 5.0, 1});
  EXPECT_EQ(queue.size(), 5u);
  EXPECT_EQ(Drain(queue), (std::vector<JobId>{2, 5, 1, 3, 4}));
}

TEST(TenantQueueTest, PopReportsPriority) {
  TenantQueue queue;
  queue.Push(7, {1, 1, 0, 1});
  int32_t priority = 0;
  EXPECT_EQ(queue.PopFront(&priority).id, 1u);
  EXPECT_EQ(priority, 7);
  EXPECT_TRUE(queue.empty());
}

TEST(TenantQueueTest, RemoveFindsAnyLevel) {
  TenantQueue queue;
  queue.Push(0, {1, 1, 0, 1});
  queue.Push(1, {2, 2, 0, 1});
  queue.Push(0, {3, 3, 0, 1});
  EXPECT_TRUE(queue.Remove(2));
  EXPECT_FALSE(queue.Remove(2));
  EXPECT_FALSE(queue.Remove(99));
  EXPECT_EQ(queue.size(), 2u);
  EXPECT_EQ(Drain(queue), (std::vector<JobId>{1, 3}));
}

TEST(TenantQueueTest, OldestReadyAtLooksAcrossPriorities) {
  TenantQueue queue;
  EXPECT_FALSE(queue.OldestReadyAt().has_value());
  queue.Push(9, {1, 1, 20.0, 1});
  queue.Push(0, {2, 2, 5.0, 1});  // older, lower priority
  EXPECT_EQ(queue.OldestReadyAt(), 5.0);
  int32_t priority = 0;
  queue.PopFront(&priority);
  EXPECT_EQ(queue.OldestReadyAt(), 5.0);
}

}  // namespace
}  // namespace fairq::sched
