// The column-family table: one row per Family with its RocksDB name and the
// function that tunes its options. The same table drives DB::Open (names and
// options, in enum order) and lookup (Family -> handle index), so the two
// cannot drift apart. Never rename or reorder a released row.
//
// Thread-safety: the table is immutable; the builders are pure functions
// that may run on any thread.
#ifndef FAIRQ_STORE_COLUMN_FAMILIES_H_
#define FAIRQ_STORE_COLUMN_FAMILIES_H_

#include <array>
#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "rocksdb/cache.h"
#include "rocksdb/compaction_filter.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/write_buffer_manager.h"
#include "store/idempotency_filter.h"
#include "store/key_codec.h"

namespace fairq::store {

// Memory shared by every family; docs/storage.md "Memory budget" explains
// the numbers. Blocks, index and filter blocks all live in the cache.
inline constexpr size_t kBlockCacheBytes = size_t{64} << 20;
// Flushes start once all memtables together pass this.
inline constexpr size_t kWriteBufferBudgetBytes = size_t{64} << 20;
// Old WAL files are released by flushing the families that pin them.
inline constexpr uint64_t kMaxTotalWalBytes = uint64_t{128} << 20;

// Objects the per-family options share. RocksDB holds them by shared_ptr
// once the DB is open, so nobody else has to keep them alive.
struct StoreResources {
  std::shared_ptr<rocksdb::Cache> block_cache;
  std::shared_ptr<rocksdb::WriteBufferManager> write_buffers;
  std::shared_ptr<rocksdb::CompactionFilterFactory> idempotency_filter;
};
StoreResources NewStoreResources(UnixMsClock clock = SystemUnixMs);

struct FamilySpec {
  Family family;
  std::string_view name;
  void (*tune)(const StoreResources& resources,
               rocksdb::ColumnFamilyOptions* options);
};

// Indexed by Family: FamilyTable()[i].family == Family(i).
const std::array<FamilySpec, kFamilyCount>& FamilyTable();
std::string_view FamilyName(Family family);

// DB-wide options; env may be null (RocksDB's default).
rocksdb::DBOptions MakeDBOptions(const StoreResources& resources,
                                 rocksdb::Env* env);
// One descriptor per family, in Family order.
std::vector<rocksdb::ColumnFamilyDescriptor> MakeFamilyDescriptors(
    const StoreResources& resources);

}  // namespace fairq::store

#endif  // FAIRQ_STORE_COLUMN_FAMILIES_H_
