// WorkerRegistry: the live workers and their slots, which make a pool's
// live capacity (share-based caps and floors are taken of it). A worker
// counts while it holds a lease, and until the liveness window has passed
// since the end of its last Lease call's wait or of its last lease: a
// worker whose every slot runs a long job calls Lease no more, but is no
// less there.
//
// Not thread-safe; owned by the Broker on the dispatcher thread.
#ifndef FAIRQ_SERVER_BROKER_WORKER_REGISTRY_H_
#define FAIRQ_SERVER_BROKER_WORKER_REGISTRY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"

namespace fairq::server {

class WorkerRegistry {
 public:
  explicit WorkerRegistry(int64_t liveness_ms) : liveness_ms_(liveness_ms) {}

  // Records a Lease call, which counts as a sign of life until its wait
  // ends (`until_ms`): a worker waiting for work is there. Returns the pools
  // whose capacity changed.
  std::vector<uint32_t> Seen(const std::string& worker_id, uint32_t slots,
                             const std::vector<uint32_t>& pools,
                             int64_t until_ms);
  // Job `job_id` is leased to `worker_id` (empty: a lease adopted from a
  // report, whose worker is not known; not counted). A worker known only
  // from its leases (restored after a restart) adds no slots until its
  // first Lease call.
  void LeaseStarted(uint64_t job_id, const std::string& worker_id);
  // The lease of `job_id` ended, however: completed, failed, lapsed or
  // given back. A no-op for a lease not counted.
  void LeaseEnded(uint64_t job_id, int64_t now_ms);
  // Forgets workers past the window that hold no lease. Returns changed
  // pools.
  std::vector<uint32_t> Expire(int64_t now_ms);
  std::optional<int64_t> NextExpiry() const;

  uint32_t Capacity(uint32_t pool) const;
  // Live workers serving each of pools 0..pools-1. O(workers): for scrapes.
  std::vector<uint32_t> WorkersPerPool(size_t pools) const;
  // Leases counted against their workers (tests check none is left over).
  size_t leases() const { return holders_.size(); }

 private:
  struct Worker {
    uint32_t slots = 0;
    std::vector<uint32_t> pools;
    int64_t last_seen_ms = 0;
    uint32_t leases = 0;  // held now: the worker does not expire
  };
  void Count(const Worker& worker, int sign);

  const int64_t liveness_ms_;
  // Nodes, so that holders_ can point at them: a worker holding a lease is
  // never erased.
  absl::node_hash_map<std::string, Worker> workers_;
  absl::flat_hash_map<uint64_t, Worker*> holders_;  // by leased job id
  absl::flat_hash_map<uint32_t, uint64_t> capacity_;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_WORKER_REGISTRY_H_
