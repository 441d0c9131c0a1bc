// The wait window: nearest-rank percentiles over the last kSize waits.
#include "server/broker/wait_window.h"

#include <gtest/gtest.h>

namespace fairq::server {
namespace {

TEST(WaitWindowTest, PercentilesOfTheWaitsSoFar) {
  WaitWindow window;
  EXPECT_EQ(window.Percentile(0.99), 0);
  for (int64_t ms = 1; ms <= 100; ++ms) window.Add(ms);
  EXPECT_EQ(window.Percentile(0.5), 50);
  EXPECT_EQ(window.Percentile(0.99), 99);
  EXPECT_EQ(window.Percentile(1), 100);
  window.Add(-5);  // a clock step back counts as no wait
  EXPECT_EQ(window.Percentile(0.005), 0);  // rank 1 of 101
}

// Past kSize, each wait replaces the oldest: 1,024 waits of 1000 ms push out
// every earlier wait of 1 ms, and one more of 1 ms replaces one of them.
TEST(WaitWindowTest, KeepsOnlyTheLastWaits) {
  WaitWindow window;
  for (size_t i = 0; i < WaitWindow::kSize; ++i) window.Add(1);
  for (size_t i = 0; i < WaitWindow::kSize; ++i) window.Add(1000);
  EXPECT_EQ(window.Percentile(0.0005), 1000);  // rank 1 of 1,024
  window.Add(1);
  EXPECT_EQ(window.Percentile(0.0005), 1);
  EXPECT_EQ(window.Percentile(0.001), 1000);  // rank 2
}

}  // namespace
}  // namespace fairq::server
