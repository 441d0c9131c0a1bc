// IdempotencyIndex: (tenant, idempotency key) -> job id for keys seen within
// the window, so a producer's retry of an enqueue finds the job it already
// made. Mirrors the store's idempotency family, which is reloaded at start.
//
// Not thread-safe; owned by the Broker on the dispatcher thread.
#ifndef FAIRQ_SERVER_BROKER_IDEMPOTENCY_INDEX_H_
#define FAIRQ_SERVER_BROKER_IDEMPOTENCY_INDEX_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace fairq::server {

class IdempotencyIndex {
 public:
  std::optional<uint64_t> Find(uint32_t tenant, const std::string& key,
                               int64_t now_ms) const;
  void Insert(uint32_t tenant, const std::string& key, uint64_t job_id,
              int64_t expires_ms);
  // Drops expired keys. Keys need not come in expiry order: a restart
  // reloads them in key order, and a reload may change the window.
  void Expire(int64_t now_ms);
  size_t size() const { return entries_.size(); }

 private:
  using Key = std::pair<uint32_t, std::string>;
  struct Entry {
    uint64_t job_id;
    int64_t expires_ms;
  };
  using Expiry = std::pair<int64_t, Key>;
  absl::flat_hash_map<Key, Entry> entries_;
  // Soonest first.
  std::priority_queue<Expiry, std::vector<Expiry>, std::greater<Expiry>>
      expiry_;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_IDEMPOTENCY_INDEX_H_
