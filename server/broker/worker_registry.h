// WorkerRegistry: the workers seen recently and their slots, which make a
// pool's live capacity (share-based caps and floors are taken of it). A
// worker counts while it called Lease within the liveness window.
//
// Not thread-safe; owned by the Broker on the dispatcher thread.
#ifndef FAIRQ_SERVER_BROKER_WORKER_REGISTRY_H_
#define FAIRQ_SERVER_BROKER_WORKER_REGISTRY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace fairq::server {

class WorkerRegistry {
 public:
  explicit WorkerRegistry(int64_t liveness_ms) : liveness_ms_(liveness_ms) {}

  // Records a Lease call. Returns the pools whose capacity changed.
  std::vector<uint32_t> Seen(const std::string& worker_id, uint32_t slots,
                             const std::vector<uint32_t>& pools,
                             int64_t now_ms);
  // Forgets workers not seen within the window. Returns changed pools.
  std::vector<uint32_t> Expire(int64_t now_ms);
  std::optional<int64_t> NextExpiry() const;

  uint32_t Capacity(uint32_t pool) const;
  // Live workers serving each of pools 0..pools-1. O(workers): for scrapes.
  std::vector<uint32_t> WorkersPerPool(size_t pools) const;

 private:
  struct Worker {
    uint32_t slots = 0;
    std::vector<uint32_t> pools;
    int64_t last_seen_ms = 0;
  };
  void Count(const Worker& worker, int sign);

  const int64_t liveness_ms_;
  absl::flat_hash_map<std::string, Worker> workers_;
  absl::flat_hash_map<uint32_t, uint64_t> capacity_;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_WORKER_REGISTRY_H_
