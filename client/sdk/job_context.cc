#include "fairq/client/job_context.h"

namespace fairq::client {

template <typename Pred>
bool JobContext::WaitUntil(std::chrono::milliseconds timeout, Pred raised) {
  // wait_for adds the timeout to the clock in nanoseconds, so
  // milliseconds::max() would overflow into the past and return at once.
  constexpr std::chrono::milliseconds kForever = std::chrono::hours(24 * 36525);
  std::unique_lock<std::mutex> lock(mu_);
  if (timeout >= kForever) {
    signalled_.wait(lock, raised);
    return true;
  }
  return signalled_.wait_for(lock, timeout, raised);
}

bool JobContext::WaitFor(std::chrono::milliseconds timeout) {
  return WaitUntil(timeout, [this] {
    return ShouldYield() || Cancelled() || Stopping();
  });
}

bool JobContext::WaitForCancel(std::chrono::milliseconds timeout) {
  return WaitUntil(timeout, [this] { return Cancelled(); });
}

void JobContext::SetShouldYield(bool yield) { Raise(yield_, yield); }
void JobContext::Cancel() { Raise(cancelled_, true); }
void JobContext::NotifyStopping() { Raise(stopping_, true); }

void JobContext::Raise(std::atomic<bool>& flag, bool value) {
  // Stored under the mutex so that a waiter cannot check the flags, miss
  // this store, and then sleep through the notification.
  {
    std::lock_guard<std::mutex> lock(mu_);
    flag.store(value);
  }
  signalled_.notify_all();
}

}  // namespace fairq::client
