#include "bench/cpu_readings.h"

#include <gtest/gtest.h>

namespace fairq::bench {
namespace {

using Clock = CpuReadings::Clock;
using std::chrono::seconds;

// Readings at t0, t0 + 1 s, t0 + 2 s, t0 + 3 s: the middle second lost 1
// tick of 200 (0.5%) to the hypervisor, the others none.
class CpuReadingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    readings_.Add(t0_, CpuTimes{0, 0, 0});
    readings_.Add(t0_ + seconds(1), CpuTimes{100, 0, 200});
    readings_.Add(t0_ + seconds(2), CpuTimes{200, 1, 400});
    readings_.Add(t0_ + seconds(3), CpuTimes{300, 1, 600});
  }
  Clock::time_point At(double s) const {
    return t0_ + std::chrono::duration_cast<Clock::duration>(
                     std::chrono::duration<double>(s));
  }

  Clock::time_point t0_ = Clock::now();
  CpuReadings readings_;
};

TEST_F(CpuReadingsTest, CountsTheQuietStretches) {
  EXPECT_EQ(readings_.stretches(), 3u);
  EXPECT_EQ(readings_.quiet_stretches(), 2u);
}

TEST_F(CpuReadingsTest, ASpanIsQuietOnlyIfEveryStretchItTouchesIs) {
  EXPECT_TRUE(readings_.Quiet(At(0.1), At(0.9)));
  EXPECT_TRUE(readings_.Quiet(At(2.5), At(3.0)));
  EXPECT_FALSE(readings_.Quiet(At(1.2), At(1.3)));  // the stolen second
  EXPECT_FALSE(readings_.Quiet(At(0.9), At(1.1)));  // ends in it
  EXPECT_FALSE(readings_.Quiet(At(0.5), At(2.5)));  // spans it
}

TEST_F(CpuReadingsTest, OutsideTheReadingsNothingIsQuiet) {
  EXPECT_FALSE(readings_.Quiet(At(-0.5), At(0.5)));
  EXPECT_FALSE(readings_.Quiet(At(2.5), At(3.5)));
  EXPECT_FALSE(readings_.Quiet(At(0.6), At(0.4)));  // ends before it starts
}

TEST(CpuReadingsShortTest, AStretchUnder900MsIsNotQuiet) {
  CpuReadings readings;
  Clock::time_point t0 = Clock::now();
  readings.Add(t0, CpuTimes{0, 0, 0});
  readings.Add(t0 + std::chrono::milliseconds(500), CpuTimes{50, 0, 100});
  EXPECT_EQ(readings.quiet_stretches(), 0u);
  EXPECT_FALSE(readings.Quiet(t0, t0 + std::chrono::milliseconds(400)));
}

TEST(CpuReadingsMissingTest, AMissingReadingIsNotQuiet) {
  CpuReadings readings;
  Clock::time_point t0 = Clock::now();
  readings.Add(t0, CpuTimes{0, 0, 0});
  readings.Add(t0 + seconds(1), std::nullopt);
  EXPECT_EQ(readings.quiet_stretches(), 0u);
  EXPECT_FALSE(readings.Quiet(t0, t0 + seconds(1)));
}

}  // namespace
}  // namespace fairq::bench
