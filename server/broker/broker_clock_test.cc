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
// How far the monotonic clock moves during each read of it: a thread
// preempted between the clock reads of one Now().
int64_t steady_per_read_us = 0;
int64_t FakeWall() { return fake_wall_us; }
int64_t FakeSteady() {
  fake_steady_us += steady_per_read_us;
  return fake_steady_us;
}

class BrokerClockTest : public ::testing::Test {
 protected:
  BrokerClockTest() {
    fake_wall_us = 1'000'000'000;
    fake_steady_us = 0;
    steady_per_read_us = 0;
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

// Timers keep running through a step back, at most 11% long: a lease of
// 30 s granted just before an hour's step lapses 33.3 s later.
TEST_F(BrokerClockTest, RunsOnAtNineTenthsOfItsPaceAfterAStepBack) {
  const int64_t granted = After(0);
  EXPECT_EQ(After(10'000, /*step_ms=*/-3'600'000), granted + 9'000);
  EXPECT_EQ(After(20'000), granted + 27'000);
  EXPECT_EQ(After(3'333), granted + 29'999);
  EXPECT_EQ(After(1), granted + 30'000);
}

// Ten times the step: the wall clock gains a tenth of each stretch.
TEST_F(BrokerClockTest, MeetsTheWallClockAgainAfterTenTimesTheStep) {
  After(0);
  EXPECT_EQ(After(0, /*step_ms=*/-5'000), 1'000'000);
  EXPECT_EQ(After(49'000), 1'044'100);  // the wall clock: 1'044'000
  EXPECT_EQ(After(2'000), 1'046'000);   // met
  EXPECT_EQ(fake_wall_us / 1000, 1'046'000);
  EXPECT_EQ(After(1'000), 1'047'000);
  EXPECT_THAT(log_.text(), HasSubstr("wall clock caught up"));
}

TEST_F(BrokerClockTest, LogsEachStepBackOnceAndTheCatchUp) {
  After(0);
  After(10, /*step_ms=*/-3'000);
  After(10, /*step_ms=*/-500);  // deeper while behind: not logged again
  EXPECT_THAT(log_.text(), HasSubstr("wall clock stepped back"));
  EXPECT_THAT(log_.text(), HasSubstr("step_ms=3000"));
  EXPECT_THAT(log_.text(), Not(HasSubstr("step_ms=3499")));
  EXPECT_THAT(log_.text(), Not(HasSubstr("caught up")));
  After(10, /*step_ms=*/10'000);
  EXPECT_THAT(log_.text(), HasSubstr("wall clock caught up"));
  After(10, /*step_ms=*/-100);
  EXPECT_THAT(log_.text(), HasSubstr("step_ms=100"));
}

TEST_F(BrokerClockTest, LogsAStepBackOfAMillisecondOrMore) {
  After(0);
  fake_wall_us -= 999;
  EXPECT_EQ(clock_.Now(), 1'000'000);
  EXPECT_EQ(log_.text(), "");
  fake_wall_us -= 1;
  EXPECT_EQ(clock_.Now(), 1'000'000);
  EXPECT_THAT(log_.text(), HasSubstr("step_ms=1"));
}

// A reading whose monotonic bounds are far apart places the wall clock too
// loosely to judge a step by: broker time carries on at full pace instead.
TEST_F(BrokerClockTest, APreemptedReadIsNotTakenForAStep) {
  After(0);
  steady_per_read_us = 300;
  // 1 s, and the 0.6 ms the two slow reads took.
  EXPECT_EQ(After(1'000, /*step_ms=*/-5'000), 1'001'000);
  EXPECT_EQ(After(1'000, /*step_ms=*/11'000), 1'002'001);
  EXPECT_EQ(log_.text(), "");
  steady_per_read_us = 0;
  EXPECT_EQ(After(1'000), 1'009'000);  // the wall clock, read well again
}

// Random steps either way: broker time never runs backward, never lags the
// wall clock, and between two readings advances at least nine tenths as
// far as the monotonic clock did.
TEST_F(BrokerClockTest, NeverRunsBackwardNorBelowNineTenthsOfThePace) {
  std::mt19937 random(7);
  std::uniform_int_distribution<int64_t> elapsed_us(0, 2'000'000);
  std::uniform_int_distribution<int64_t> step_us(-50'000'000, 50'000'000);
  std::bernoulli_distribution steps(0.1);
  int64_t last_us = clock_.Now() * 1000;
  for (int i = 0; i < 10'000; ++i) {
    const int64_t elapsed = elapsed_us(random);
    fake_steady_us += elapsed;
    fake_wall_us += elapsed + (steps(random) ? step_us(random) : 0);
    const int64_t now_us = clock_.Now() * 1000;
    ASSERT_GE(now_us, last_us) << "reading " << i;
    // 1 ms: each answer is rounded down to one.
    ASSERT_GE(now_us, last_us + elapsed * 9 / 10 - 1000) << "reading " << i;
    ASSERT_GE(now_us, fake_wall_us - 999) << "reading " << i;
    last_us = now_us;
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
