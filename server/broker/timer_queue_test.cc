#include "server/broker/timer_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
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
// comes out, earliest first. Due times come shuffled, so that a purge must
// leave a heap, not merely a sorted array.
TEST(TimerQueueTest, StaleEntriesArePurgedAndLiveOnesKeptInOrder) {
  std::vector<int64_t> due_times(100'000);
  std::iota(due_times.begin(), due_times.end(), 1);
  std::shuffle(due_times.begin(), due_times.end(), std::mt19937(7));
  std::unordered_set<uint64_t> live;
  TimerQueue timers([&](const Timer& t) { return live.contains(t.job_id); });
  size_t most = 0;
  for (uint64_t id = 0; id < due_times.size(); ++id) {
    live.insert(id);
    timers.Push({due_times[id], id, 0});
    if (id % 1000 != 0) live.erase(id);  // one in a thousand stays live
    most = std::max(most, timers.size());
  }
  EXPECT_EQ(live.size(), 100u);
  EXPECT_LE(most, 2 * live.size() + TimerQueue::kSlack);
  EXPECT_LT(timers.size(), 2 * live.size() + TimerQueue::kSlack);
  std::vector<int64_t> popped;
  while (!timers.empty()) {
    if (live.contains(timers.top().job_id)) {
      popped.push_back(timers.top().at_ms);
      live.erase(timers.top().job_id);
    }
    timers.pop();
  }
  EXPECT_TRUE(live.empty());
  EXPECT_TRUE(std::is_sorted(popped.begin(), popped.end()));
  EXPECT_EQ(popped.size(), 100u);
}

// After a burst of live entries the array is cut back once they are stale;
// with a few live ones it then keeps one size, purge after purge, rather
// than shrinking and growing again each time.
TEST(TimerQueueTest, TheArrayShrinksAfterABurstAndThenKeepsItsSize) {
  std::unordered_set<uint64_t> live;
  TimerQueue timers([&](const Timer& t) { return live.contains(t.job_id); });
  uint64_t id = 0;
  for (; id < 100'000; ++id) {  // a burst: all live at once
    live.insert(id);
    timers.Push({static_cast<int64_t>(id), id, 0});
  }
  const size_t peak = timers.capacity();
  live = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};  // the rest finished
  // Entries that go stale at once, through about 20 purges: the first
  // cuts the array back, and after that its size must not change.
  std::vector<size_t> sizes;  // the array's size at each change
  for (size_t pushed = 0; pushed < 20 * TimerQueue::kSlack; ++pushed, ++id) {
    const size_t before = timers.capacity();
    timers.Push({static_cast<int64_t>(id), id, 0});
    if (timers.capacity() != before) sizes.push_back(timers.capacity());
  }
  ASSERT_EQ(sizes.size(), 1u);
  EXPECT_LT(sizes[0], peak / 4);
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
