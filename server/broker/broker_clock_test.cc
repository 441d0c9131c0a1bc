#include "server/broker/broker_clock.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "server/logging/captured_log.h"

namespace fairq::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

int64_t fake_wall_us = 0;
int64_t fake_steady_us = 0;
int64_t FakeWall() { return fake_wall_us; }
int64_t FakeSteady() { return fake_steady_us; }

class BrokerClockTest : public ::testing::Test {
 protected:
  BrokerClockTest() {
    fake_wall_us = 1'000'000'000;
    fake_steady_us = 0;
  }

  // Lets `elapsed_ms` pass on both clocks, then steps the wall clock by
  // `step_ms`, and reads broker time.
  int64_t After(int64_t elapsed_ms, int64_t step_ms = 0) {
    fake_steady_us += elapsed_ms * 1000;
    fake_wall_us += (elapsed_ms + step_ms) * 1000;
    return clock_.Now();
  }

  logging::CapturedLog log_;
  BrokerClock clock_{FakeWall, FakeSteady};
};

TEST_F(BrokerClockTest, FollowsTheWallClockForwardStepsIncluded) {
  EXPECT_EQ(After(0), 1'000'000);
  EXPECT_EQ(After(500), 1'000'500);
  EXPECT_EQ(After(100, /*step_ms=*/3'600'000), 4'600'600);
  EXPECT_EQ(After(1), 4'600'601);
  EXPECT_EQ(log_.text(), "");
}

// Timers keep their length through a step back: a lease of 30 s granted
// just before it still lapses 30 s later.
TEST_F(BrokerClockTest, RunsOnWithTheMonotonicClockWhenTheWallStepsBack) {
  const int64_t granted = After(0);
  EXPECT_EQ(After(10'000, /*step_ms=*/-3'600'000), granted + 10'000);
  EXPECT_EQ(After(20'000), granted + 30'000);
}

TEST_F(BrokerClockTest, FollowsTheWallClockAgainOnceItPassesBrokerTime) {
  After(0);
  const int64_t ahead = After(1'000, /*step_ms=*/-5'000);
  EXPECT_EQ(ahead, 1'001'000);
  EXPECT_EQ(After(1'000, /*step_ms=*/4'000), 1'002'000);  // still 1 s behind
  EXPECT_EQ(After(1'000, /*step_ms=*/3'000), 1'005'000);  // 2 s ahead: taken
  EXPECT_EQ(fake_wall_us / 1000, 1'005'000);
}

TEST_F(BrokerClockTest, LogsEachStepBackOnceAndTheCatchUp) {
  After(0);
  After(10, /*step_ms=*/-3'000);
  After(10, /*step_ms=*/-500);  // deeper while behind: not logged again
  EXPECT_THAT(log_.text(), HasSubstr("wall clock stepped back"));
  EXPECT_THAT(log_.text(), HasSubstr("step_ms=3000"));
  EXPECT_THAT(log_.text(), Not(HasSubstr("step_ms=3500")));
  EXPECT_THAT(log_.text(), Not(HasSubstr("caught up")));
  After(10, /*step_ms=*/4'000);
  EXPECT_THAT(log_.text(), HasSubstr("wall clock caught up"));
  After(10, /*step_ms=*/-100);
  EXPECT_THAT(log_.text(), HasSubstr("step_ms=100"));
}

TEST_F(BrokerClockTest, AStepBackUnderAMillisecondIsNotLogged) {
  After(0);
  fake_wall_us -= 999;
  EXPECT_EQ(clock_.Now(), 1'000'000);
  EXPECT_EQ(log_.text(), "");
}

// Random steps either way: broker time never runs backward, never lags the
// wall clock, and between two readings advances at least as far as the
// monotonic clock did.
TEST_F(BrokerClockTest, NeverRunsBackwardNorSlowerThanTheMonotonicClock) {
  std::mt19937 random(7);
  std::uniform_int_distribution<int64_t> elapsed(0, 2'000);
  std::uniform_int_distribution<int64_t> step(-50'000, 50'000);
  std::bernoulli_distribution steps(0.1);
  int64_t last = After(0);
  for (int i = 0; i < 10'000; ++i) {
    const int64_t ms = elapsed(random);
    const int64_t now = After(ms, steps(random) ? step(random) : 0);
    ASSERT_GE(now, last + ms - 1) << "reading " << i;  // -1: rounding to ms
    ASSERT_GE(now, fake_wall_us / 1000) << "reading " << i;
    last = now;
  }
}

TEST(NowUnixMsTest, IsTheWallClockInMilliseconds) {
  int64_t before = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  int64_t now = NowUnixMs();
  int64_t now_us = NowUnixUs();
  EXPECT_GE(now, before);
  EXPECT_LT(now - before, 60'000);
  EXPECT_GE(now_us / 1000, now);
  EXPECT_LT(now_us / 1000 - now, 60'000);
}

TEST(NowSteadyUsTest, NeverRunsBackward) {
  int64_t first = NowSteadyUs();
  EXPECT_GE(NowSteadyUs(), first);
}

}  // namespace
}  // namespace fairq::server
