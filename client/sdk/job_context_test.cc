// JobContext on its own, as a user's handler test would drive it.
#include "fairq/client/job_context.h"

#include <chrono>
#include <future>

#include <gtest/gtest.h>

namespace fairq::client {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(JobContextTest, CarriesTheJob) {
  JobContext job(LeasedJobInfo{7, "t", "gpu", "data", 2, "last", {{"k", "v"}}});
  EXPECT_EQ(job.id(), 7u);
  EXPECT_EQ(job.tenant(), "t");
  EXPECT_EQ(job.pool(), "gpu");
  EXPECT_EQ(job.payload(), "data");
  EXPECT_EQ(job.attempts(), 2u);
  EXPECT_EQ(job.last_error(), "last");
  EXPECT_EQ(job.labels().at("k"), "v");
  EXPECT_FALSE(job.ShouldYield() || job.Cancelled() || job.Stopping());
}

TEST(JobContextTest, WaitForTimesOutWithoutASignal) {
  JobContext job(LeasedJobInfo{});
  EXPECT_FALSE(job.WaitFor(milliseconds(20)));
}

TEST(JobContextTest, WaitForWakesOnASignalFromAnotherThread) {
  JobContext job(LeasedJobInfo{});
  auto woken = std::async(std::launch::async,
                          [&] { return job.WaitFor(seconds(20)); });
  // Still waiting: the signal below then has to wake it (can only fail
  // if the wait returns without one).
  ASSERT_EQ(woken.wait_for(milliseconds(50)), std::future_status::timeout);
  job.SetShouldYield(true);
  ASSERT_EQ(woken.wait_for(seconds(10)), std::future_status::ready);
  EXPECT_TRUE(woken.get());
  EXPECT_TRUE(job.ShouldYield());
  job.SetShouldYield(false);  // a later heartbeat may clear it
  EXPECT_FALSE(job.ShouldYield());
}

TEST(JobContextTest, WaitForCancelIgnoresStopAndYield) {
  JobContext job(LeasedJobInfo{});
  job.NotifyStopping();
  job.SetShouldYield(true);
  EXPECT_TRUE(job.WaitFor(seconds(20)));  // at once: already signalled
  EXPECT_FALSE(job.WaitForCancel(milliseconds(20)));
  auto cancelled = std::async(std::launch::async,
                              [&] { return job.WaitForCancel(seconds(20)); });
  ASSERT_EQ(cancelled.wait_for(milliseconds(50)), std::future_status::timeout);
  job.Cancel();
  ASSERT_EQ(cancelled.wait_for(seconds(10)), std::future_status::ready);
  EXPECT_TRUE(cancelled.get());
}

// "Until cancelled": a timeout too long to add to the clock waits for the
// signal. (It overflowed into the past, and the wait returned at once.)
TEST(JobContextTest, TheLongestTimeoutWaitsForTheSignal) {
  JobContext job(LeasedJobInfo{});
  auto cancelled = std::async(std::launch::async, [&] {
    return job.WaitForCancel(milliseconds::max());
  });
  EXPECT_EQ(cancelled.wait_for(milliseconds(50)), std::future_status::timeout);
  job.Cancel();
  ASSERT_EQ(cancelled.wait_for(seconds(10)), std::future_status::ready);
  EXPECT_TRUE(cancelled.get());
}

}  // namespace
}  // namespace fairq::client
