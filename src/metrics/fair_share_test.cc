#include "metrics/fair_share.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fairq::metrics {
namespace {

using ::testing::DoubleEq;
using ::testing::ElementsAre;

TEST(PoolSharesTest, WeightsAmongActiveTenantsOnly) {
  // Each tenant its own organisation, weighing as the tenant does.
  std::vector<double> orgs = {3, 1, 5};
  std::vector<double> shares =
      PoolShares({{3, 0, true}, {1, 1, true}, {5, 2, false}}, orgs);
  EXPECT_THAT(shares, ElementsAre(DoubleEq(0.75), DoubleEq(0.25), 0));
}

TEST(PoolSharesTest, OrganisationsShareFirstThenTheirTenants) {
  // Organisation 0 with ten equal tenants, organisation 1 with one: the
  // split accounts share the organisation's half.
  std::vector<ShareInput> tenants(10, ShareInput{1, 0, true});
  tenants.push_back({1, 1, true});
  std::vector<double> shares = PoolShares(tenants, {1, 1});
  for (int i = 0; i < 10; ++i) EXPECT_DOUBLE_EQ(shares[i], 0.05);
  EXPECT_DOUBLE_EQ(shares[10], 0.5);
}

TEST(PoolSharesTest, WeightsWithinAnOrganisationSplitItsShare) {
  std::vector<double> shares = PoolShares(
      {{3, 0, true}, {1, 0, true}, {1, 1, true}, {1, 1, false}}, {2, 2});
  EXPECT_THAT(shares,
              ElementsAre(DoubleEq(0.375), DoubleEq(0.125), DoubleEq(0.5), 0));
}

TEST(PoolSharesTest, NobodyActiveMeansNoShares) {
  EXPECT_THAT(PoolShares({{1, 0, false}}, {1}), ElementsAre(0));
}

TEST(StarvedTest, BelowItsWholeSlotShareWithReadyJobs) {
  // Half of 8 slots: starved below 4 leases, not at 4.
  EXPECT_TRUE(Starved(1, 3, 0.5, 8, std::nullopt, 0));
  EXPECT_FALSE(Starved(1, 4, 0.5, 8, std::nullopt, 0));
  // Nothing ready: never starved.
  EXPECT_FALSE(Starved(0, 0, 0.5, 8, std::nullopt, 0));
  // A third of 8 slots is 2 whole slots.
  EXPECT_FALSE(Starved(5, 2, 1.0 / 3, 8, std::nullopt, 0));
  EXPECT_TRUE(Starved(5, 1, 1.0 / 3, 8, std::nullopt, 0));
  // No live slots: nobody is starved (see fairq_worker_slots instead).
  EXPECT_FALSE(Starved(5, 0, 1, 0, std::nullopt, 0));
}

TEST(StarvedTest, CapLowersAndFloorRaisesTheTarget) {
  EXPECT_FALSE(Starved(1, 2, 0.5, 8, 2, 0));  // held at its cap of 2
  EXPECT_TRUE(Starved(1, 1, 0.5, 8, 2, 0));
  EXPECT_TRUE(Starved(1, 2, 0.25, 8, std::nullopt, 3));  // floor 3 > share 2
}

TEST(ShareWindowTest, IntegratesHeldSlotsExactly) {
  ShareWindow window(60'000);
  window.Started(1, 0, 1000);
  window.Started(1, 0, 2000);  // two leases from 2 s
  window.Ended(1, 0, 4000);
  window.Started(2, 0, 3000);
  window.Advance(5000);
  // Tenant 1: 1 slot 1-2 s, 2 slots 2-4 s, 1 slot 4-5 s = 6 slot-seconds.
  EXPECT_DOUBLE_EQ(window.Received(1, 0), 6);
  EXPECT_DOUBLE_EQ(window.Received(2, 0), 2);  // still running
  EXPECT_DOUBLE_EQ(window.Received(3, 0), 0);  // never seen
}

TEST(ShareWindowTest, TheWindowStartsAtTheNewestScrapeOldEnough) {
  ShareWindow window(60'000);
  window.Started(0, 0, 0);  // one slot from t = 0, never released
  window.Advance(10'000);   // the first window runs from the start
  EXPECT_DOUBLE_EQ(window.Received(0, 0), 10);
  window.Advance(40'000);  // then from the first scrape
  EXPECT_DOUBLE_EQ(window.Received(0, 0), 30);
  window.Advance(75'000);  // from 10 s: none is 60 s old yet
  EXPECT_DOUBLE_EQ(window.Received(0, 0), 65);
  window.Advance(100'000);  // from 40 s, the newest at least 60 s old
  EXPECT_DOUBLE_EQ(window.Received(0, 0), 60);
  window.Ended(0, 0, 100'000);
  window.Advance(200'000);  // from 100 s: nothing held since
  EXPECT_DOUBLE_EQ(window.Received(0, 0), 0);
  int seen = 0;
  window.ForEachReceived([&](uint32_t, uint32_t, double) { ++seen; });
  EXPECT_EQ(seen, 0);
}

TEST(ShareWindowTest, FrequentScrapesKeepTheWindowNearItsLength) {
  ShareWindow window(60'000);
  window.Started(0, 0, 0);  // one slot held throughout
  for (int64_t t = 1000; t <= 180'000; t += 1000) {
    window.Advance(t);
    if (t > 70'000) {
      // Samples 5 s apart: the window spans 60 to 66 s.
      EXPECT_GE(window.Received(0, 0), 60) << t;
      EXPECT_LE(window.Received(0, 0), 66) << t;
    }
  }
}

}  // namespace
}  // namespace fairq::metrics
