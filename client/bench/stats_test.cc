#include "bench/stats.h"

#include <gtest/gtest.h>

namespace fairq::bench {
namespace {

TEST(StatsTest, EmptyIsAllZero) {
  Summary s = Summarize({});
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.p99, 0);
  EXPECT_EQ(s.max, 0);
}

TEST(StatsTest, NearestRankOfOneToHundred) {
  std::vector<double> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(i);  // unsorted on purpose
  Summary s = Summarize(samples);
  EXPECT_EQ(s.count, 100u);
  EXPECT_EQ(s.p50, 50);
  EXPECT_EQ(s.p99, 99);
  EXPECT_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
}

TEST(StatsTest, PercentilesAreMeasuredValues) {
  Summary s = Summarize({1, 2, 1000});
  EXPECT_EQ(s.p50, 2);
  EXPECT_EQ(s.p99, 1000);  // rank ceil(2.97) = 3
  EXPECT_EQ(Percentile({7}, 1), 7);
}

}  // namespace
}  // namespace fairq::bench
