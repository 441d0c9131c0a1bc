#include "server/broker/idempotency_index.h"

namespace fairq::server {

std::optional<uint64_t> IdempotencyIndex::Find(uint32_t tenant,
                                               const std::string& key,
                                               int64_t now_ms) const {
  auto it = entries_.find(Key{tenant, key});
  if (it == entries_.end() || it->second.expires_ms <= now_ms) {
    return std::nullopt;
  }
  return it->second.job_id;
}

void IdempotencyIndex::Insert(uint32_t tenant, const std::string& key,
                              uint64_t job_id, int64_t expires_ms) {
  entries_.insert_or_assign(Key{tenant, key}, Entry{job_id, expires_ms});
  expiry_.emplace(expires_ms, Key{tenant, key});
}

void IdempotencyIndex::Expire(int64_t now_ms) {
  while (!expiry_.empty() && expiry_.top().first <= now_ms) {
    auto it = entries_.find(expiry_.top().second);
    // A key re-inserted later carries a later expiry: keep it.
    if (it != entries_.end() && it->second.expires_ms <= now_ms) {
      entries_.erase(it);
    }
    expiry_.pop();
  }
}

}  // namespace fairq::server
