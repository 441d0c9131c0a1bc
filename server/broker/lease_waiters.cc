#include "server/broker/lease_waiters.h"

namespace fairq::server {

void LeaseWaiters::Add(Waiter waiter) {
  for (uint32_t pool : waiter.pools) by_pool_[pool].push_back(waiter.id);
  waiters_.emplace(waiter.id, std::move(waiter));
}

LeaseWaiters::Waiter* LeaseWaiters::Front(uint32_t pool) {
  auto it = by_pool_.find(pool);
  if (it == by_pool_.end()) return nullptr;
  std::deque<WaiterId>& queue = it->second;
  while (!queue.empty()) {
    auto waiter = waiters_.find(queue.front());
    if (waiter != waiters_.end()) return &waiter->second;
    queue.pop_front();  // answered through another pool, or canceled
  }
  return nullptr;
}

std::optional<LeaseWaiters::Waiter> LeaseWaiters::Take(WaiterId id) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return std::nullopt;
  Waiter waiter = std::move(it->second);
  waiters_.erase(it);
  return waiter;
}

// Waits are short (at most 30 s) and waiters few (one per worker), so a scan
// is simpler than a second heap kept in step with cancellations.
std::vector<WaiterId> LeaseWaiters::Expired(int64_t now_ms) const {
  std::vector<WaiterId> expired;
  for (const auto& [id, waiter] : waiters_) {
    if (waiter.deadline_ms <= now_ms) expired.push_back(id);
  }
  return expired;
}

std::optional<int64_t> LeaseWaiters::NextDeadline() const {
  std::optional<int64_t> next;
  for (const auto& [id, waiter] : waiters_) {
    if (!next || waiter.deadline_ms < *next) next = waiter.deadline_ms;
  }
  return next;
}

std::vector<WaiterId> LeaseWaiters::All() const {
  std::vector<WaiterId> ids;
  for (const auto& [id, waiter] : waiters_) ids.push_back(id);
  return ids;
}

}  // namespace fairq::server
