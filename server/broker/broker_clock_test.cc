#include "server/broker/broker_clock.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include "server/logging/captured_log.h"

namespace fairq::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

int64_t fake_wall_ms = 0;
int64_t FakeWall() { return fake_wall_ms; }

class BrokerClockTest : public ::testing::Test {
 protected:
  int64_t At(int64_t wall_ms) {
    fake_wall_ms = wall_ms;
    return clock_.Now();
  }

  logging::CapturedLog log_;
  BrokerClock clock_{FakeWall};
};

TEST_F(BrokerClockTest, FollowsTheWallClockForwardStepsIncluded) {
  EXPECT_EQ(At(1'000), 1'000);
  EXPECT_EQ(At(1'500), 1'500);
  EXPECT_EQ(At(3'600'000), 3'600'000);
  EXPECT_EQ(log_.text(), "");
}

TEST_F(BrokerClockTest, HoldsStillUntilAWallClockSteppedBackCatchesUp) {
  At(5'000);
  EXPECT_EQ(At(2'000), 5'000);
  EXPECT_EQ(At(4'999), 5'000);
  EXPECT_EQ(At(5'000), 5'000);
  EXPECT_EQ(At(5'001), 5'001);
}

TEST_F(BrokerClockTest, LogsEachStepBackOnceAndTheCatchUp) {
  At(5'000);
  At(2'000);
  At(2'500);
  EXPECT_THAT(log_.text(), HasSubstr("wall clock stepped back"));
  EXPECT_THAT(log_.text(), HasSubstr("step_ms=3000"));
  EXPECT_THAT(log_.text(), Not(HasSubstr("step_ms=2500")));
  At(6'000);
  EXPECT_THAT(log_.text(), HasSubstr("wall clock caught up"));
  At(5'900);
  EXPECT_THAT(log_.text(), HasSubstr("step_ms=100"));
}

TEST(NowUnixMsTest, IsTheWallClockInMilliseconds) {
  int64_t before = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  int64_t now = NowUnixMs();
  EXPECT_GE(now, before);
  EXPECT_LT(now - before, 60'000);
}

}  // namespace
}  // namespace fairq::server
