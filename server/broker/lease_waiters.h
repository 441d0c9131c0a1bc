// LeaseWaiters: Lease calls waiting for work, in arrival order per pool. A
// call that names several pools waits in each; whichever pool has work
// first answers it, and the other entries are dropped lazily.
//
// Not thread-safe; owned by the Broker on the dispatcher thread.
#ifndef FAIRQ_SERVER_BROKER_LEASE_WAITERS_H_
#define FAIRQ_SERVER_BROKER_LEASE_WAITERS_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

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

  void Add(Waiter waiter);
  // The oldest live waiter for `pool`, or nullptr.
  Waiter* Front(uint32_t pool);
  // Removes and returns a waiter (answered, canceled or expired).
  std::optional<Waiter> Take(WaiterId id);
  // Waiters whose wait ran out by `now_ms`.
  std::vector<WaiterId> Expired(int64_t now_ms) const;
  std::optional<int64_t> NextDeadline() const;
  std::vector<WaiterId> All() const;
  bool empty() const { return waiters_.empty(); }

 private:
  absl::flat_hash_map<WaiterId, Waiter> waiters_;
  absl::flat_hash_map<uint32_t, std::deque<WaiterId>> by_pool_;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_LEASE_WAITERS_H_
