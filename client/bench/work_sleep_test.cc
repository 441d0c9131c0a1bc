#include "bench/work_sleep.h"

#include <gtest/gtest.h>

namespace fairq::bench {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

TEST(WorkSleepTest, LeadSettlesOnTheUsualLateness) {
  WorkSleep sleep(milliseconds(10), true);
  for (int i = 0; i < 200; ++i) sleep.Learn(microseconds(100));
  EXPECT_GE(sleep.lead(), microseconds(99));
  EXPECT_LE(sleep.lead(), microseconds(100));
}

TEST(WorkSleepTest, OneStalledWakeUpMovesTheLeadBySixteenth) {
  WorkSleep sleep(milliseconds(10), true);
  for (int i = 0; i < 200; ++i) sleep.Learn(microseconds(100));
  auto before = sleep.lead();
  sleep.Learn(milliseconds(3));
  // (3,000 - ~100 us) / 16
  EXPECT_GE(sleep.lead() - before, microseconds(181));
  EXPECT_LE(sleep.lead() - before, microseconds(182));
}

TEST(WorkSleepTest, LeadNeverExceedsHalfTheWork) {
  WorkSleep sleep(milliseconds(2), true);
  for (int i = 0; i < 200; ++i) sleep.Learn(milliseconds(50));
  EXPECT_EQ(sleep.lead(), milliseconds(1));
}

TEST(WorkSleepTest, CorrectedSleepWakesTheLeadEarly) {
  WorkSleep sleep(milliseconds(20), true);
  for (int i = 0; i < 200; ++i) sleep.Learn(milliseconds(5));
  auto start = WorkSleep::Clock::now();
  // 20 ms of work, 5 ms early.
  EXPECT_GE(sleep.WakeTime(start) - start, milliseconds(15));
  EXPECT_LE(sleep.WakeTime(start) - start, milliseconds(15) + microseconds(1));
}

TEST(WorkSleepTest, PlainSleepRunsTheWholeWorkAndLearnsNothing) {
  WorkSleep sleep(milliseconds(1), false);
  for (int i = 0; i < 200; ++i) sleep.Learn(microseconds(300));
  auto start = WorkSleep::Clock::now();
  EXPECT_EQ(sleep.WakeTime(start), start + milliseconds(1));
  auto lead = sleep.lead();
  sleep.Until(start);
  EXPECT_EQ(sleep.lead(), lead);
}

TEST(WorkSleepTest, CorrectedSleepLearnsItsLateness) {
  WorkSleep sleep(milliseconds(1), true);
  // Every wake-up is at least a little late, so the first one teaches.
  sleep.Until(WorkSleep::Clock::now());
  EXPECT_GT(sleep.lead().count(), 0);
}

}  // namespace
}  // namespace fairq::bench
