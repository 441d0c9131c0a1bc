// IdempotencyFilter: a RocksDB compaction filter for the idempotency family
// that drops records whose expires_unix_ms is before the time the compaction
// started, so expired keys leave the disk without a sweeper thread.
//
// Thread-safety: RocksDB creates one filter per compaction through the
// factory, so a filter is used by one thread; the factory is shared and
// stateless apart from its clock, which must be safe to call from any thread.
#ifndef FAIRQ_STORE_IDEMPOTENCY_FILTER_H_
#define FAIRQ_STORE_IDEMPOTENCY_FILTER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "rocksdb/compaction_filter.h"

namespace fairq::store {

// Wall-clock milliseconds since the Unix epoch. Injected so tests control it.
using UnixMsClock = std::function<int64_t()>;
int64_t SystemUnixMs();

class IdempotencyFilter : public rocksdb::CompactionFilter {
 public:
  explicit IdempotencyFilter(int64_t now_unix_ms) : now_unix_ms_(now_unix_ms) {}

  // True (drop) only for a parseable IdempotencyRecord that has expired. An
  // unparseable value is kept: dropping data we do not understand would
  // destroy evidence, and the store reports it as corruption when read.
  bool Filter(int level, const rocksdb::Slice& key,
              const rocksdb::Slice& existing_value, std::string* new_value,
              bool* value_changed) const override;
  const char* Name() const override { return "fairq.IdempotencyFilter"; }

 private:
  const int64_t now_unix_ms_;
};

class IdempotencyFilterFactory : public rocksdb::CompactionFilterFactory {
 public:
  explicit IdempotencyFilterFactory(UnixMsClock clock = SystemUnixMs)
      : clock_(std::move(clock)) {}

  // Reads the clock once per compaction: every record in it is judged
  // against the same instant.
  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context& context) override;
  const char* Name() const override { return "fairq.IdempotencyFilterFactory"; }

 private:
  const UnixMsClock clock_;
};

}  // namespace fairq::store

#endif  // FAIRQ_STORE_IDEMPOTENCY_FILTER_H_
