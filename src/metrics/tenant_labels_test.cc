#include "metrics/tenant_labels.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fairq::metrics {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kIdleMs = 600'000;
constexpr uint32_t kOther = TenantLabels::kOther;
using Jobs = TenantLabels::Jobs;
constexpr Jobs kNone = Jobs::kNone;
constexpr Jobs kDeadOnly = Jobs::kDeadOnly;
constexpr Jobs kLive = Jobs::kLive;

TEST(TenantLabelsTest, FirstComeTakeSlotsUntilTheCapThenOther) {
  TenantLabels labels(2, kIdleMs);
  EXPECT_EQ(labels.Touch(7), 1u);
  EXPECT_EQ(labels.Touch(3), 2u);
  EXPECT_EQ(labels.Touch(5), kOther);
  EXPECT_EQ(labels.Touch(7), 1u);  // keeps its slot
  EXPECT_EQ(labels.labeled(), 2u);
  EXPECT_EQ(labels.holder(1), 7u);
  EXPECT_EQ(labels.holder(2), 3u);
  EXPECT_EQ(labels.SlotOf(5), kOther);
  EXPECT_EQ(labels.SlotOf(99), kOther);  // never seen
}

TEST(TenantLabelsTest, ZeroCapPutsEveryoneInOther) {
  TenantLabels labels(0, kIdleMs);
  EXPECT_EQ(labels.Touch(0), kOther);
  EXPECT_EQ(labels.Touch(1), kOther);
  EXPECT_THAT(labels.Rebalance({kLive, kLive}, 1000), IsEmpty());
  EXPECT_EQ(labels.labeled(), 0u);
}

TEST(TenantLabelsTest, BusyTenantsWithoutEventsTakeFreeSlotsAtRebalance) {
  TenantLabels labels(1, kIdleMs);
  // Jobs restored at startup: busy, but no event has touched them yet.
  EXPECT_THAT(labels.Rebalance({kNone, kLive, kLive}, 1000), IsEmpty());
  EXPECT_EQ(labels.SlotOf(1), 1u);
  EXPECT_EQ(labels.SlotOf(2), kOther);
}

TEST(TenantLabelsTest, TenantsWithOnlyDeadJobsTakeSlotsLeftFree) {
  TenantLabels labels(2, kIdleMs);
  // After a restart: 0 and 2 have only dead jobs, 1 has jobs queued. The
  // busy tenant chooses first; the slot left goes to the lowest id.
  EXPECT_THAT(labels.Rebalance({kDeadOnly, kLive, kDeadOnly}, 1000), IsEmpty());
  EXPECT_EQ(labels.SlotOf(1), 1u);
  EXPECT_EQ(labels.SlotOf(0), 2u);
  EXPECT_EQ(labels.SlotOf(2), kOther);
  EXPECT_EQ(labels.labeled(), 2u);
}

TEST(TenantLabelsTest, DeadJobsDoNotKeepATenantFromEviction) {
  TenantLabels labels(1, kIdleMs);
  EXPECT_THAT(labels.Rebalance({kDeadOnly}, 0), IsEmpty());
  EXPECT_EQ(labels.SlotOf(0), 1u);
  labels.Touch(1);  // _other
  EXPECT_THAT(labels.Rebalance({kDeadOnly, kLive}, kIdleMs - 1), IsEmpty());
  EXPECT_EQ(labels.SlotOf(0), 1u);
  labels.Touch(1);
  EXPECT_THAT(labels.Rebalance({kDeadOnly, kLive}, kIdleMs), ElementsAre(1u));
  EXPECT_EQ(labels.SlotOf(1), 1u);
  EXPECT_EQ(labels.SlotOf(0), kOther);
  // Without a free slot it stays in _other, and takes none by eviction.
  EXPECT_THAT(labels.Rebalance({kDeadOnly, kNone}, 10 * kIdleMs), IsEmpty());
  EXPECT_EQ(labels.SlotOf(0), kOther);
  EXPECT_EQ(labels.SlotOf(1), 1u);
}

TEST(TenantLabelsTest, ATenantKeptInOtherTakesNoSlotForItsDeadJobs) {
  TenantLabels labels(1, kIdleMs);
  labels.KeepInOther(0);
  EXPECT_THAT(labels.Rebalance({kDeadOnly}, 0), IsEmpty());
  EXPECT_EQ(labels.SlotOf(0), kOther);
  EXPECT_EQ(labels.labeled(), 0u);
}

