#include "store/key_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace fairq::store {
namespace {

// The logical order of the ready family: tenant, pool, priority descending,
// then arrival.
bool ReadyLess(const ReadyKey& a, const ReadyKey& b) {
  return std::tuple(a.tenant_id, a.pool_id, -int64_t{a.priority}, a.seq) <
         std::tuple(b.tenant_id, b.pool_id, -int64_t{b.priority}, b.seq);
}

TEST(KeyCodecTest, JobIdRoundTripsAndSortsNumerically) {
  const std::vector<uint64_t> ids = {
      0, 1, 255, 256, 65535, 1ull << 32, UINT64_MAX - 1, UINT64_MAX};
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(DecodeJobId(EncodeJobId(ids[i])), ids[i]);
    EXPECT_EQ(EncodeJobId(ids[i]).size(), 8u);
    if (i > 0) {
      EXPECT_LT(EncodeJobId(ids[i - 1]), EncodeJobId(ids[i]));
    }
  }
}

TEST(KeyCodecTest, ReadyKeyPrioritiesSortHighestFirst) {
  std::vector<int32_t> priorities = {INT32_MIN, INT32_MIN + 1, -1,       0,
                                     1,         INT32_MAX - 1, INT32_MAX};
  for (int32_t p = -1000; p <= 1000; ++p) priorities.push_back(p);
  std::sort(priorities.begin(), priorities.end());
  std::string previous;
  // Walk from the highest priority down: each key must sort after the last.
  for (auto it = priorities.rbegin(); it != priorities.rend(); ++it) {
    const ReadyKey key{7, 3, *it, 42};
    const std::string encoded = EncodeReadyKey(key);
    ASSERT_EQ(encoded.size(), 20u);
    EXPECT_EQ(DecodeReadyKey(encoded), key) << "priority " << *it;
    if (it != priorities.rbegin() && *it != *(it - 1)) {
      EXPECT_LT(previous, encoded) << "priority " << *it;
    }
    previous = encoded;
  }
}

TEST(KeyCodecTest, ReadyKeySeqBreaksTiesInArrivalOrder) {
  const std::vector<uint64_t> seqs = {0, 1, 2, 1000, 1ull << 40, UINT64_MAX};
  for (size_t i = 1; i < seqs.size(); ++i) {
    EXPECT_LT(EncodeReadyKey({1, 1, 5, seqs[i - 1]}),
              EncodeReadyKey({1, 1, 5, seqs[i]}));
  }
  // Priority outranks arrival.
  EXPECT_LT(EncodeReadyKey({1, 1, 6, UINT64_MAX}),
            EncodeReadyKey({1, 1, 5, 0}));
}

TEST(KeyCodecTest, ReadyKeyRandomRoundTripsKeepLogicalOrder) {
  std::mt19937_64 rng(20240607);
  auto small = [&rng] { return static_cast<uint32_t>(rng() % 4); };
  std::vector<ReadyKey> keys;
  for (int i = 0; i < 5000; ++i) {
    ReadyKey key{small(), small(), static_cast<int32_t>(rng()), rng() % 8};
    if (i % 3 == 0) key.priority = static_cast<int32_t>(rng() % 5) - 2;
    keys.push_back(key);
    ASSERT_EQ(DecodeReadyKey(EncodeReadyKey(key)), key);
  }
  std::vector<ReadyKey> by_bytes = keys;
  std::sort(by_bytes.begin(), by_bytes.end(),
            [](const ReadyKey& a, const ReadyKey& b) {
              return EncodeReadyKey(a) < EncodeReadyKey(b);
            });
  std::vector<ReadyKey> by_logic = keys;
  std::sort(by_logic.begin(), by_logic.end(), ReadyLess);
  EXPECT_EQ(by_bytes, by_logic);
}

