#include "store/idempotency_filter.h"

#include <chrono>

#include "fairq/v1/records.pb.h"

namespace fairq::store {

int64_t SystemUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool IdempotencyFilter::Filter(int /*level*/, const rocksdb::Slice& /*key*/,
                               const rocksdb::Slice& existing_value,
                               std::string* /*new_value*/,
                               bool* /*value_changed*/) const {
  v1::IdempotencyRecord record;
  if (!record.ParseFromArray(existing_value.data(),
                             static_cast<int>(existing_value.size()))) {
    return false;
  }
  // The same rule as Store::ScanIdempotency: expired strictly before now.
  return record.expires_unix_ms() < now_unix_ms_;
}

std::unique_ptr<rocksdb::CompactionFilter>
IdempotencyFilterFactory::CreateCompactionFilter(
    const rocksdb::CompactionFilter::Context& /*context*/) {
  return std::make_unique<IdempotencyFilter>(clock_());
}

}  // namespace fairq::store