TEST(TenantLabelsTest, IdleTenantKeepsItsSlotWhileNobodyWaits) {
  TenantLabels labels(1, kIdleMs);
  labels.Touch(0);
  EXPECT_THAT(labels.Rebalance({}, 0), IsEmpty());
  EXPECT_THAT(labels.Rebalance({}, 10 * kIdleMs), IsEmpty());
  EXPECT_EQ(labels.SlotOf(0), 1u);
}

TEST(TenantLabelsTest, IdleTenantMakesRoomForAnActiveOtherTenant) {
  TenantLabels labels(1, kIdleMs);
  labels.Touch(0);
  labels.Touch(1);  // _other
  EXPECT_THAT(labels.Rebalance({}, 0), IsEmpty());
  // Tenant 1 keeps busy; tenant 0 is idle, but not yet for kIdleMs.
  labels.Touch(1);
  EXPECT_THAT(labels.Rebalance({}, kIdleMs - 1), IsEmpty());
  EXPECT_EQ(labels.SlotOf(1), kOther);
  labels.Touch(1);
  EXPECT_THAT(labels.Rebalance({}, kIdleMs), ElementsAre(1u));
  EXPECT_EQ(labels.SlotOf(1), 1u);
  EXPECT_EQ(labels.holder(1), 1u);
  EXPECT_EQ(labels.SlotOf(0), kOther);
  // The evicted tenant starts over: no slot free now, so _other.
  EXPECT_EQ(labels.Touch(0), kOther);
}

TEST(TenantLabelsTest, QueuedOrLeasedJobsKeepATenantFromEviction) {
  TenantLabels labels(1, kIdleMs);
  labels.Touch(0);
  labels.Touch(1);
  EXPECT_THAT(labels.Rebalance({kLive, kNone}, 0), IsEmpty());
  labels.Touch(1);
  // No event from tenant 0 for long, but it has jobs waiting.
  EXPECT_THAT(labels.Rebalance({kLive, kNone}, 5 * kIdleMs), IsEmpty());
  EXPECT_EQ(labels.SlotOf(0), 1u);
}

TEST(TenantLabelsTest, TheBusiestWaitingTenantsArePromotedFirst) {
  TenantLabels labels(2, kIdleMs);
  labels.Touch(0);
  labels.Touch(1);
  EXPECT_THAT(labels.Rebalance({}, 0), IsEmpty());
  // 0 and 1 go idle; 2, 3 and 4 wait in _other with 1, 5 and 3 events.
  labels.Touch(2);
  for (int i = 0; i < 5; ++i) labels.Touch(3);
  for (int i = 0; i < 3; ++i) labels.Touch(4);
  std::vector<uint32_t> freed = labels.Rebalance({}, kIdleMs);
  EXPECT_EQ(freed.size(), 2u);
  EXPECT_NE(labels.SlotOf(3), kOther);
  EXPECT_NE(labels.SlotOf(4), kOther);
  EXPECT_EQ(labels.SlotOf(2), kOther);
  EXPECT_EQ(labels.labeled(), 2u);
}

TEST(TenantLabelsTest, LongestIdleIsEvictedFirst) {
  TenantLabels labels(2, kIdleMs);
  labels.Touch(0);
  labels.Touch(1);
  EXPECT_THAT(labels.Rebalance({}, 0), IsEmpty());
  labels.Touch(1);  // tenant 1 was active later
  EXPECT_THAT(labels.Rebalance({}, 1000), IsEmpty());
  labels.Touch(2);  // waits in _other
  EXPECT_THAT(labels.Rebalance({}, 1000 + kIdleMs), ElementsAre(1u));
  EXPECT_EQ(labels.SlotOf(0), kOther);
  EXPECT_EQ(labels.SlotOf(1), 2u);
  EXPECT_EQ(labels.SlotOf(2), 1u);
}

TEST(TenantLabelsTest, ATenantKeptInOtherNeverGetsASlot) {
  TenantLabels labels(2, kIdleMs);
  labels.Touch(0);
  labels.KeepInOther(0);  // gives its slot back
  EXPECT_EQ(labels.labeled(), 0u);
  EXPECT_EQ(labels.Touch(0), kOther);
  EXPECT_THAT(labels.Rebalance({kLive}, kIdleMs), IsEmpty());
  EXPECT_EQ(labels.SlotOf(0), kOther);
  EXPECT_NE(labels.Touch(1), kOther);
  EXPECT_NE(labels.Touch(2), kOther);  // both slots are free for others
}

}  // namespace
}  // namespace fairq::metrics
