#include "server/broker/lease_waiters.h"

#include <cassert>

namespace fairq::server {

void LeaseWaiters::Add(Waiter waiter) {
  const uint64_t arrival = next_arrival_++;
  const WaiterId id = waiter.id;
  auto [it, added] =
      waiters_.try_emplace(id, Entry{std::move(waiter), arrival});
  assert(added && "waiter ids are unique");
  if (!added) return;
  const Waiter& filed = it->second.waiter;
  for (uint32_t pool : filed.pools) by_pool_[pool].emplace(arrival, id);
  by_deadline_.emplace(filed.deadline_ms, id);
}

const LeaseWaiters::Waiter* LeaseWaiters::Front(uint32_t pool) const {
  auto queue = by_pool_.find(pool);
  if (queue == by_pool_.end() || queue->second.empty()) return nullptr;
  auto it = waiters_.find(queue->second.begin()->second);
  assert(it != waiters_.end() && "a queued id is a waiting call");
  return &it->second.waiter;
}

std::optional<LeaseWaiters::Waiter> LeaseWaiters::Take(WaiterId id) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return std::nullopt;
  Entry entry = std::move(it->second);
  waiters_.erase(it);
  // A pool stays in by_pool_ when its last waiter goes: pools are few and
  // long-lived, and a worker's next call would add it straight back.
  for (uint32_t pool : entry.waiter.pools) {
    auto queue = by_pool_.find(pool);
    if (queue != by_pool_.end()) queue->second.erase(entry.arrival);
  }
  by_deadline_.erase({entry.waiter.deadline_ms, id});
  return std::move(entry.waiter);
}

std::vector<WaiterId> LeaseWaiters::Expired(int64_t now_ms) const {
  std::vector<WaiterId> expired;
  for (auto it = by_deadline_.begin();
       it != by_deadline_.end() && it->first <= now_ms; ++it) {
    expired.push_back(it->second);
  }
  return expired;
}

std::optional<int64_t> LeaseWaiters::NextDeadline() const {
  if (by_deadline_.empty()) return std::nullopt;
  return by_deadline_.begin()->first;
}

std::vector<WaiterId> LeaseWaiters::All() const {
  std::vector<WaiterId> ids;
  ids.reserve(waiters_.size());
  for (const auto& [id, entry] : waiters_) ids.push_back(id);
  return ids;
}

size_t LeaseWaiters::waiting_in(uint32_t pool) const {
  auto queue = by_pool_.find(pool);
  return queue == by_pool_.end() ? 0 : queue->second.size();
}

}  // namespace fairq::server