TEST(KeyCodecTest, ReadyRangeBoundsExactlyOneTenantAndPool) {
  struct Case {
    uint32_t tenant, pool;
  };
  const std::vector<Case> cases = {{0, 0},
                                   {5, 7},
                                   {5, UINT32_MAX},
                                   {UINT32_MAX, 0},
                                   {UINT32_MAX, UINT32_MAX}};
  const std::vector<uint32_t> ids = {
      0, 1, 4, 5, 6, 7, 8, UINT32_MAX - 1, UINT32_MAX};
  for (const Case& c : cases) {
    const std::string begin = ReadyRangeBegin(c.tenant, c.pool);
    const std::string end = ReadyRangeEnd(c.tenant, c.pool);
    for (uint32_t tenant : ids) {
      for (uint32_t pool : ids) {
        for (int32_t priority : {INT32_MIN, 0, INT32_MAX}) {
          for (uint64_t seq : {uint64_t{0}, UINT64_MAX}) {
            const std::string key =
                EncodeReadyKey({tenant, pool, priority, seq});
            const bool inside = begin <= key && key < end;
            EXPECT_EQ(inside, tenant == c.tenant && pool == c.pool)
                << "range " << c.tenant << "/" << c.pool << " key " << tenant
                << "/" << pool;
          }
        }
      }
    }
  }
}

TEST(KeyCodecTest, ScheduledKeysSortByDueTimeThenJob) {
  const std::vector<int64_t> dues = {INT64_MIN, INT64_MIN + 1, -86400000, -1, 0,
                                     1,         1700000000000, INT64_MAX};
  std::vector<ScheduledKey> keys;
  for (int64_t due : dues) {
    for (uint64_t job : {uint64_t{0}, uint64_t{9}, UINT64_MAX}) {
      keys.push_back({due, job});
    }
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string encoded = EncodeScheduledKey(keys[i]);
    ASSERT_EQ(encoded.size(), 16u);
    EXPECT_EQ(DecodeScheduledKey(encoded), keys[i]);
    if (i > 0) {
      EXPECT_LT(EncodeScheduledKey(keys[i - 1]), encoded);
    }
  }
}

TEST(KeyCodecTest, ScheduledKeyRandomOrderMatchesSignedOrder) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 5000; ++i) {
    const ScheduledKey a{static_cast<int64_t>(rng()), rng() % 3};
    const ScheduledKey b{static_cast<int64_t>(rng()), rng() % 3};
    ASSERT_EQ(DecodeScheduledKey(EncodeScheduledKey(a)), a);
    const bool logical = std::tuple(a.due_unix_ms, a.job_id) <
                         std::tuple(b.due_unix_ms, b.job_id);
    EXPECT_EQ(EncodeScheduledKey(a) < EncodeScheduledKey(b), logical);
  }
}

TEST(KeyCodecTest, IdempotencyKeyRoundTripsArbitraryBytes) {
  const std::string raw("a\0b\xff", 4);
  const std::string encoded = EncodeIdempotencyKey(0x01020304, raw);
  EXPECT_EQ(encoded.substr(0, 4), std::string("\x01\x02\x03\x04"));
  auto decoded = DecodeIdempotencyKey(encoded);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->first, 0x01020304u);
  EXPECT_EQ(decoded->second, raw);
  auto empty = DecodeIdempotencyKey(EncodeIdempotencyKey(9, ""));
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->first, 9u);
  EXPECT_EQ(empty->second, "");
  // One tenant's keys are contiguous: a longer key of tenant 1 still sorts
  // before any key of tenant 2.
  EXPECT_LT(EncodeIdempotencyKey(1, std::string(300, '\xff')),
            EncodeIdempotencyKey(2, ""));
}

TEST(KeyCodecTest, DecodersRejectWrongLengths) {
  for (size_t n : {0, 1, 7, 9, 15, 16, 19, 21, 64}) {
    const std::string bytes(n, '\x5a');
    EXPECT_EQ(DecodeJobId(bytes).has_value(), n == 8) << n;
    EXPECT_EQ(DecodeReadyKey(bytes).has_value(), n == 20) << n;
    EXPECT_EQ(DecodeScheduledKey(bytes).has_value(), n == 16) << n;
  }
  for (size_t n : {0, 1, 2, 3}) {
    EXPECT_FALSE(DecodeIdempotencyKey(std::string(n, 'x')).has_value()) << n;
  }
}

}  // namespace
}  // namespace fairq::store
