#include "sched/deficit_ring.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace fairq::sched {
namespace {

// Members with weights; grant = weight, ceiling = 4 * weight.
struct Members {
  std::vector<RingLinks> links;
  std::vector<double> deficit;
  std::vector<double> weight;

  explicit Members(std::vector<double> weights)
      : links(weights.size()), deficit(weights.size()), weight(weights) {}
  RingLinks& Links(uint32_t id) { return links[id]; }
  double& Deficit(uint32_t id) { return deficit[id]; }
  double Grant(uint32_t id) { return weight[id]; }
  double Ceiling(uint32_t id) { return 4 * weight[id]; }
};

TEST(DeficitRingTest, RoundRobinVisitsInJoinOrder) {
  Members members({1, 1, 1});
  DeficitRing ring;
  for (uint32_t id : {0u, 1u, 2u}) ring.Insert(members, id);
  std::vector<uint32_t> order;
  for (int i = 0; i < 6; ++i) order.push_back(ring.NextInTurn(members));
  EXPECT_EQ(order, (std::vector<uint32_t>{0, 1, 2, 0, 1, 2}));
}

TEST(DeficitRingTest, NewMemberJoinsAtBackOfRound) {
  Members members({1, 1, 1});
  DeficitRing ring;
  ring.Insert(members, 0);
  ring.Insert(members, 1);
  EXPECT_EQ(ring.NextInTurn(members), 0u);  // cursor now at 1
  ring.Insert(members, 2);                  // after 0, before 1's next visit
  std::vector<uint32_t> order;
  for (int i = 0; i < 3; ++i) order.push_back(ring.NextInTurn(members));
  EXPECT_EQ(order, (std::vector<uint32_t>{1, 0, 2}));
}

TEST(DeficitRingTest, EraseOfCursorPassesTheTurn) {
  Members members({1, 1, 1});
  DeficitRing ring;
  for (uint32_t id : {0u, 1u, 2u}) ring.Insert(members, id);
  ring.Erase(members, 0);
  EXPECT_FALSE(members.links[0].linked());
  EXPECT_EQ(ring.size(), 2u);
  EXPECT_EQ(ring.NextInTurn(members), 1u);
  ring.Erase(members, 1);
  ring.Erase(members, 2);
  EXPECT_TRUE(ring.empty());
}

// Serves `n` decisions charging `cost(id)` each, returns worker-seconds.
template <class Cost>
std::map<uint32_t, double> Serve(DeficitRing& ring, Members& members, int n,
                                 Cost cost) {
  std::map<uint32_t, double> served;
  for (int i = 0; i < n; ++i) {
    uint32_t id = ring.NextWithCredit(members);
    members.deficit[id] -= cost(id);
    served[id] += cost(id);
  }
  return served;
}

TEST(DeficitRingTest, WeightsSplitWorkSecondsInProportion) {
  Members members({3, 1});
  DeficitRing ring;
  ring.Insert(members, 0);
  ring.Insert(members, 1);
  auto served = Serve(ring, members, 4000, [](uint32_t) { return 1.0; });
  EXPECT_NEAR(served[0] / (served[0] + served[1]), 0.75, 0.001);
}

TEST(DeficitRingTest, ChargesWorkerSecondsNotJobCount) {
  Members members({1, 1});
  DeficitRing ring;
  ring.Insert(members, 0);
  ring.Insert(members, 1);
  // Member 0's jobs cost 60, member 1's cost 1: equal worker-seconds.
  auto served = Serve(ring, members, 6100,
                      [](uint32_t id) { return id == 0 ? 60.0 : 1.0; });
  EXPECT_NEAR(served[0] / (served[0] + served[1]), 0.5, 0.01);
}

TEST(DeficitRingTest, LoneMemberInDebtIsServedAtOnce) {
  Members members({1});
  DeficitRing ring;
  ring.Insert(members, 0);
  members.deficit[0] = -1e6;  // a huge debt must not spin the ring
  EXPECT_EQ(ring.NextWithCredit(members), 0u);
  EXPECT_GT(members.deficit[0], 0);
  EXPECT_LE(members.deficit[0], 1.0);
}

TEST(DeficitRingTest, SkippingEmptyRoundsKeepsExactOrder) {
  Members members({1, 1, 1});
  DeficitRing ring;
  for (uint32_t id : {0u, 1u, 2u}) ring.Insert(members, id);
  members.deficit = {-10.5, -3.5, -3.5};
  // After 4 grants each, 1 and 2 are positive and 0 is not; 1 comes first.
  EXPECT_EQ(ring.NextWithCredit(members), 1u);
  EXPECT_DOUBLE_EQ(members.deficit[1], 0.5);
  EXPECT_DOUBLE_EQ(members.deficit[0], -6.5);
}

TEST(DeficitRingTest, CreditIsCappedAtTheCeiling) {
  Members members({1});
  DeficitRing ring;
  ring.Insert(members, 0);
  members.deficit[0] = 100;
  EXPECT_EQ(ring.NextWithCredit(members), 0u);
  EXPECT_DOUBLE_EQ(members.deficit[0], 4.0);
}

}  // namespace
}  // namespace fairq::sched
