// Which workers make a pool's live capacity, and for how long.
#include "server/broker/worker_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fairq::server {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kLiveness = 30'000;

TEST(WorkerRegistryTest, AWorkerCountsUntilTheWindowAfterItsWaitEnds) {
  WorkerRegistry workers(kLiveness);
  // A 30 s long poll at t = 0 that finds nothing: seen until t = 30 s.
  EXPECT_THAT(workers.Seen("w1", 4, {0}, 30'000), ElementsAre(0));
  EXPECT_EQ(workers.Capacity(0), 4u);
  EXPECT_EQ(workers.NextExpiry(), 60'000);
  // Its next poll, as the first one's wait ends, changes nothing.
  EXPECT_THAT(workers.Expire(30'000), IsEmpty());
  EXPECT_THAT(workers.Seen("w1", 4, {0}, 60'000), IsEmpty());
  EXPECT_THAT(workers.Expire(89'999), IsEmpty());
  EXPECT_THAT(workers.Expire(90'000), ElementsAre(0));
  EXPECT_EQ(workers.Capacity(0), 0u);
}

TEST(WorkerRegistryTest, AWorkerHoldingALeaseDoesNotExpire) {
  WorkerRegistry workers(kLiveness);
  workers.Seen("w1", 2, {0, 1}, 0);
  workers.LeaseStarted(7, "w1");
  workers.LeaseStarted(8, "w1");
  EXPECT_EQ(workers.NextExpiry(), std::nullopt);
  EXPECT_THAT(workers.Expire(100'000), IsEmpty());
  EXPECT_EQ(workers.Capacity(1), 2u);
  workers.LeaseEnded(7, 100'000);
  EXPECT_THAT(workers.Expire(200'000), IsEmpty());  // still holds job 8
  // The window starts again when its last lease ends.
  workers.LeaseEnded(8, 200'000);
  EXPECT_EQ(workers.leases(), 0u);
  EXPECT_EQ(workers.NextExpiry(), 230'000);
  EXPECT_THAT(workers.Expire(229'999), IsEmpty());
  EXPECT_THAT(workers.Expire(230'000), ElementsAre(0, 1));
  EXPECT_EQ(workers.Capacity(0), 0u);
}

// A lease adopted from a report names no worker; a lease restored after a
// restart names one not seen since, whose slots are unknown until it polls.
TEST(WorkerRegistryTest, LeasesOfUnknownWorkersAddNoSlots) {
  WorkerRegistry workers(kLiveness);
  workers.LeaseStarted(1, "");
  EXPECT_EQ(workers.leases(), 0u);
  workers.LeaseEnded(1, 0);  // not counted: nothing to end
  workers.LeaseStarted(2, "w9");
  EXPECT_EQ(workers.Capacity(0), 0u);
  EXPECT_THAT(workers.WorkersPerPool(1), ElementsAre(0));
  EXPECT_THAT(workers.Seen("w9", 3, {0}, 10'000), ElementsAre(0));
  EXPECT_EQ(workers.Capacity(0), 3u);
  EXPECT_THAT(workers.Expire(100'000), IsEmpty());  // holds job 2
  workers.LeaseEnded(2, 100'000);
  EXPECT_THAT(workers.Expire(130'000), ElementsAre(0));
}

}  // namespace
}  // namespace fairq::server
