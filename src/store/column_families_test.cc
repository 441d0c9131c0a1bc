#include "store/column_families.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "rocksdb/memtablerep.h"
#include "rocksdb/table.h"

namespace fairq::store {
namespace {

TEST(ColumnFamiliesTest, TableIsInFamilyOrderWithUniqueNames) {
  std::set<std::string_view> names;
  for (size_t i = 0; i < FamilyTable().size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(FamilyTable()[i].family), i);
    EXPECT_TRUE(names.insert(FamilyTable()[i].name).second)
        << FamilyTable()[i].name;
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kFamilyCount));
  // RocksDB requires "default"; it holds meta.
  EXPECT_EQ(FamilyName(Family::kMeta), "default");
}

// The names are persisted: renaming one orphans a released database.
TEST(ColumnFamiliesTest, NamesAreFrozen) {
  EXPECT_EQ(FamilyName(Family::kJobs), "jobs");
  EXPECT_EQ(FamilyName(Family::kReady), "ready");
  EXPECT_EQ(FamilyName(Family::kScheduled), "scheduled");
  EXPECT_EQ(FamilyName(Family::kLeases), "leases");
  EXPECT_EQ(FamilyName(Family::kDead), "dead");
  EXPECT_EQ(FamilyName(Family::kTenants), "tenants");
  EXPECT_EQ(FamilyName(Family::kIdempotency), "idempotency");
}

TEST(ColumnFamiliesTest, EveryFamilySharesOneBlockCacheAndMemoryIsBounded) {
  const StoreResources resources = NewStoreResources();
  const auto descriptors = MakeFamilyDescriptors(resources);
  ASSERT_EQ(descriptors.size(), static_cast<size_t>(kFamilyCount));
  size_t write_buffers = 0;
  for (size_t i = 0; i < descriptors.size(); ++i) {
    EXPECT_EQ(descriptors[i].name, FamilyTable()[i].name);
    const auto* table = descriptors[i]
                            .options.table_factory
                            ->GetOptions<rocksdb::BlockBasedTableOptions>();
    ASSERT_NE(table, nullptr);
    EXPECT_EQ(table->block_cache, resources.block_cache) << descriptors[i].name;
    EXPECT_TRUE(table->cache_index_and_filter_blocks);
    write_buffers += descriptors[i].options.write_buffer_size;
  }
  EXPECT_EQ(resources.block_cache->GetCapacity(), kBlockCacheBytes);
  EXPECT_EQ(resources.write_buffers->buffer_size(), kWriteBufferBudgetBytes);
  // The budget, not the sum of the per-family sizes, is what binds.
  EXPECT_GT(write_buffers, kWriteBufferBudgetBytes);
  const rocksdb::DBOptions db = MakeDBOptions(resources, nullptr);
  EXPECT_EQ(db.write_buffer_manager, resources.write_buffers);
  const auto& idempotency =
      descriptors[static_cast<size_t>(Family::kIdempotency)].options;
  EXPECT_EQ(idempotency.compaction_filter_factory,
            resources.idempotency_filter);
}

// Families read by key keep the skiplist; the queue families, only ever
// scanned, take the cheaper vector memtable.
TEST(ColumnFamiliesTest, OnlyScannedFamiliesUseVectorMemtables) {
  const auto descriptors = MakeFamilyDescriptors(NewStoreResources());
  std::set<std::string> vectors;
  for (const auto& descriptor : descriptors) {
    if (std::string(descriptor.options.memtable_factory->Name()) ==
        rocksdb::VectorRepFactory::kClassName()) {
      vectors.insert(descriptor.name);
    }
  }
  EXPECT_EQ(vectors,
            (std::set<std::string>{"ready", "scheduled", "leases", "done"}));
  EXPECT_FALSE(MakeDBOptions(NewStoreResources(), nullptr)
                   .allow_concurrent_memtable_write);
}

}  // namespace
}  // namespace fairq::store
