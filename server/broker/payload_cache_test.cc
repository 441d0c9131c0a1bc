#include "server/broker/payload_cache.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <string>

namespace fairq::server {
namespace {

std::unique_ptr<v1::JobSpec> Spec(const std::string& payload) {
  auto spec = std::make_unique<v1::JobSpec>();
  spec->set_tenant("a");
  spec->set_payload(payload);
  return spec;
}

TEST(PayloadCacheTest, TakeReturnsTheSpecOnce) {
  PayloadCache cache(1 << 20);
  cache.Put(7, Spec("seven"), 1'764'000'000'000);
  std::optional<PayloadCache::Entry> entry = cache.Take(7);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->spec->payload(), "seven");
  EXPECT_EQ(entry->enqueued_ms, 1'764'000'000'000);
  EXPECT_FALSE(cache.Take(7));
  EXPECT_EQ(cache.bytes(), 0u);
}

// A spec read ahead stays as it was stored, and comes back so.
TEST(PayloadCacheTest, TakeReturnsAnEncodedSpecAsItWasPut) {
  PayloadCache cache(1 << 20);
  const std::string encoded = Spec("seven")->SerializeAsString();
  cache.PutEncoded(7, encoded, 1'764'000'000'000);
  cache.Put(8, Spec("eight"), 0);
  std::optional<PayloadCache::Entry> entry = cache.Take(7);
  ASSERT_TRUE(entry);
  EXPECT_TRUE(entry->read_ahead());
  EXPECT_EQ(entry->spec, nullptr);
  EXPECT_EQ(entry->encoded_spec, encoded);
  EXPECT_EQ(entry->enqueued_ms, 1'764'000'000'000);
  entry = cache.Take(8);
  ASSERT_TRUE(entry);
  EXPECT_FALSE(entry->read_ahead());
  EXPECT_TRUE(entry->encoded_spec.empty());
  EXPECT_EQ(cache.bytes(), 0u);
}

// A replaced entry's bytes are freed before room is made for the new one.
TEST(PayloadCacheTest, PuttingAnIdAgainReplacesItsEntry) {
  const std::string payload(1000, 'x');
  PayloadCache scratch(1 << 20);
  scratch.Put(1, Spec(payload), 0);
  const size_t one = scratch.bytes();
  PayloadCache cache(2 * one + one / 2);  // room for two
  cache.Put(1, Spec(payload), 0);
  cache.Put(2, Spec(payload), 0);
  cache.Put(2, Spec(payload), 5);
  EXPECT_EQ(cache.bytes(), 2 * one);
  EXPECT_TRUE(cache.Contains(1));
  std::optional<PayloadCache::Entry> entry = cache.Take(2);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->enqueued_ms, 5);
  EXPECT_TRUE(cache.Take(1));
  EXPECT_EQ(cache.bytes(), 0u);
}

