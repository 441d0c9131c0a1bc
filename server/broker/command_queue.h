// CommandQueue: the bounded queue from other threads (store-reading
// handlers, metrics scrapes, reloads) to the dispatcher.
// Full means back-pressure (the RPC gets RESOURCE_EXHAUSTED), never
// unbounded memory. Closing it is how shutdown reaches the dispatcher: no
// flag is polled.
//
// Thread-safe: any thread may Push; one consumer pops.
#ifndef FAIRQ_SERVER_BROKER_COMMAND_QUEUE_H_
#define FAIRQ_SERVER_BROKER_COMMAND_QUEUE_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

namespace fairq::server {

template <class T>
class CommandQueue {
 public:
  enum class PushResult { kOk, kFull, kClosed };

  explicit CommandQueue(size_t capacity) : capacity_(capacity) {}

  // On kFull or kClosed the item is left untouched with the caller.
  PushResult Push(T&& item) {
    {
      std::lock_guard lock(mu_);
      if (closed_) return PushResult::kClosed;
      if (items_.size() >= capacity_) return PushResult::kFull;
      items_.push_back(std::move(item));
    }
    ready_.notify_one();
    return PushResult::kOk;
  }

  // Moves every queued item into *out. Waits until there is one, the queue
  // is closed, or `deadline` passes (nullopt: no deadline). Returns false
  // once the queue is closed and drained.
  bool PopAll(std::optional<std::chrono::steady_clock::time_point> deadline,
              std::vector<T>* out) {
    std::unique_lock lock(mu_);
    auto has_work = [&] { return !items_.empty() || closed_; };
    if (deadline) {
      ready_.wait_until(lock, *deadline, has_work);
    } else {
      ready_.wait(lock, has_work);
    }
    for (T& item : items_) out->push_back(std::move(item));
    items_.clear();
    return !(closed_ && out->empty());
  }

  // Moves every queued item into *out without waiting. Returns false once
  // the queue is closed and drained.
  bool TryPopAll(std::vector<T>* out) {
    std::lock_guard lock(mu_);
    for (T& item : items_) out->push_back(std::move(item));
    items_.clear();
    return !(closed_ && out->empty());
  }

  void Close() {
    {
      std::lock_guard lock(mu_);
      closed_ = true;
    }
    ready_.notify_all();
  }

  size_t size() const {
    std::lock_guard lock(mu_);
    return items_.size();
  }

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable ready_;
  std::deque<T> items_;
  bool closed_ = false;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_COMMAND_QUEUE_H_
