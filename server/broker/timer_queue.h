// TimerQueue: the due times of leases or of scheduled jobs, earliest first,
// for the Broker's timers. An entry stays when its job moves on (finding it
// on each completion would cost more than skipping it when it comes due),
// so without more a busy broker would keep one for every lease granted in
// the last lease duration: 30 s at 100k leases a second is 3M entries,
// 72 MB, and each push, pop and growth of the heap works through them. So
// once it has grown to twice the entries that were live at its last
// purge, plus kSlack, Push drops the stale ones (those `is_live` refuses)
// in one pass: amortised O(1) a push, and about twice the live timers kept.
//
// Not thread-safe; owned by the Broker on the dispatcher thread.
#ifndef FAIRQ_SERVER_BROKER_TIMER_QUEUE_H_
#define FAIRQ_SERVER_BROKER_TIMER_QUEUE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace fairq::server {

class TimerQueue {
 public:
  struct Timer {
    int64_t at_ms;
    uint64_t job_id;
    uint64_t stamp;  // the lease token or the scheduled due time it was for
    bool operator>(const Timer& o) const { return at_ms > o.at_ms; }
  };
  // Whether the entry still stands for its job's lease or schedule. A
  // purged entry never comes back, so it may refuse only entries that need
  // not fire: their job moved on, and a timer it needs later is pushed anew.
  using IsLive = std::function<bool(const Timer&)>;

  // Entries kept beyond twice the live ones before a purge, so that a few
  // live timers do not purge at every other push.
  static constexpr size_t kSlack = 4096;

  explicit TimerQueue(IsLive is_live) : is_live_(std::move(is_live)) {}

  void Push(Timer timer) {
    if (heap_.size() >= NextPurgeSize()) PurgeStale();
    heap_.push_back(timer);
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  size_t capacity() const { return heap_.capacity(); }  // entries allocated
  const Timer& top() const { return heap_.front(); }
  void pop() {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    heap_.pop_back();
  }

 private:
  size_t NextPurgeSize() const { return 2 * live_at_purge_ + kSlack; }
  void PurgeStale() {
    std::erase_if(heap_, [this](const Timer& t) { return !is_live_(t); });
    std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
    live_at_purge_ = heap_.size();
    // After a burst of long leases the array would keep its peak size. It
    // is cut to the size the next purge comes at, not below: a smaller one
    // would only grow again, purge after purge.
    if (heap_.capacity() > 4 * NextPurgeSize()) {
      std::vector<Timer> smaller;
      smaller.reserve(NextPurgeSize());
      smaller.assign(heap_.begin(), heap_.end());
      heap_.swap(smaller);
    }
  }

  const IsLive is_live_;
  std::vector<Timer> heap_;  // a min-heap on at_ms
  size_t live_at_purge_ = 0;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_TIMER_QUEUE_H_
