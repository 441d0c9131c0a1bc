#include "server/broker/timer_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <unordered_set>
#include <vector>

namespace fairq::server {
namespace {

using Timer = TimerQueue::Timer;

TEST(TimerQueueTest, PopsTheEarliestFirst) {
  TimerQueue timers([](const Timer&) { return true; });
  for (int64_t at : {30, 10, 20, 10, 40}) {
    timers.Push({at, static_cast<uint64_t>(at), 0});
  }
  std::vector<int64_t> popped;
  while (!timers.empty()) {
    popped.push_back(timers.top().at_ms);
    timers.pop();
  }
  EXPECT_EQ(popped, (std::vector<int64_t>{10, 10, 20, 30, 40}));
}

// Jobs complete soon after their lease, long before their timers come due:
// the queue keeps about twice the live entries, and every live one still
// comes out, in order.
TEST(TimerQueueTest, StaleEntriesArePurgedAndLiveOnesKept) {
  std::unordered_set<uint64_t> live;
  TimerQueue timers([&](const Timer& t) { return live.contains(t.job_id); });
  size_t most = 0;
  for (uint64_t id = 1; id <= 100'000; ++id) {
    live.insert(id);
    timers.Push({static_cast<int64_t>(id), id, 0});
    if (id % 1000 != 0) live.erase(id);  // one in a thousand stays live
    most = std::max(most, timers.size());
  }
  EXPECT_EQ(live.size(), 100u);
  EXPECT_LE(most, 2 * live.size() + TimerQueue::kSlack);
  std::vector<uint64_t> due;
  while (!timers.empty()) {
    if (live.contains(timers.top().job_id)) due.push_back(timers.top().job_id);
    timers.pop();
  }
  ASSERT_EQ(due.size(), 100u);
  for (size_t i = 0; i < due.size(); ++i) EXPECT_EQ(due[i], 1000 * (i + 1));
}

// With every entry live, nothing may be dropped, however many there are.
TEST(TimerQueueTest, LiveEntriesAreNeverDropped) {
  TimerQueue timers([](const Timer&) { return true; });
  for (uint64_t id = 0; id < 3 * TimerQueue::kSlack; ++id) {
    timers.Push({static_cast<int64_t>(3 * TimerQueue::kSlack - id), id, 0});
  }
  EXPECT_EQ(timers.size(), 3 * TimerQueue::kSlack);
  EXPECT_EQ(timers.top().at_ms, 1);
}

}  // namespace
}  // namespace fairq::server
