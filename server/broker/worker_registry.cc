#include "server/broker/worker_registry.h"

#include <algorithm>
#include <limits>

namespace fairq::server {

void WorkerRegistry::Count(const Worker& worker, int sign) {
  for (uint32_t pool : worker.pools) {
    capacity_[pool] += static_cast<uint64_t>(sign) * worker.slots;
  }
}

std::vector<uint32_t> WorkerRegistry::Seen(const std::string& worker_id,
                                           uint32_t slots,
                                           const std::vector<uint32_t>& pools,
                                           int64_t until_ms) {
  Worker& worker = workers_[worker_id];
  std::vector<uint32_t> changed;
  if (worker.slots != slots || worker.pools != pools) {
    changed = worker.pools;
    Count(worker, -1);
    worker.slots = slots;
    worker.pools = pools;
    Count(worker, +1);
    changed.insert(changed.end(), pools.begin(), pools.end());
  }
  worker.last_seen_ms = std::max(worker.last_seen_ms, until_ms);
  return changed;
}

void WorkerRegistry::LeaseStarted(uint64_t job_id,
                                  const std::string& worker_id) {
  if (worker_id.empty()) return;
  Worker& worker = workers_[worker_id];
  ++worker.leases;
  holders_[job_id] = &worker;
}

void WorkerRegistry::LeaseEnded(uint64_t job_id, int64_t now_ms) {
  auto it = holders_.find(job_id);
  if (it == holders_.end()) return;
  Worker& worker = *it->second;
  holders_.erase(it);
  if (--worker.leases == 0) {
    worker.last_seen_ms = std::max(worker.last_seen_ms, now_ms);
  }
}

std::vector<uint32_t> WorkerRegistry::Expire(int64_t now_ms) {
  std::vector<uint32_t> changed;
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (it->second.leases > 0 ||
        it->second.last_seen_ms + liveness_ms_ > now_ms) {
      ++it;
      continue;
    }
    Count(it->second, -1);
    changed.insert(changed.end(), it->second.pools.begin(),
                   it->second.pools.end());
    workers_.erase(it++);
  }
  return changed;
}

std::optional<int64_t> WorkerRegistry::NextExpiry() const {
  std::optional<int64_t> next;
  for (const auto& [id, worker] : workers_) {
    if (worker.leases > 0) continue;
    int64_t at = worker.last_seen_ms + liveness_ms_;
    if (!next || at < *next) next = at;
  }
  return next;
}

uint32_t WorkerRegistry::Capacity(uint32_t pool) const {
  auto it = capacity_.find(pool);
  if (it == capacity_.end()) return 0;
  return static_cast<uint32_t>(
      std::min<uint64_t>(it->second, std::numeric_limits<uint32_t>::max()));
}

std::vector<uint32_t> WorkerRegistry::WorkersPerPool(size_t pools) const {
  std::vector<uint32_t> counts(pools, 0);
  for (const auto& [id, worker] : workers_) {
    for (uint32_t pool : worker.pools) {
      if (pool < pools) ++counts[pool];
    }
  }
  return counts;
}

}  // namespace fairq::server
