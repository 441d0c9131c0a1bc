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
  EXPECT_FALSE(taken.Contains(1, 100, Kind::kReleased));   // another outcome
  EXPECT_FALSE(taken.Contains(5, 100, Kind::kCompleted));  // same slot
  EXPECT_FALSE(taken.Contains(2, 0, Kind::kCompleted));    // an empty slot
  // Job 0, token 0: never taken, but a client may send it.
  EXPECT_FALSE(taken.Contains(0, 0, Kind::kCompleted));
  EXPECT_FALSE(taken.Contains(0, 0, Kind::kFailed));
}

// The kind sits in the tag beside the job id: in a shared slot, no kind of
// one job reads as another kind of its neighbour (two bits, not one).
TEST(TakenReportsTest, KindsOfNeighbouringJobsStayApart) {
  TakenReports taken(1);  // every job in one slot
  taken.Add(2, 100, Kind::kReleased);
  EXPECT_TRUE(taken.Contains(2, 100, Kind::kReleased));
  EXPECT_FALSE(taken.Contains(3, 100, Kind::kCompleted));
  taken.Add(2, 100, Kind::kFailed);
  EXPECT_FALSE(taken.Contains(3, 100, Kind::kCompleted));
  EXPECT_FALSE(taken.Contains(2, 100, Kind::kReleased));
}

// A report may name any id. One past 2^62 would shift onto a real job's
// tag; no job has such an id, so it is never a repeat.
TEST(TakenReportsTest, AnIdPastTheTagsRangeIsNeverARepeat) {
  TakenReports taken(4);
  taken.Add(1, 100, Kind::kCompleted);
  const uint64_t alias = 1 + (uint64_t{1} << 62);
  EXPECT_FALSE(taken.Contains(alias, 100, Kind::kCompleted));
  EXPECT_FALSE(taken.Contains(1 + (uint64_t{3} << 62), 100, Kind::kCompleted));
  EXPECT_TRUE(taken.Contains(1, 100, Kind::kCompleted));
}

TEST(TakenReportsTest, RoundsItsSizeUpToAPowerOfTwo) {
  TakenReports taken(3);  // 4 slots
  taken.Add(1, 1, Kind::kCompleted);
  taken.Add(4, 4, Kind::kCompleted);
  EXPECT_TRUE(taken.Contains(1, 1, Kind::kCompleted));
  taken.Add(5, 5, Kind::kCompleted);  // slot 1 again
  EXPECT_FALSE(taken.Contains(1, 1, Kind::kCompleted));
}

TEST(TakenReportsTest, ALaterAttemptReplacesTheJobsEarlierReport) {
  TakenReports taken(4);
  taken.Add(1, 100, Kind::kFailed);
  taken.Add(1, 200, Kind::kCompleted);
  EXPECT_FALSE(taken.Contains(1, 100, Kind::kFailed));
  EXPECT_TRUE(taken.Contains(1, 200, Kind::kCompleted));
}

// Jobs finishing in id order: the last `slots` reports are remembered.
TEST(TakenReportsTest, RemembersTheLastReportsOfJobsFinishingInOrder) {
  TakenReports taken(4);
  for (uint64_t job = 1; job <= 10; ++job) {
    taken.Add(job, job, Kind::kCompleted);
  }
  for (uint64_t job = 1; job <= 6; ++job) {
    EXPECT_FALSE(taken.Contains(job, job, Kind::kCompleted)) << job;
  }
  for (uint64_t job = 7; job <= 10; ++job) {
    EXPECT_TRUE(taken.Contains(job, job, Kind::kCompleted)) << job;
  }
}

}  // namespace
}  // namespace fairq::server
