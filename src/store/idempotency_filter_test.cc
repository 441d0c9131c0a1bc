#include "store/idempotency_filter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "fairq/v1/records.pb.h"
#include "store/column_families.h"
#include "store/store_test_util.h"

namespace fairq::store {
namespace {

std::string Record(int64_t expires_unix_ms) {
  v1::IdempotencyRecord record;
  record.set_job_id(1);
  record.set_expires_unix_ms(expires_unix_ms);
  return record.SerializeAsString();
}

bool Drops(const IdempotencyFilter& filter, const std::string& value) {
  std::string new_value;
  bool changed = false;
  return filter.Filter(0, "key", value, &new_value, &changed);
}

TEST(IdempotencyFilterTest, DropsOnlyRecordsExpiredBeforeNow) {
  IdempotencyFilter filter(/*now_unix_ms=*/1000);
  EXPECT_TRUE(Drops(filter, Record(-5)));
  EXPECT_TRUE(Drops(filter, Record(999)));
  EXPECT_FALSE(Drops(filter, Record(1000)));
  EXPECT_FALSE(Drops(filter, Record(1001)));
}

TEST(IdempotencyFilterTest, KeepsValuesItCannotParse) {
  IdempotencyFilter filter(/*now_unix_ms=*/INT64_MAX);
  EXPECT_FALSE(Drops(filter, std::string("\xff\xff\xff", 3)));
  EXPECT_FALSE(Drops(filter, std::string("\x0a\x05", 2)));  // truncated
}

TEST(IdempotencyFilterTest, FactoryReadsTheClockPerCompaction) {
  std::atomic<int64_t> now{100};
  IdempotencyFilterFactory factory([&] { return now.load(); });
  rocksdb::CompactionFilter::Context context{};
  auto early = factory.CreateCompactionFilter(context);
  now = 200;
  auto late = factory.CreateCompactionFilter(context);
  std::string new_value;
  bool changed = false;
  EXPECT_FALSE(early->Filter(0, "k", Record(150), &new_value, &changed));
  EXPECT_TRUE(late->Filter(0, "k", Record(150), &new_value, &changed));
}

// The filter as wired into the store's family table: a full compaction of
// the idempotency family drops expired records, keeps live ones, and keeps
// a value it cannot parse. Other families are not filtered.
TEST(IdempotencyFilterTest, CompactionDropsExpiredRecordsAndKeepsLiveOnes) {
  ScopedTempDir dir;
  { ASSERT_NE(OpenStore(dir.Path("db")), nullptr); }
  const std::string expired = EncodeIdempotencyKey(1, "expired");
  const std::string live = EncodeIdempotencyKey(1, "live");
  const std::string garbage = EncodeIdempotencyKey(2, "garbage");
  {
    RawDb raw(dir.Path("db"));
    raw.Put(Family::kIdempotency, expired, Record(2999));
    raw.Put(Family::kIdempotency, live, Record(3000));
    raw.Put(Family::kIdempotency, garbage, "\xff\xff");
    raw.Put(Family::kTenants, "old", Record(1));
  }
  {
    RawDb raw(dir.Path("db"), NewStoreResources([] { return int64_t{3000}; }));
    ASSERT_TRUE(raw.ok());
    rocksdb::CompactRangeOptions options;
    options.bottommost_level_compaction =
        rocksdb::BottommostLevelCompaction::kForce;
    for (Family family : {Family::kIdempotency, Family::kTenants}) {
      ASSERT_TRUE(
          raw.db()
              ->CompactRange(options, raw.handle(family), nullptr, nullptr)
              .ok());
    }
    EXPECT_FALSE(raw.Get(Family::kIdempotency, expired).has_value());
    EXPECT_TRUE(raw.Get(Family::kIdempotency, live).has_value());
    EXPECT_EQ(raw.Get(Family::kIdempotency, garbage), "\xff\xff");
    EXPECT_TRUE(raw.Get(Family::kTenants, "old").has_value());
  }
}

}  // namespace
}  // namespace fairq::store