TEST(PayloadCacheTest, TheOldestEntriesGoFirstAndTheBudgetHolds) {
  const std::string payload(1000, 'x');
  PayloadCache cache(10'000);
  for (uint64_t id = 1; id <= 100; ++id) {
    cache.Put(id, Spec(payload), 0);
    EXPECT_LE(cache.bytes(), 10'000u);
  }
  EXPECT_FALSE(cache.Take(1));
  EXPECT_TRUE(cache.Take(100));
  EXPECT_TRUE(cache.Take(99));
}

// Put says how many of the entries it pushed out the read-ahead had put:
// specs read for nothing (fairq_read_ahead_unused_total).
TEST(PayloadCacheTest, PutCountsTheReadAheadEntriesItPushesOut) {
  const std::string payload(1000, 'x');
  PayloadCache cache(10'000);
  size_t pushed_out = 0;
  for (uint64_t id = 1; id <= 100; ++id) {
    pushed_out += id <= 50 ? cache.PutEncoded(id, payload, 0)
                           : cache.Put(id, Spec(payload), 0);
  }
  EXPECT_EQ(pushed_out, 50u);  // the first 50, all read ahead
  EXPECT_TRUE(cache.Take(100));
  // Twice the room Take freed: pushes out 91 or so, put at enqueue.
  EXPECT_EQ(cache.Put(101, Spec(payload + payload), 0), 0u);
}

TEST(PayloadCacheTest, ASpecLargerThanTheBudgetIsNotKept) {
  PayloadCache cache(100);
  cache.Put(1, Spec(std::string(1000, 'x')), 0);
  EXPECT_FALSE(cache.Take(1));
  EXPECT_EQ(cache.bytes(), 0u);
}

// Labels take memory the encoded size undercounts (a map node and two
// strings each), so a spec with many of them must use more of the budget.
TEST(PayloadCacheTest, LabelsCountTowardsTheBudget) {
  std::unique_ptr<v1::JobSpec> labeled = Spec("p");
  for (int i = 0; i < 20; ++i) {
    (*labeled->mutable_labels())["k" + std::to_string(i)] = "v";
  }
  PayloadCache with_plain(1 << 20);
  with_plain.Put(1, Spec("p"), 0);
  PayloadCache with_labels(1 << 20);
  with_labels.Put(1, std::move(labeled), 0);
  EXPECT_GE(with_labels.bytes(), with_plain.bytes() + 20 * 64);
}

// The budget is only as good as the estimate: it must stay near the memory
// an entry really holds (the spec's SpaceUsedLong, plus the map's key, the
// pointer to the spec, the empty string for an encoded spec, the entry's
// time and cost, and the order queue's id) for the shapes jobs have.
// SpaceUsedLong is protobuf's own count and may change with its version: a
// failure after an upgrade means Cost needs re-tuning, not that it broke.
TEST(PayloadCacheTest, CostIsWithinFifteenPercentOfTheMemoryUsed) {
  for (size_t payload : {10, 100, 1000, 10'000, 100'000}) {
    for (int labels : {0, 3}) {
      std::unique_ptr<v1::JobSpec> spec = Spec(std::string(payload, 'x'));
      spec->set_pool("gpu");
      for (int i = 0; i < labels; ++i) {
        (*spec->mutable_labels())["key" + std::to_string(i)] = "value";
      }
      const size_t used =
          spec->SpaceUsedLong() + 5 * sizeof(uint64_t) + sizeof(std::string);
      PayloadCache cache(1 << 20);
      cache.Put(1, std::move(spec), 0);
      SCOPED_TRACE("payload " + std::to_string(payload) + " labels " +
                   std::to_string(labels) + " cost " +
                   std::to_string(cache.bytes()) + " used " +
                   std::to_string(used));
      EXPECT_GE(cache.bytes() * 100, used * 85);
      EXPECT_LE(cache.bytes() * 100, used * 115);
    }
  }
}

// The same for a spec read ahead, kept as one string: its heap block (as
// the allocator sizes it), the string itself and the same 40 bytes. (A
// spec under 16 bytes lives inside the string and is overcounted by its
// size.)
TEST(PayloadCacheTest, EncodedCostIsWithinFifteenPercentOfTheMemoryUsed) {
  for (size_t payload : {100, 1000, 10'000, 100'000}) {
    std::string encoded = Spec(std::string(payload, 'x'))->SerializeAsString();
    const size_t used = malloc_usable_size(encoded.data()) +
                        sizeof(std::string) + 5 * sizeof(uint64_t);
    PayloadCache cache(1 << 20);
    cache.PutEncoded(1, std::move(encoded), 0);
    SCOPED_TRACE("payload " + std::to_string(payload) + " cost " +
                 std::to_string(cache.bytes()) + " used " +
                 std::to_string(used));
    EXPECT_GE(cache.bytes() * 100, used * 85);
    EXPECT_LE(cache.bytes() * 100, used * 115);
  }
}

// Entries taken out of order (one tenant paused, everyone else leased at
// once) must not make the insertion-order queue grow without bound.
TEST(PayloadCacheTest, TakenEntriesDoNotAccumulate) {
  PayloadCache cache(1 << 20);
  cache.Put(1, Spec("stays"), 0);  // never taken
  for (uint64_t id = 2; id < 200'000; ++id) {
    cache.Put(id, Spec("p"), 0);
    ASSERT_TRUE(cache.Take(id));
  }
  EXPECT_LE(cache.order_size(), 2 * 1 + 64 + 1);
  EXPECT_TRUE(cache.Take(1));
}

}  // namespace
}  // namespace fairq::server
