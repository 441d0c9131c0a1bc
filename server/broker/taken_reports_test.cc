#include "server/broker/taken_reports.h"

#include <gtest/gtest.h>

namespace fairq::server {
namespace {

using Kind = TakenReports::Kind;

TEST(TakenReportsTest, KnowsOnlyTheExactReport) {
  TakenReports taken(4);
  taken.Add(1, 100, Kind::kCompleted);
  EXPECT_TRUE(taken.Contains(1, 100, Kind::kCompleted));
  EXPECT_FALSE(taken.Contains(1, 101, Kind::kCompleted));  // another lease
  EXPECT_FALSE(taken.Contains(1, 100, Kind::kFailed));     // another outcome
  EXPECT_FALSE(taken.Contains(2, 100, Kind::kCompleted));
}

TEST(TakenReportsTest, ALaterAttemptReplacesTheJobsEarlierReport) {
  TakenReports taken(4);
  taken.Add(1, 100, Kind::kFailed);
  taken.Add(1, 200, Kind::kCompleted);
  EXPECT_FALSE(taken.Contains(1, 100, Kind::kFailed));
  EXPECT_TRUE(taken.Contains(1, 200, Kind::kCompleted));
  EXPECT_EQ(taken.size(), 1u);
}

TEST(TakenReportsTest, ForgetsTheOldestOnceFull) {
  TakenReports taken(3);
  for (uint64_t job = 1; job <= 5; ++job) taken.Add(job, job, Kind::kCompleted);
  EXPECT_FALSE(taken.Contains(1, 1, Kind::kCompleted));
  EXPECT_FALSE(taken.Contains(2, 2, Kind::kCompleted));
  for (uint64_t job = 3; job <= 5; ++job) {
    EXPECT_TRUE(taken.Contains(job, job, Kind::kCompleted)) << job;
  }
  EXPECT_EQ(taken.size(), 3u);
}

// The ring's older slot of a job must not take the job's later report with
// it when it is overwritten.
TEST(TakenReportsTest, OverwritingAnEarlierAttemptKeepsTheLaterOne) {
  TakenReports taken(3);
  taken.Add(1, 100, Kind::kFailed);     // slot 0
  taken.Add(2, 2, Kind::kCompleted);    // slot 1
  taken.Add(1, 200, Kind::kCompleted);  // slot 2
  taken.Add(3, 3, Kind::kCompleted);    // overwrites slot 0: job 1, token 100
  EXPECT_TRUE(taken.Contains(1, 200, Kind::kCompleted));
  EXPECT_EQ(taken.size(), 3u);
}

}  // namespace
}  // namespace fairq::server
