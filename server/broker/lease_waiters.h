// LeaseWaiters: Lease calls waiting for work, in arrival order per pool. A
// call that names several pools waits in each; whichever pool has work
// first answers it, and taking it removes it from all of them. Each
// dispatcher turn asks for the expired waits and the next deadline, so
// those are kept in deadline order: O(log n) per waiter, not a scan of
// every waiting worker per turn.
//
// Not thread-safe; owned by the Broker on the dispatcher thread.
#ifndef FAIRQ_SERVER_BROKER_LEASE_WAITERS_H_
#define FAIRQ_SERVER_BROKER_LEASE_WAITERS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "server/broker/commands.h"

namespace fairq::server {

class LeaseWaiters {
 public:
  struct Waiter {
    WaiterId id = 0;
    std::string worker_id;
    std::vector<uint32_t> pools;
    uint32_t max_jobs = 1;
    int64_t deadline_ms = 0;
    v1::LeaseResponse* response = nullptr;
    Done done;
  };

  // REQUIRES: no waiting call has waiter.id (ids come from
  // Dispatcher::NewWaiterId, a counter).
  void Add(Waiter waiter);
  // The oldest waiter for `pool`, or nullptr. Const: it stays filed under
  // its pools and deadline until taken (its response may be filled).
  const Waiter* Front(uint32_t pool) const;
  // Removes and returns a waiter (answered, canceled or expired).
  std::optional<Waiter> Take(WaiterId id);
  // Waiters whose wait ran out by `now_ms`.
  std::vector<WaiterId> Expired(int64_t now_ms) const;
  std::optional<int64_t> NextDeadline() const;
  std::vector<WaiterId> All() const;
  bool empty() const { return waiters_.empty(); }
  // Waiters queued for `pool` (for tests).
  size_t waiting_in(uint32_t pool) const;

 private:
  struct Entry {
    Waiter waiter;
    uint64_t arrival;  // Add's order, which each pool serves oldest first
  };

  absl::flat_hash_map<WaiterId, Entry> waiters_;
  // Per pool, by arrival. Take removes a waiter from every pool it named,
  // so a pool that never has work keeps nothing of calls answered through
  // another.
  absl::flat_hash_map<uint32_t, absl::btree_map<uint64_t, WaiterId>> by_pool_;
  absl::btree_set<std::pair<int64_t, WaiterId>> by_deadline_;
  uint64_t next_arrival_ = 0;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_LEASE_WAITERS_H_
