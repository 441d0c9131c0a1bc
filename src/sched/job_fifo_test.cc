#include "sched/job_fifo.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <vector>

namespace fairq::sched {
namespace {

QueuedJob Job(JobId id) { return {id, id, static_cast<double>(id), 1}; }

std::vector<JobId> Drain(JobFifo& fifo) {
  std::vector<JobId> ids;
  while (!fifo.empty()) {
    ids.push_back(fifo.front().id);
    fifo.pop_front();
  }
  return ids;
}

// Past the ring's largest size the jobs move to a deque, in order; once
// that drains the ring serves again.
TEST(JobFifoTest, KeepsOrderThroughTheRingTheDequeAndBack) {
  JobFifo fifo;
  std::vector<JobId> expected;
  for (JobId id = 1; id <= 3 * JobFifo::kRingJobs; ++id) {
    fifo.push_back(Job(id));
    expected.push_back(id);
  }
  EXPECT_EQ(fifo.size(), expected.size());
  EXPECT_EQ(Drain(fifo), expected);
  fifo.push_back(Job(100));
  fifo.push_back(Job(101));
  EXPECT_EQ(Drain(fifo), (std::vector<JobId>{100, 101}));
}

// Jobs pushed while others are popped: the ring wraps around.
TEST(JobFifoTest, EraseInAWrappedRingKeepsTheOthersInOrder) {
  JobFifo fifo;
  for (JobId id = 1; id <= 4; ++id) fifo.push_back(Job(id));
  fifo.pop_front();
  fifo.pop_front();
  for (JobId id = 5; id <= 6; ++id) fifo.push_back(Job(id));  // wraps
  EXPECT_TRUE(fifo.Erase(4));
  EXPECT_FALSE(fifo.Erase(4));
  EXPECT_FALSE(fifo.Erase(1));  // popped already
  EXPECT_EQ(Drain(fifo), (std::vector<JobId>{3, 5, 6}));
}

TEST(JobFifoTest, MovingLeavesTheSourceEmpty) {
  JobFifo fifo;
  fifo.push_back(Job(1));
  JobFifo moved(std::move(fifo));
  EXPECT_TRUE(fifo.empty());  // NOLINT(bugprone-use-after-move): the contract
  fifo.push_back(Job(2));
  EXPECT_EQ(Drain(fifo), (std::vector<JobId>{2}));
  EXPECT_EQ(Drain(moved), (std::vector<JobId>{1}));
}

// Random pushes, pops and erases against std::deque, across the switch
// between ring and deque in both directions.
TEST(JobFifoTest, BehavesAsADequeUnderRandomOperations) {
  std::mt19937 random(7);
  JobFifo fifo;
  std::deque<JobId> model;
  JobId next = 1;
  int drained_after_deque = 0;  // times the deque drained back to the ring
  bool was_long = false;
  for (int step = 0; step < 20'000; ++step) {
    int op = static_cast<int>(random() % 10);
    // Phases of 200 steps where pushes lead, then pops: the length runs
    // from empty to past kRingJobs and back.
    bool grow = (step / 200) % 2 == 0 ? op < 7 : op < 2;
    if (grow) {
      fifo.push_back(Job(next));
      model.push_back(next++);
    } else if (op == 9 && !model.empty()) {
      JobId id = model[random() % model.size()];
      ASSERT_TRUE(fifo.Erase(id));
      model.erase(std::find(model.begin(), model.end(), id));
    } else if (!model.empty()) {
      ASSERT_EQ(fifo.front().id, model.front());
      fifo.pop_front();
      model.pop_front();
    }
    ASSERT_EQ(fifo.size(), model.size()) << "step " << step;
    if (!model.empty()) {
      ASSERT_EQ(fifo.front().id, model.front());
    }
    was_long = was_long || model.size() > JobFifo::kRingJobs;
    if (was_long && model.empty()) {
      ++drained_after_deque;
      was_long = false;
    }
  }
  EXPECT_GE(drained_after_deque, 10);  // the test covered both directions
}

}  // namespace
}  // namespace fairq::sched
