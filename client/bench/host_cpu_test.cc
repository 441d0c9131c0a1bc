#include "bench/host_cpu.h"

#include <gtest/gtest.h>

namespace fairq::bench {
namespace {

TEST(HostCpuTest, ParsesTheMachineLine) {
  auto times =
      ParseCpuLine("cpu  3013063 1554 472470 2151924 58809 0 30270 59362 0 0");
  ASSERT_TRUE(times.has_value());
  EXPECT_EQ(times->busy, 3013063u + 1554 + 472470 + 0 + 30270);
  EXPECT_EQ(times->steal, 59362u);
  EXPECT_EQ(times->total, times->busy + 59362 + 2151924 + 58809);
}

TEST(HostCpuTest, RefusesOtherLines) {
  EXPECT_FALSE(ParseCpuLine("cpu0 1 2 3 4 5 6 7 8").has_value());
  EXPECT_FALSE(ParseCpuLine("cpu  1 2 3 4 5 6 7").has_value());  // no steal
  EXPECT_FALSE(ParseCpuLine("cpu  1 2 x 4 5 6 7 8").has_value());
  EXPECT_FALSE(ParseCpuLine("").has_value());
}

TEST(HostCpuTest, SharesAreOfTheTicksBetweenTwoReads) {
  CpuTimes before{100, 10, 1000};
  CpuTimes after{150, 35, 1200};  // 200 ticks: 50 busy, 25 stolen
  auto share = ShareBetween(before, after);
  ASSERT_TRUE(share.has_value());
  EXPECT_DOUBLE_EQ(share->busy_pct, 25);
  EXPECT_DOUBLE_EQ(share->steal_pct, 12.5);
  EXPECT_FALSE(ShareBetween(after, after).has_value());
}

// iowait can go back, so the total can grow less than busy did.
TEST(HostCpuTest, SharesStayPercentages) {
  auto share = ShareBetween({100, 10, 1000}, {400, 5, 1100});
  ASSERT_TRUE(share.has_value());
  EXPECT_DOUBLE_EQ(share->busy_pct, 100);
  EXPECT_DOUBLE_EQ(share->steal_pct, 0);
}

TEST(HostCpuTest, QuietIsUnderAQuarterPercentStolen) {
  CpuTimes before{0, 0, 0};
  EXPECT_TRUE(QuietBetween(before, {100, 0, 200}));
  EXPECT_TRUE(QuietBetween(before, {100, 2, 1000}));  // 0.2%
  EXPECT_FALSE(QuietBetween(before, {100, 1, 200}));  // 0.5%
  EXPECT_FALSE(QuietBetween(before, before));         // no tick: unknown
}

#ifdef __linux__
TEST(HostCpuTest, ReadsThisMachine) {
  auto times = ReadHostCpu();
  ASSERT_TRUE(times.has_value());
  EXPECT_GT(times->total, 0u);
}
#endif

}  // namespace
}  // namespace fairq::bench
